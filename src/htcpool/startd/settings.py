"""Plain settings for the startd core, and the one adapter that fills them from configuration.

The core never reads configuration itself: it takes a ``StartdSettings`` (frozen,
plain data). ``settings_from_config`` fills one from anything with the accessors of
``htcpool.config.Config`` (the ``ConfigSource`` protocol), reading every knob with
HTCondor's name and taking HTCondor's default from the parameter table where the
source has one, or the fallback the startd itself uses (``POLICY_FALLBACKS``).

Policy knobs are kept as expression *text*; ``policy`` parses them once per slot
type. ``SLOT_TYPE_<N>_<KNOB>`` overrides a policy knob for slots of type N.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from htcpool.classad import ClassAdError, ExprTree
from htcpool.config import param_info

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
    slots_connected_to_keyboard: int = 0
    slots_connected_to_console: int = 0
    disconnected_keyboard_idle_boost: float = 1200.0
    modify_request_exprs: Mapping[str, str] = field(default_factory=lambda: {
        attr: table_default(knob) for attr, knob in MODIFY_REQUEST_DEFAULTS.items()})
    must_modify_request_exprs: bool = False
    consumption_policy: bool = False
    consumption: Mapping[str, str] = field(default_factory=dict)
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


def settings_from_config(config: ConfigSource, *, names: Iterable[str] | None = None) -> StartdSettings:
    """Fill ``StartdSettings`` from a configuration (subsystem ``STARTD``).

    ``names`` lists the macro names defined (used to find ``MACHINE_RESOURCE_<name>``
    when ``MACHINE_RESOURCE_NAMES`` is not set); by default it is taken from
    ``config.definitions()`` when the source has that method.
    """
    sub = "STARTD"

    def gi(name: str, default: int) -> int:
        v = config.get_int(name, subsystem=sub)
        return default if v is None else v

    def gf(name: str, default: float) -> float:
        v = config.get_float(name, subsystem=sub)
        return default if v is None else v

    def gb(name: str, default: bool) -> bool:
        v = config.get_bool(name, subsystem=sub)
        return default if v is None else v

    detected_cpus = gi("DETECTED_CORES", gi("DETECTED_CPUS", 1))
    num_cpus = gi("NUM_CPUS", detected_cpus)
    detected_memory = gi("DETECTED_MEMORY", 1024)
    memory = gi("MEMORY", detected_memory) or detected_memory
    memory = max(0, memory - gi("RESERVED_MEMORY", 0))
    disk = config.get_int("DISK", subsystem=sub)

    resources: dict[str, tuple[str, ...] | int] = {}
    for tag in _resource_names(config, names):
        if tag.lower() in _RESERVED_RESOURCE_NAMES:
            continue
        text = config.get_str(f"MACHINE_RESOURCE_{tag}", subsystem=sub)
        if text is None:
            continue
        words = _words(text)
        offline = set(_words(config.get_str(f"OFFLINE_MACHINE_RESOURCE_{tag}", subsystem=sub)))
        if len(words) == 1 and words[0].isdigit():
            resources[tag] = int(words[0])
        else:
            resources[tag] = tuple(w for w in words if w not in offline)

    policy: dict[str, str | None] = {}
    for attr, fallback in POLICY_FALLBACKS.items():
        value = None
        for knob in _KNOB_NAMES.get(attr, (attr,)):
            value = config.get_expr(knob, subsystem=sub)
            if value is not None:
                break
        policy[attr] = value if value is not None else fallback

    max_types = gi("MAX_SLOT_TYPES", 10)
    consumption_names = ["CPUS", "MEMORY", "DISK", *resources]
    slot_types: dict[int, SlotTypeSettings] = {}
    for n in range(1, max_types):
        count = gi(f"NUM_SLOTS_TYPE_{n}", 0)
        text = config.get_str(f"SLOT_TYPE_{n}", subsystem=sub)
        if not count and text is None:
            continue
        overrides = {attr: v for attr in POLICY_FALLBACKS
                     for knob in _KNOB_NAMES.get(attr, (attr,))[-1:]
                     if (v := config.get_expr(f"SLOT_TYPE_{n}_{knob}", subsystem=sub)) is not None}
        cons = {r: v for r in consumption_names
                if (v := config.get_expr(f"SLOT_TYPE_{n}_CONSUMPTION_{r}", subsystem=sub)) is not None}
        cp = config.get_bool(f"SLOT_TYPE_{n}_CONSUMPTION_POLICY", subsystem=sub)
        slot_types[n] = SlotTypeSettings(
            number=n, text=text or "", count=count,
            partitionable=gb(f"SLOT_TYPE_{n}_PARTITIONABLE", False),
            consumption_policy=gb("CONSUMPTION_POLICY", False) if cp is None else cp,
            consumption=cons, policy=overrides,
            name_prefix=config.get_str(f"SLOT_TYPE_{n}_NAME_PREFIX", subsystem=sub),
        )
    for bad in ("SLOT_TYPE_0", "NUM_SLOTS_TYPE_0"):
        if config.get_str(bad, subsystem=sub) is not None:
            from htcpool.startd.errors import LayoutError

            raise LayoutError(f"{bad} must not be set: slot types are numbered from 1")

    total_static = sum(t.count for t in slot_types.values()) or max(num_cpus, 1)
    startd_attrs = _words(config.get_str("STARTD_ATTRS", subsystem=sub)) + \
        _words(config.get_str("SYSTEM_STARTD_ATTRS", subsystem=sub))
    latches = _words(config.get_str("STARTD_LATCH_EXPRS", subsystem=sub)) + \
        _words(config.get_str("SYSTEM_STARTD_LATCH_EXPRS", subsystem=sub) or "NumDynamicSlots")
    slot_lists = {i: w for i in range(1, total_static + 1)
                  if (w := _words(config.get_str(f"SLOT{i}_STARTD_ATTRS", subsystem=sub)))}
    all_names = set(startd_attrs) | {a for w in slot_lists.values() for a in w} | set(latches)
    attr_values = {a: config.get_expr(a, subsystem=sub) for a in all_names}
    slot_values: dict[int, dict[str, str | None]] = {}
    for i in range(1, total_static + 1):
        for a in all_names:
            v = config.get_expr(f"SLOT{i}_{a}", subsystem=sub)
            if v is not None:
                slot_values.setdefault(i, {})[a] = v

    modify = {}
    for r in ["RequestCpus", "RequestMemory", "RequestDisk", *(f"Request{t}" for t in resources)]:
        v = config.get_expr(f"MODIFY_REQUEST_EXPR_{r.upper()}", subsystem=sub)
        if v is not None:
            modify[r] = v
    consumption = {r: v for r in consumption_names
                   if (v := config.get_expr(f"CONSUMPTION_{r}", subsystem=sub)) is not None}

    return StartdSettings(
        hostname=config.get_str("STARTD_NAME", subsystem=sub) or config.get_str("FULL_HOSTNAME") or "localhost",
        num_cpus=num_cpus,
        detected_cpus=detected_cpus,
        memory=memory,
        detected_memory=detected_memory,
        disk=disk,
        reserved_disk=gi("RESERVED_DISK", 0),
        swap=gi("SWAP", 0) if config.get_str("SWAP", subsystem=sub) else 0,
        machine_resources=resources,
        slot_types=slot_types,
        num_slots=config.get_int("NUM_SLOTS", subsystem=sub),
        slot_type_0_partitionable=gb("SLOT_TYPE_0_PARTITIONABLE", True),
        resource_prefix=config.get_str("STARTD_RESOURCE_PREFIX", subsystem=sub) or "slot",
        policy=policy,
        polling_interval=gf("POLLING_INTERVAL", 5.0),
        update_interval=gf("UPDATE_INTERVAL", 300.0),
        match_timeout=gf("MATCH_TIMEOUT", 120.0),
        killing_timeout=gf("KILLING_TIMEOUT", 30.0),
        max_claim_alives_missed=gi("MAX_CLAIM_ALIVES_MISSED", 6),
        max_draining_activation_delay=gf("MAX_DRAINING_ACTIVATION_DELAY", 20.0),
        startd_attrs=startd_attrs,
        slot_startd_attrs=slot_lists,
        attr_values=attr_values,
        slot_attr_values=slot_values,
        startd_slot_attrs=_words(config.get_str("STARTD_SLOT_ATTRS", subsystem=sub))
        + _words(config.get_str("STARTD_SLOT_EXPRS", subsystem=sub)),
        latch_exprs=latches,
        slots_connected_to_keyboard=gi("SLOTS_CONNECTED_TO_KEYBOARD", 0),
        slots_connected_to_console=gi("SLOTS_CONNECTED_TO_CONSOLE", 0),
        disconnected_keyboard_idle_boost=gf("DISCONNECTED_KEYBOARD_IDLE_BOOST", 1200.0),
        modify_request_exprs=modify,
        must_modify_request_exprs=gb("MUST_MODIFY_REQUEST_EXPRS", False),
        consumption_policy=gb("CONSUMPTION_POLICY", False),
        consumption=consumption,
        enable_backfill=gb("ENABLE_BACKFILL", False),
        backfill_system=config.get_str("BACKFILL_SYSTEM", subsystem=sub),
        within_resource_limits=config.get_expr("WithinResourceLimits", subsystem=sub),
        catalog_space=_parsable(config.get_expr("CATALOG_SPACE", subsystem=sub)),
        default_draining_start_expr=config.get_expr("DEFAULT_DRAINING_START_EXPR", subsystem=sub),
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
