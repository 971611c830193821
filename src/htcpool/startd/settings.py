"""Plain settings for the startd core, and the one adapter that fills them from configuration.

The core never reads configuration itself: it takes a ``StartdSettings`` (frozen,
plain data). ``settings_from_config`` fills one from anything with the accessors of
``htcpool.config.Config`` (the ``ConfigSource`` protocol), reading every knob with
HTCondor's name and taking HTCondor's default from the parameter table where the
source has one, or the fallback the startd itself uses (``POLICY_FALLBACKS``).

Policy knobs are kept as expression *text*; ``policy`` parses them once per slot
type. ``SLOT_TYPE_<N>_<KNOB>`` overrides a policy knob for slots of type N.

The adapter reads in parts, one function each: the machine's custom resources (and
the ``MACHINE_RESOURCE_INVENTORY_<tag>`` commands, which only the driver may run: it
puts what they report into the settings with ``layout.with_inventory``), the policy
knobs, the slot types, and the attributes copied into slot ads (``STARTD_ATTRS``,
``SLOT<N>_STARTD_ATTRS``, latches); the rest are single knobs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from htcpool.classad import ClassAdError, ExprTree
from htcpool.config import param_info
from htcpool.startd.errors import LayoutError

#: Policy knobs copied into every slot ad, with the startd's fallback when unset
#: (``None``: the attribute is left out). Order is the order of insertion.
POLICY_FALLBACKS: dict[str, str | None] = {
    "START": "true",
    "SUSPEND": "false",
    "CONTINUE": "true",
    "PREEMPT": "false",
    "KILL": "false",
    "WANT_SUSPEND": "false",
    "WANT_VACATE": "true",
    "WANT_HOLD": "false",
    "WANT_HOLD_REASON": None,
    "WANT_HOLD_SUBCODE": None,
    "CLAIM_WORKLIFE": None,
    "MaxJobRetirementTime": None,
    "MachineMaxVacateTime": "600",
    "RunBenchmarks": None,
    "Rank": None,
    "SUSPEND_VANILLA": None,
    "CONTINUE_VANILLA": None,
    "PREEMPT_VANILLA": None,
    "KILL_VANILLA": None,
    "WANT_SUSPEND_VANILLA": None,
    "WANT_VACATE_VANILLA": None,
    "START_BACKFILL": None,
    "EVICT_BACKFILL": None,
    "IsOwner": "(START =?= False)",
    "CpuBusy": "false",
    "SlotWeight": "Cpus",
}

#: Config knob read for each ad attribute when the names differ.
_KNOB_NAMES: dict[str, tuple[str, ...]] = {
    "Rank": ("RANK",),
    "IsOwner": ("IsOwner", "IS_OWNER"),
    "CpuBusy": ("CpuBusy", "cpu_busy"),
    "SlotWeight": ("SlotWeight", "SLOT_WEIGHT"),
}

_RESERVED_RESOURCE_NAMES = {"cpu", "cpus", "disk", "swap", "mem", "memory", "ram"}
_MACRO = re.compile(r"\$\((\w+)\)")


def table_default(name: str) -> str:
    """HTCondor's default for ``name`` from the parameter table, with the ``$(X)``
    references to other table knobs expanded as the configuration reader expands them
    (``MODIFY_REQUEST_EXPR_REQUESTDISK`` uses ``$(CATALOG_SPACE)``, which uses
    ``$(SUM_OF_CATALOGS)``). The fallback when ``StartdSettings`` is built directly."""
    info = param_info(name)
    if info is None:
        raise KeyError(name)
    return _MACRO.sub(lambda m: table_default(m.group(1)), info.default)


#: The ``MODIFY_REQUEST_EXPR_<X>`` defaults, by request attribute.
MODIFY_REQUEST_DEFAULTS = {attr: f"MODIFY_REQUEST_EXPR_{attr.upper()}"
                           for attr in ("RequestCpus", "RequestMemory", "RequestDisk")}


class ConfigSource(Protocol):
    """What the adapter needs of a configuration (``htcpool.config.Config`` has it)."""

    def get_str(self, name: str, default: str | None = None, subsystem: str | None = None,
                slot: int | None = None) -> str | None: ...

    def get_expr(self, name: str, default: str | None = None, subsystem: str | None = None,
                 slot: int | None = None) -> str | None: ...

    def get_int(self, name: str, default: int | None = None, subsystem: str | None = None,
                slot: int | None = None) -> int | None: ...

    def get_float(self, name: str, default: float | None = None, subsystem: str | None = None,
                  slot: int | None = None) -> float | None: ...

    def get_bool(self, name: str, default: bool | None = None, subsystem: str | None = None,
                 slot: int | None = None) -> bool | None: ...


@dataclass(frozen=True, slots=True)
class SlotTypeSettings:
    """One ``SLOT_TYPE_<N>``: its resource text, count and per-type knobs."""

    number: int
    text: str = ""
    count: int = 0
    partitionable: bool = False
    consumption_policy: bool = False
    consumption: Mapping[str, str] = field(default_factory=dict)
    policy: Mapping[str, str] = field(default_factory=dict)
    name_prefix: str | None = None
    #: SLOT_TYPE_<N>_NUM_CLAIMS (else NUM_CLAIMS): the claim ids a consumption-policy p-slot
    #: offers at once; None: one per whole core
    num_claims: int | None = None


@dataclass(frozen=True, slots=True)
class StartdSettings:
    """Everything the startd core reads from configuration."""

    hostname: str = "localhost"
    num_cpus: int = 1
    detected_cpus: int = 1
    memory: int = 1024  # MiB available to slots (after RESERVED_MEMORY)
    detected_memory: int = 1024
    disk: int | None = None  # KiB; None: the sensor reading decides
    reserved_disk: int = 0  # MiB
    swap: int = 0  # KiB
    machine_resources: Mapping[str, tuple[str, ...] | int] = field(default_factory=dict)
    #: ``MACHINE_RESOURCE_INVENTORY_<tag>`` commands by tag; the driver runs them and puts the ids
    #: they report in ``machine_resources`` (and the devices' properties in the ``Inventory``)
    resource_inventory: Mapping[str, str] = field(default_factory=dict)
    #: ``OFFLINE_MACHINE_RESOURCE_<tag>`` by tag, for resources an inventory command lists
    offline_resources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    slot_types: Mapping[int, SlotTypeSettings] = field(default_factory=dict)
    num_slots: int | None = None
    slot_type_0_partitionable: bool = True
    resource_prefix: str = "slot"
    policy: Mapping[str, str | None] = field(default_factory=lambda: dict(POLICY_FALLBACKS))
    polling_interval: float = 5.0
    update_interval: float = 300.0
    match_timeout: float = 120.0
    killing_timeout: float = 30.0
    max_claim_alives_missed: int = 6
    max_draining_activation_delay: float = 20.0
    startd_attrs: tuple[str, ...] = ()
    #: static machine attributes measured by the driver (Arch, OpSys, CondorVersion, …), in every ad
    machine_attrs: Mapping[str, object] = field(default_factory=dict)
    slot_startd_attrs: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    attr_values: Mapping[str, str | None] = field(default_factory=dict)
    slot_attr_values: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)
    startd_slot_attrs: tuple[str, ...] = ()
    latch_exprs: tuple[str, ...] = ("NumDynamicSlots",)
    #: obsolete knobs the configuration still sets (``STARTD_EXPRS``), read under their new names;
    #: the startd warns of each in its log
    obsolete_knobs: tuple[str, ...] = ()
    slots_connected_to_keyboard: int = 0
    slots_connected_to_console: int = 0
    disconnected_keyboard_idle_boost: float = 1200.0
    modify_request_exprs: Mapping[str, str] = field(default_factory=lambda: {
        attr: table_default(knob) for attr, knob in MODIFY_REQUEST_DEFAULTS.items()})
    must_modify_request_exprs: bool = False
    consumption_policy: bool = False
    consumption: Mapping[str, str] = field(default_factory=dict)
    num_claims: int | None = None  # NUM_CLAIMS (see SlotTypeSettings.num_claims)
    enable_backfill: bool = False
    backfill_system: str | None = None
    within_resource_limits: str | None = None
    catalog_space: str | None = field(default_factory=lambda: table_default("CATALOG_SPACE"))
    default_draining_start_expr: str | None = None
    max_slot_types: int = 10


def _words(text: str | None) -> tuple[str, ...]:
    return tuple(w for w in (text or "").replace(",", " ").split() if w)


def _resource_names(config: ConfigSource, names: Iterable[str] | None) -> list[str]:
    listed = config.get_str("MACHINE_RESOURCE_NAMES", subsystem="STARTD")
    if listed:
        return list(_words(listed))
    found: list[str] = []
    known = names
    if known is None:
        definitions = getattr(config, "definitions", None)
        known = [d.name for d in definitions()] if callable(definitions) else []
    for n in known:
        up = n.upper()
        if up.startswith("MACHINE_RESOURCE_") and not up.startswith("MACHINE_RESOURCE_INVENTORY_") \
                and up != "MACHINE_RESOURCE_NAMES":
            tag = n[len("MACHINE_RESOURCE_"):]
            if tag and tag.lower() not in {f.lower() for f in found}:
                found.append(tag)
    return found


class _Reader:
    """Typed reads of the startd's knobs (subsystem ``STARTD``), with the value used when unset."""

    SUBSYSTEM = "STARTD"

    def __init__(self, config: ConfigSource) -> None:
        self.config = config

    def integer(self, name: str, default: int) -> int:
        v = self.config.get_int(name, subsystem=self.SUBSYSTEM)
        return default if v is None else v

    def real(self, name: str, default: float) -> float:
        v = self.config.get_float(name, subsystem=self.SUBSYSTEM)
        return default if v is None else v

    def flag(self, name: str, default: bool) -> bool:
        v = self.config.get_bool(name, subsystem=self.SUBSYSTEM)
        return default if v is None else v

    def text(self, name: str) -> str | None:
        return self.config.get_str(name, subsystem=self.SUBSYSTEM)

    def expr(self, name: str) -> str | None:
        return self.config.get_expr(name, subsystem=self.SUBSYSTEM)

    def words(self, name: str, default: str | None = None) -> tuple[str, ...]:
        """The knob's comma- or space-separated words (``default``'s when it is unset or empty)."""
        return _words(self.text(name) or default)


def _inventory_tags(config: ConfigSource, names: Iterable[str] | None) -> list[str]:
    """The tags of every ``MACHINE_RESOURCE_INVENTORY_<tag>`` defined."""
    known = names
    if known is None:
        definitions = getattr(config, "definitions", None)
        known = [d.name for d in definitions()] if callable(definitions) else []
    found: list[str] = []
    for n in known:
        if n.upper().startswith("MACHINE_RESOURCE_INVENTORY_"):
            tag = n[len("MACHINE_RESOURCE_INVENTORY_"):]
            if tag and tag.lower() not in {f.lower() for f in found}:
                found.append(tag)
    return found


def _resource_inventory(read: _Reader, names: Iterable[str] | None) -> dict[str, str]:
    """``MACHINE_RESOURCE_INVENTORY_<tag>``: the command that lists resource ``tag``, by tag.
    An explicit ``MACHINE_RESOURCE_<tag>`` wins, as in HTCondor."""
    listed = read.text("MACHINE_RESOURCE_NAMES")
    tags = list(_words(listed)) if listed else _inventory_tags(read.config, names)
    out: dict[str, str] = {}
    for tag in tags:
        if tag.lower() in _RESERVED_RESOURCE_NAMES or read.text(f"MACHINE_RESOURCE_{tag}"):
            continue
        command = read.text(f"MACHINE_RESOURCE_INVENTORY_{tag}")
        if command and command.strip():
            out[tag] = command.strip()
    return out


def _machine_resources(read: _Reader, names: Iterable[str] | None) -> dict[str, tuple[str, ...] | int]:
    """``MACHINE_RESOURCE_<tag>``: a count, or the instance ids less ``OFFLINE_MACHINE_RESOURCE_<tag>``."""
    resources: dict[str, tuple[str, ...] | int] = {}
    for tag in _resource_names(read.config, names):
        if tag.lower() in _RESERVED_RESOURCE_NAMES:
            continue
        text = read.text(f"MACHINE_RESOURCE_{tag}")
        if text is None:
            continue
        words = _words(text)
        offline = set(_words(read.text(f"OFFLINE_MACHINE_RESOURCE_{tag}")))
        if len(words) == 1 and words[0].isdigit():
            resources[tag] = int(words[0])
        else:
            resources[tag] = tuple(w for w in words if w not in offline)
    return resources


def _policy(read: _Reader) -> dict[str, str | None]:
    """Every policy knob's text, or the startd's fallback (``POLICY_FALLBACKS``)."""
    policy: dict[str, str | None] = {}
    for attr, fallback in POLICY_FALLBACKS.items():
        value = None
        for knob in _KNOB_NAMES.get(attr, (attr,)):
            value = read.expr(knob)
            if value is not None:
                break
        policy[attr] = value if value is not None else fallback
    return policy


def _num_claims(read: _Reader, *knobs: str) -> int | None:
    """The first of ``knobs`` that is set (at least 0), or None when none is."""
    for knob in knobs:
        if read.text(knob) is not None:
            return max(0, read.integer(knob, 0))
    return None


def _slot_types(read: _Reader, max_types: int, consumption_names: list[str]) -> dict[int, SlotTypeSettings]:
    """``SLOT_TYPE_<N>`` and its per-type knobs for N in 1 .. MAX_SLOT_TYPES - 1."""
    slot_types: dict[int, SlotTypeSettings] = {}
    for n in range(1, max_types):
        count = read.integer(f"NUM_SLOTS_TYPE_{n}", 0)
        text = read.text(f"SLOT_TYPE_{n}")
        if not count and text is None:
            continue
        overrides = {attr: v for attr in POLICY_FALLBACKS
                     for knob in _KNOB_NAMES.get(attr, (attr,))[-1:]
                     if (v := read.expr(f"SLOT_TYPE_{n}_{knob}")) is not None}
        cons = {r: v for r in consumption_names
                if (v := read.expr(f"SLOT_TYPE_{n}_CONSUMPTION_{r}")) is not None}
        cp = read.config.get_bool(f"SLOT_TYPE_{n}_CONSUMPTION_POLICY", subsystem=read.SUBSYSTEM)
        slot_types[n] = SlotTypeSettings(
            number=n, text=text or "", count=count,
            partitionable=read.flag(f"SLOT_TYPE_{n}_PARTITIONABLE", False),
            consumption_policy=read.flag("CONSUMPTION_POLICY", False) if cp is None else cp,
            consumption=cons, policy=overrides,
            name_prefix=read.text(f"SLOT_TYPE_{n}_NAME_PREFIX"),
            num_claims=_num_claims(read, f"SLOT_TYPE_{n}_NUM_CLAIMS", "NUM_CLAIMS"),
        )
    for bad in ("SLOT_TYPE_0", "NUM_SLOTS_TYPE_0"):
        if read.text(bad) is not None:
            raise LayoutError(f"{bad} must not be set: slot types are numbered from 1")
    return slot_types


@dataclass(frozen=True, slots=True)
class _AdAttributes:
    """STARTD_ATTRS, SLOT<N>_STARTD_ATTRS and STARTD_LATCH_EXPRS with their expressions."""

    startd_attrs: tuple[str, ...]
    latches: tuple[str, ...]
    slot_lists: dict[int, tuple[str, ...]]
    values: dict[str, str | None]
    slot_values: dict[int, dict[str, str | None]]


def _unique(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without repeats (case-insensitively, as attribute names are), in order."""
    seen: set[str] = set()
    out = []
    for word in words:
        if word.lower() not in seen:
            seen.add(word.lower())
            out.append(word)
    return tuple(out)


def obsolete_knobs(read: _Reader, static_slots: int) -> tuple[str, ...]:
    """The obsolete names this configuration sets (``STARTD_EXPRS``, ``SLOT<N>_STARTD_EXPRS``)."""
    names = ["STARTD_EXPRS", *(f"SLOT{i}_STARTD_EXPRS" for i in range(1, static_slots + 1))]
    return tuple(n for n in names if read.text(n))


def _ad_attributes(read: _Reader, static_slots: int) -> _AdAttributes:
    # STARTD_EXPRS is the obsolete name of STARTD_ATTRS (the whole-machine howto still uses it)
    startd_attrs = _unique(read.words("STARTD_ATTRS") + read.words("STARTD_EXPRS") + read.words("SYSTEM_STARTD_ATTRS"))
    latches = read.words("STARTD_LATCH_EXPRS") + read.words("SYSTEM_STARTD_LATCH_EXPRS", "NumDynamicSlots")
    slot_lists = {i: w for i in range(1, static_slots + 1)
                  if (w := _unique(read.words(f"SLOT{i}_STARTD_ATTRS") + read.words(f"SLOT{i}_STARTD_EXPRS")))}
    all_names = set(startd_attrs) | {a for w in slot_lists.values() for a in w} | set(latches)
    values = {a: read.expr(a) for a in all_names}
    slot_values: dict[int, dict[str, str | None]] = {}
    for i in range(1, static_slots + 1):
        for a in all_names:
            v = read.expr(f"SLOT{i}_{a}")
            if v is not None:
                slot_values.setdefault(i, {})[a] = v
    return _AdAttributes(startd_attrs, latches, slot_lists, values, slot_values)


def settings_from_config(config: ConfigSource, *, names: Iterable[str] | None = None) -> StartdSettings:
    """Fill ``StartdSettings`` from a configuration (subsystem ``STARTD``).

    ``names`` lists the macro names defined (used to find ``MACHINE_RESOURCE_<name>``
    when ``MACHINE_RESOURCE_NAMES`` is not set); by default it is taken from
    ``config.definitions()`` when the source has that method.
    """
    read = _Reader(config)
    detected_cpus = read.integer("DETECTED_CORES", read.integer("DETECTED_CPUS", 1))
    num_cpus = read.integer("NUM_CPUS", detected_cpus)
    detected_memory = read.integer("DETECTED_MEMORY", 1024)
    memory = read.integer("MEMORY", detected_memory) or detected_memory
    memory = max(0, memory - read.integer("RESERVED_MEMORY", 0))
    resources = _machine_resources(read, names)
    inventory = _resource_inventory(read, names)
    offline = {tag: _words(read.text(f"OFFLINE_MACHINE_RESOURCE_{tag}")) for tag in inventory}
    max_types = read.integer("MAX_SLOT_TYPES", 10)
    consumption_names = ["CPUS", "MEMORY", "DISK", *resources, *inventory]
    slot_types = _slot_types(read, max_types, consumption_names)
    static_slots = sum(t.count for t in slot_types.values()) or max(num_cpus, 1)
    attrs = _ad_attributes(read, static_slots)
    modify = {r: v for r in ["RequestCpus", "RequestMemory", "RequestDisk",
                             *(f"Request{t}" for t in [*resources, *inventory])]
              if (v := read.expr(f"MODIFY_REQUEST_EXPR_{r.upper()}")) is not None}
    consumption = {r: v for r in consumption_names if (v := read.expr(f"CONSUMPTION_{r}")) is not None}

    return StartdSettings(
        hostname=read.text("STARTD_NAME") or config.get_str("FULL_HOSTNAME") or "localhost",
        num_cpus=num_cpus,
        detected_cpus=detected_cpus,
        memory=memory,
        detected_memory=detected_memory,
        disk=config.get_int("DISK", subsystem=read.SUBSYSTEM),
        reserved_disk=read.integer("RESERVED_DISK", 0),
        swap=read.integer("SWAP", 0) if read.text("SWAP") else 0,
        machine_resources=resources,
        resource_inventory=inventory,
        offline_resources=offline,
        slot_types=slot_types,
        num_slots=config.get_int("NUM_SLOTS", subsystem=read.SUBSYSTEM),
        slot_type_0_partitionable=read.flag("SLOT_TYPE_0_PARTITIONABLE", True),
        resource_prefix=read.text("STARTD_RESOURCE_PREFIX") or "slot",
        policy=_policy(read),
        polling_interval=read.real("POLLING_INTERVAL", 5.0),
        update_interval=read.real("UPDATE_INTERVAL", 300.0),
        match_timeout=read.real("MATCH_TIMEOUT", 120.0),
        killing_timeout=read.real("KILLING_TIMEOUT", 30.0),
        max_claim_alives_missed=read.integer("MAX_CLAIM_ALIVES_MISSED", 6),
        max_draining_activation_delay=read.real("MAX_DRAINING_ACTIVATION_DELAY", 20.0),
        startd_attrs=attrs.startd_attrs,
        slot_startd_attrs=attrs.slot_lists,
        attr_values=attrs.values,
        slot_attr_values=attrs.slot_values,
        startd_slot_attrs=read.words("STARTD_SLOT_ATTRS") + read.words("STARTD_SLOT_EXPRS"),
        latch_exprs=attrs.latches,
        obsolete_knobs=obsolete_knobs(read, static_slots),
        slots_connected_to_keyboard=read.integer("SLOTS_CONNECTED_TO_KEYBOARD", 0),
        slots_connected_to_console=read.integer("SLOTS_CONNECTED_TO_CONSOLE", 0),
        disconnected_keyboard_idle_boost=read.real("DISCONNECTED_KEYBOARD_IDLE_BOOST", 1200.0),
        modify_request_exprs=modify,
        must_modify_request_exprs=read.flag("MUST_MODIFY_REQUEST_EXPRS", False),
        consumption_policy=read.flag("CONSUMPTION_POLICY", False),
        consumption=consumption,
        num_claims=_num_claims(read, "NUM_CLAIMS"),
        enable_backfill=read.flag("ENABLE_BACKFILL", False),
        backfill_system=read.text("BACKFILL_SYSTEM"),
        within_resource_limits=read.expr("WithinResourceLimits"),
        catalog_space=_parsable(read.expr("CATALOG_SPACE")),
        default_draining_start_expr=read.expr("DEFAULT_DRAINING_START_EXPR"),
        max_slot_types=max_types,
    )


def _parsable(text: str | None) -> str | None:
    """``text`` if it is a ClassAd expression, else None (an unusable CATALOG_SPACE counts as 0)."""
    if not text or not text.strip():
        return None
    try:
        ExprTree(text)
    except ClassAdError:
        return None
    return text
