"""From an inventory command's output to the startd's view of a custom resource.

``MACHINE_RESOURCE_INVENTORY_<tag>`` names a command whose output is a ClassAd, one
``Name=value`` per line (admin manual, "MACHINE_RESOURCE_INVENTORY_<name>"):

* ``Detected<tag>`` is a quantity or a comma/space separated list of ids;
* ``Offline<tag>`` lists ids that exist but are not handed to slots;
* each nested ad is the properties of one device, found by its ``id`` attribute or
  else by its own name; a nested ad called ``Common`` (any case) holds properties of
  every device. The properties ads keep everything but ``id``;
* every other attribute is published in the slot ads as printed.

``read_inventory`` does this and ``discovery_arguments`` tells when the command is
condor_gpu_discovery (or ``htcpool gpu_discovery``), which the startd runs itself.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, ClassAdError, parseOne
from htcpool.gpu.errors import InventoryError

#: names under which HTCondor's GPU discovery tool is found
DISCOVERY_PROGRAMS = ("condor_gpu_discovery", "condor_gpu_discovery.exe")


@dataclass(frozen=True, slots=True)
class InventoryReading:
    """What one inventory command said about resource ``tag``."""

    tag: str
    ids: tuple[str, ...] = ()  # usable ids, offline ones left out
    count: int | None = None  # a quantity instead of ids
    offline: tuple[str, ...] = ()
    properties: dict[str, ClassAd] = field(default_factory=dict)
    #: other attributes the command printed, published in every slot ad
    attrs: dict[str, object] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.ids) if self.count is None else self.count


def _words(text: str) -> list[str]:
    return [w for w in text.replace(",", " ").split() if w]


def read_inventory(tag: str, text: str, offline: tuple[str, ...] = ()) -> InventoryReading:
    """Read an inventory command's output (``offline``: ``OFFLINE_MACHINE_RESOURCE_<tag>``,
    used unless the output has its own ``Offline<tag>``)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        ad = parseOne("\n".join(lines) + "\n") if lines else ClassAd()
    except ClassAdError as e:
        raise InventoryError(f"the output for {tag} is not a ClassAd: {e}") from None
    detected_name = next((k for k in ad if k.lower() == f"detected{tag}".lower()), None)
    if detected_name is None:
        raise InventoryError(f"the output for {tag} has no Detected{tag} attribute")
    detected = ad.get(detected_name)
    offline_name = next((k for k in ad if k.lower() == f"offline{tag}".lower()), None)
    if offline_name is not None and isinstance(ad.get(offline_name), str):
        offline = tuple(_words(str(ad.get(offline_name))))
    nested: dict[str, ClassAd] = {}
    for k in ad:
        value = ad.get(k)
        if isinstance(value, ClassAd):
            nested[k] = value
    attrs = {k: ad.get(k) for k in ad if k not in nested and k.lower() != tag.lower()
             and k != offline_name}
    if isinstance(detected, bool) or not isinstance(detected, (int, float, str)):
        raise InventoryError(f"Detected{tag} is neither a quantity nor a list of ids: {detected!r}")
    if not isinstance(detected, str):
        return InventoryReading(tag, count=max(int(detected), 0), attrs=attrs)
    words = _words(detected)
    if len(words) == 1 and words[0].isdigit():
        return InventoryReading(tag, count=int(words[0]), attrs=attrs)
    ids = list(dict.fromkeys(words))
    props: dict[str, ClassAd] = {}
    common = next((v for k, v in nested.items() if k.lower() == "common"), None)
    for name, sub in nested.items():
        if sub is common:
            continue
        found = sub.get("id")
        dev = found if isinstance(found, str) else name
        if dev in ids:
            merged = common.copy() if common is not None else ClassAd()
            merged.update(sub)
            for key in [k for k in merged if k.lower() == "id"]:
                del merged[key]
            props[dev] = merged
    if common is not None:
        for dev in ids:
            props.setdefault(dev, common.copy())
    return InventoryReading(tag, tuple(d for d in ids if d not in offline),
                            offline=tuple(d for d in offline if d in ids),
                            properties={d: props[d] for d in ids if d in props}, attrs=attrs)


def discovery_arguments(command: str) -> list[str] | None:
    """The options of ``command`` when it runs condor_gpu_discovery or ``htcpool gpu_discovery``
    (so the startd can run discovery itself), else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    program = words[0].replace("\\", "/").rsplit("/", 1)[-1]
    if program in DISCOVERY_PROGRAMS:
        return words[1:]
    if program == "htcpool" and len(words) > 1 and words[1] == "gpu_discovery":
        return words[2:]
    return None


__all__ = ["DISCOVERY_PROGRAMS", "InventoryReading", "discovery_arguments", "read_inventory"]
