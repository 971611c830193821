"""Slot layout: how the machine's resources are divided into slots.

``parse_slot_type`` reads one ``SLOT_TYPE_<N>`` value in every documented form:
a bare fraction or percentage (``1/4``, ``25%``), ``auto``/``min``, a list of
``name=value`` items separated by commas, whitespace or (the ``@=`` form) newlines,
resource-name aliases by prefix (``c``, ``cpu``, ``r``, ``m``, ``mem``, ``ram``,
``d``, ``s``, ``v``, ``virt`` …), units (``4G``), and for custom resources a
``: constraint`` choosing which instances (a device index, an id string, or an
expression over each device's property ad, evaluated at the startd's start).

``build_layout`` turns the slot types into slots, exactly in HTCondor's order: type
by type, fixed amounts first, then ``auto`` shares divide what is left. A layout
that does not fit raises ``LayoutError`` naming the slot type and resource (the
startd's ABORT failure mode); a device constraint that does not parse, or that too
few devices meet, raises ``ResourceConstraintError``, after which the startd runs
without that resource (``Startd``). ``with_inventory`` merges what inventory
commands (GPU discovery) reported into the settings and the ``Inventory``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree
from htcpool.classad.values import ERROR, UNDEFINED
from htcpool.gpu import InventoryReading
from htcpool.startd.errors import LayoutError
from htcpool.startd.settings import SlotTypeSettings, StartdSettings


class ResourceConstraintError(LayoutError):
    """A custom resource's ``: constraint`` in ``SLOT_TYPE_<N>`` does not parse or too few
    devices satisfy it. The startd then runs without that resource (the machine still
    appears) and says why in its log."""

    def __init__(self, message: str, resource: str, slot_type: int) -> None:
        super().__init__(message)
        self.resource = resource
        self.slot_type = slot_type


STANDARD = ("cpus", "memory", "disk", "swap")
_ALIASES = (("cpus", ("cpus",)), ("memory", ("ram", "memory")), ("swap", ("swap", "virtualmemory")),
            ("disk", ("disk",)))
_UNITS = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3, "p": 1024**4}


class ShareKind(StrEnum):
    """How a slot type's share of one resource is written (``SLOT_TYPE_<N>``)."""

    AUTO = "auto"  # an equal part of what the other slot types leave
    MIN = "min"  # the least that makes a slot (as for an unnamed resource)
    FRACTION = "fraction"  # a percentage or a fraction of the machine
    ABSOLUTE = "absolute"  # an amount (with a unit for memory and disk)


@dataclass(frozen=True, slots=True)
class Share:
    """How much of one resource a slot asks for."""

    kind: ShareKind
    value: float = 0.0
    constraint: str | None = None


@dataclass(slots=True)
class Resources:
    """Amounts held by one slot (custom resources as counts, with instance ids)."""

    cpus: float = 0.0
    memory: int = 0  # MiB
    disk: int = 0  # KiB
    swap: int = 0  # KiB
    custom: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[str]] = field(default_factory=dict)

    def copy(self) -> Resources:
        return Resources(self.cpus, self.memory, self.disk, self.swap, dict(self.custom),
                         {k: list(v) for k, v in self.ids.items()})


@dataclass(frozen=True, slots=True)
class SlotSpec:
    """One slot the layout creates."""

    slot_id: int
    slot_type: int
    partitionable: bool
    resources: Resources


@dataclass(frozen=True, slots=True)
class Inventory:
    """Custom machine resources: instance ids and, for devices, their property ads."""

    ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)
    properties: Mapping[str, ClassAd] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: StartdSettings,
                      properties: Mapping[str, ClassAd] | None = None) -> Inventory:
        ids = {k: v for k, v in settings.machine_resources.items() if isinstance(v, tuple)}
        counts = {k: v for k, v in settings.machine_resources.items() if isinstance(v, int)}
        return cls(ids, counts, dict(properties or {}))

    def names(self) -> list[str]:
        return [*self.ids, *self.counts]

    def without(self, name: str) -> Inventory:
        """This inventory less resource ``name`` (a machine left without its GPUs)."""
        return Inventory({k: v for k, v in self.ids.items() if k != name},
                         {k: v for k, v in self.counts.items() if k != name},
                         {d: p for d, p in self.properties.items() if d not in self.ids.get(name, ())})

    def total(self, name: str) -> int:
        return len(self.ids[name]) if name in self.ids else self.counts.get(name, 0)


def _resource_key(name: str, custom: list[str]) -> str | None:
    low = name.strip().lower()
    for c in custom:
        if c.lower() == low:
            return c
    if not low:
        return None
    for key, words in _ALIASES:
        if any(w.startswith(low) for w in words):
            return key
    if low.startswith("virt"):
        return "swap"
    return None


def _parse_value(text: str, where: str) -> Share:
    t = text.strip().lower()
    if t in ("auto", "automatic"):
        return Share(ShareKind.AUTO)
    if t in ("min", "minimal"):
        return Share(ShareKind.MIN)
    if t.endswith("%"):
        try:
            pct = float(t[:-1])
        except ValueError:
            raise LayoutError(f"{where}: bad percentage {text!r}") from None
        return Share(ShareKind.FRACTION, pct / 100.0)
    if "/" in t:
        a, _, b = t.partition("/")
        try:
            num, den = float(a), float(b)
        except ValueError:
            raise LayoutError(f"{where}: bad fraction {text!r}") from None
        if den <= 0:
            raise LayoutError(f"{where}: fraction {text!r} has a denominator <= 0")
        return Share(ShareKind.FRACTION, num / den)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgtp]?)b?", t)
    if not m:
        raise LayoutError(f"{where}: cannot read {text!r} as an amount, fraction, percentage or auto")
    return Share(ShareKind.ABSOLUTE, float(m.group(1)), m.group(2) or None)


def _scaled(share: Share, key: str) -> float:
    """An absolute amount in the resource's native unit (memory MiB, disk/swap KiB)."""
    unit = share.constraint  # the unit letter rides in constraint for absolute shares
    if unit is None:
        return share.value
    if key == "memory":
        return share.value * {"k": 1, "m": 1, "g": 1024, "t": 1024**2, "p": 1024**3}[unit]
    if key in ("disk", "swap"):
        return share.value * _UNITS[unit]
    return share.value


def _split_items(text: str) -> list[str]:
    """One item per line (the ``@=`` form); else comma-separated items; else white-space
    separated ones, with blanks around ``=`` allowed (``GPUs = 2``). A single-line item
    with a ``: constraint`` runs to the next comma, so the constraint may hold blanks."""
    if "\n" in text.strip():
        return [x for x in (line.strip() for line in text.splitlines()) if x]
    if "," in text or ":" in text:
        return [x.strip() for x in text.split(",") if x.strip()]
    return re.sub(r"\s*=\s*", "=", text.strip()).split()


def parse_slot_type(text: str, custom: list[str], where: str = "SLOT_TYPE",
                    ignore: Collection[str] = ()) -> tuple[dict[str, Share], Share]:
    """Parse a ``SLOT_TYPE_<N>`` value: per-resource shares and the default share (items for
    the resources in ``ignore``, ones the machine was left without, are skipped)."""
    shares: dict[str, Share] = {}
    ignored = {i.lower() for i in ignore}
    default = Share(ShareKind.AUTO)
    for item in _split_items(text):
        if "=" not in item:
            d = _parse_value(item, where)
            if d.kind is ShareKind.ABSOLUTE:
                raise LayoutError(f"{where}: a bare value must be a fraction, percentage, auto or min, "
                                  f"not the absolute amount {item!r}")
            if d.kind is ShareKind.FRACTION and d.value > 1.0:
                raise LayoutError(f"{where}: {item!r} is more than 100%")
            default = d
            continue
        name, _, rest = item.partition("=")
        if name.strip().lower() in ignored:
            continue
        constraint = None
        if ":" in rest:
            rest, _, constraint = rest.partition(":")
            constraint = constraint.strip()
        share = _parse_value(rest, where)
        key = _resource_key(name, custom)
        if key is None:
            if share.kind is ShareKind.ABSOLUTE and share.value > 0:
                raise LayoutError(f"{where}: unknown resource {name.strip()!r}")
            continue
        if share.kind is ShareKind.ABSOLUTE:
            share = Share(ShareKind.ABSOLUTE, _scaled(share, key), constraint)
        elif constraint is not None:
            share = Share(share.kind, share.value, constraint)
        shares[key] = share
    return shares, default


def _constraint_ok(constraint: str, index: int, dev: str, props: ClassAd | None,
                   context: EvalContext) -> bool:
    c = constraint.strip()
    if c.isdigit():
        return index == int(c)
    expr = ExprTree(c)  # parsed before the layout is built (check_constraints)
    value = expr.evaluate(ClassAd(), None, context)
    if isinstance(value, str):
        return value == dev
    if props is None:
        return False
    v = expr.evaluate(props, None, context)
    return v is True


def _take_ids(free: list[str], count: int, constraint: str | None, inv: Inventory, name: str,
              where: str, context: EvalContext) -> list[str]:
    all_ids = list(inv.ids.get(name, ()))
    chosen: list[str] = []
    for dev in list(free):
        if len(chosen) >= count:
            break
        if constraint is None or _constraint_ok(constraint, all_ids.index(dev), dev, inv.properties.get(dev),
                                                context):
            chosen.append(dev)
    if len(chosen) < count:
        message = f"{where}: only {len(chosen)} of {count} {name} satisfy {constraint or 'the request'}"
        if constraint is None:
            raise LayoutError(message)
        raise ResourceConstraintError(message, name, int(where.rpartition("_")[2] or 0))
    for dev in chosen:
        free.remove(dev)
    return chosen


def _types(settings: StartdSettings) -> list[tuple[SlotTypeSettings, int]]:
    typed = [(t, t.count) for _, t in sorted(settings.slot_types.items()) if t.count > 0]
    if typed:
        return typed
    part = settings.slot_type_0_partitionable
    n = settings.num_slots if settings.num_slots is not None else (1 if part else settings.num_cpus)
    return [(SlotTypeSettings(0, "auto", n, part), n)]


def _divide_auto_shares(plan: list[tuple[SlotTypeSettings, dict[str, float | None], dict[str, Share]]],
                        totals: dict[str, float], avail: dict[str, float], custom: list[str],
                        fractional_cpus: bool) -> None:
    """Auto shares divide what the fixed shares left, resource by resource."""
    for key in totals:
        autos = [i for i, (_, amounts, _) in enumerate(plan) if amounts[key] is None]
        if not autos:
            continue
        left = avail[key]
        for k, i in enumerate(autos):
            remaining_slots = len(autos) - k
            share_amount: float
            if key == "cpus":
                share_amount = left / len(autos)
                if share_amount < 1.0 and not fractional_cpus:
                    raise LayoutError(
                        f"SLOT_TYPE_{plan[i][0].number}: {len(autos)} slots share {left:g} cpus "
                        f"automatically, less than one cpu each (NUM_SLOTS larger than NUM_CPUS?)")
            elif key in custom:
                share_amount = float(math.ceil(left / remaining_slots)) if left >= 1 else 0.0
                left -= share_amount
            else:
                share_amount = float(int(avail[key]) // len(autos))
            plan[i][1][key] = share_amount


def check_constraints(shares: Mapping[str, Share], slot_type: int) -> None:
    """Raise ``ResourceConstraintError`` for a ``: constraint`` that is not a ClassAd expression."""
    for name, share in shares.items():
        c = (share.constraint or "").strip()
        if name in STANDARD or not c or c.isdigit():
            continue
        try:
            ExprTree(c)
        except ClassAdError as e:
            raise ResourceConstraintError(
                f"SLOT_TYPE_{slot_type}: the constraint on {name} ({c}) does not parse: {e}",
                name, slot_type) from None


def build_layout(settings: StartdSettings, disk: int, inventory: Inventory,
                 context: EvalContext, ignore: Collection[str] = ()) -> list[SlotSpec]:
    """Divide the machine among the configured slots (``disk`` in KiB); device constraints are
    evaluated in ``context`` (the startd's, at its start). ``ignore`` names resources the
    machine was left without (their ``SLOT_TYPE_<N>`` items are skipped)."""
    custom = [n for n in inventory.names() if n.lower() not in {i.lower() for i in ignore}]
    totals: dict[str, float] = {"cpus": float(settings.num_cpus), "memory": float(settings.memory),
                                "disk": float(disk), "swap": float(settings.swap)}
    for name in custom:
        totals[name] = float(inventory.total(name))
    avail = dict(totals)
    free_ids = {name: list(ids) for name, ids in inventory.ids.items()}
    plan: list[tuple[SlotTypeSettings, dict[str, float | None], dict[str, Share]]] = []
    fractional_cpus = False
    for stype, count in _types(settings):
        where = f"SLOT_TYPE_{stype.number}"
        shares, default = parse_slot_type(stype.text, custom, where, ignore)
        check_constraints(shares, stype.number)
        if default.kind is ShareKind.MIN:
            fractional_cpus = True
        for _ in range(count):
            amounts: dict[str, float | None] = {}
            for key in totals:
                share = shares.get(key, default)
                if share.kind is ShareKind.AUTO:
                    amounts[key] = None
                    continue
                if share.kind is ShareKind.MIN:
                    amount = 0.0
                elif share.kind is ShareKind.FRACTION:
                    amount = float(math.trunc(share.value * totals[key]))
                else:
                    amount = share.value
                floor = {"cpus": 0.0 if fractional_cpus else 1.0, "memory": 1.0, "disk": 1024.0}.get(key, 0.0)
                if key in ("cpus", "memory", "disk") and totals[key] > 0:
                    amount = max(amount, floor)
                if amount > avail[key] + 1e-9:
                    raise LayoutError(
                        f"{where}: not enough {key} for slot {len(plan) + 1}: it asks for "
                        f"{_show(key, amount)} but only {_show(key, avail[key])} of "
                        f"{_show(key, totals[key])} is left")
                avail[key] -= amount
                amounts[key] = amount
            plan.append((stype, amounts, shares))
    _divide_auto_shares(plan, totals, avail, custom, fractional_cpus)
    specs: list[SlotSpec] = []
    for slot_id, (stype, amounts, shares) in enumerate(plan, start=1):
        res = Resources(
            cpus=float(amounts["cpus"] or 0.0),
            memory=int(amounts["memory"] or 0),
            disk=int(amounts["disk"] or 0),
            swap=int(amounts["swap"] or 0),
        )
        for name in custom:
            n = int(amounts[name] or 0)
            res.custom[name] = n
            if name in free_ids:
                wanted = shares.get(name)
                constraint = wanted.constraint if wanted is not None else None
                res.ids[name] = _take_ids(free_ids[name], n, constraint, inventory, name,
                                          f"SLOT_TYPE_{stype.number}", context)
        specs.append(SlotSpec(slot_id, stype.number, stype.partitionable, res))
    return specs


def _show(key: str, amount: float) -> str:
    unit = {"memory": " MiB", "disk": " KiB", "swap": " KiB"}.get(key, "")
    return f"{amount:g}{unit}"


def satisfies(constraint: str | None, dev: str, props: ClassAd | None, context: EvalContext,
              request: ClassAd | None = None) -> bool:
    """Whether device ``dev`` satisfies a job's ``Require<Res>`` constraint, evaluated in ``context``
    (one that cannot be evaluated at all is not satisfied)."""
    if constraint is None:
        return True
    try:
        v = ExprTree(constraint).evaluate(props or ClassAd(), request, context)
    except ClassAdError:
        return False
    return v is True or (v is not UNDEFINED and v is not ERROR and isinstance(v, str) and v == dev)


def with_inventory(settings: StartdSettings, readings: Iterable[InventoryReading]) -> tuple[StartdSettings, Inventory]:
    """Settings and inventory once the inventory commands have spoken: each reading's ids
    (less ``OFFLINE_MACHINE_RESOURCE_<tag>`` unless the command named its own offline ids) or
    count becomes the resource, its devices' property ads go into the inventory and the
    other attributes it printed (``DetectedGPUs`` …) into every slot ad."""
    resources = dict(settings.machine_resources)
    properties: dict[str, ClassAd] = {}
    printed: dict[str, object] = {}
    for r in readings:
        if r.count is not None:
            resources[r.tag] = r.count
        else:
            offline = set(r.offline) | set(settings.offline_resources.get(r.tag, ()))
            resources[r.tag] = tuple(d for d in r.ids if d not in offline)
            properties.update(r.properties)
        printed.update(r.attrs)
    merged = replace(settings, machine_resources=resources,
                     machine_attrs={**printed, **settings.machine_attrs})
    return merged, Inventory.from_settings(merged, properties)
