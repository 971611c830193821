"""The simulated pool's machines, read from a compact machine file or a ``condor_status -long`` dump.

Either file gives a list of ``MachineClass``: how many identical machines, the configuration
knobs that size them (``NUM_CPUS``, ``MEMORY`` in MiB, ``DISK`` in KiB, ``MACHINE_RESOURCE_<name>``)
and the extra attributes their slot ads advertise. Every machine also gets the startd policy of
the pool's configuration (slot types, ``START``, ``RANK``, ``PREEMPT`` …): the knobs are laid
over it, machine by machine (docs/simulator.md).

**The compact file.** Each line that is not blank and does not start with ``#`` is
``COUNT NAME=VALUE ...``, for example ``100 NUM_CPUS=16 MEMORY=65536`` or
``4 NUM_CPUS=64 MEMORY=262144 GPUs=4 HasDocker=true``. ``NUM_CPUS``, ``MEMORY``, ``DISK`` and
``MACHINE_RESOURCE_<name>`` are knobs; ``GPUs=N`` is short for ``MACHINE_RESOURCE_GPUs=N``; any
other name becomes a machine attribute whose value is a ClassAd expression (``Site="uw"``,
``HasDocker=true``). A value may be a quoted string with spaces. ``OWNER_ACTIVE=HH:MM-HH:MM[,…]``
gives the machines an owner who works at them in those hours every day (``owner``).

**The dump.** ``condor_status -long`` (or ``htcpool status -long``) output: slot ads in the
old form, one ``Name = value`` per line, ads separated by blank lines. The slot ads of one
``Machine`` make one machine: its resources are the ads' ``TotalCpus``, ``TotalMemory``,
``TotalDisk`` and ``Total<resource>`` (else the sum over its slots), and its other attributes
are advertised again, except those that describe a claim or a state (``STATE_ATTRIBUTES``)
and those the startd publishes itself. Identical machines fold into one class.

A line or ad that cannot be read raises ``SimInputError`` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAdError, parseOne
from htcpool.classad.values import as_number
from htcpool.sim.errors import SimInputError
from htcpool.sim.owner import OwnerActivity

#: knobs a compact line may set (``MACHINE_RESOURCE_<name>`` too)
SIZE_KNOBS = ("NUM_CPUS", "MEMORY", "DISK")
#: attributes of a dumped slot ad that describe its claim, job or current state, not the machine
STATE_ATTRIBUTES = frozenset(a.lower() for a in (
    "State", "Activity", "EnteredCurrentState", "EnteredCurrentActivity", "RemoteUser", "RemoteOwner",
    "RemoteGroup", "RemoteNegotiatingGroup", "RemoteAutoregroup", "RemoteScheddName", "ClientMachine",
    "JobId", "GlobalJobId", "JobStart", "JobUniverse", "JobPrio", "CurrentRank", "PublicClaimId",
    "ClaimId", "PreemptClaimId", "MyAddress", "StartdIpAddr", "AddressV1", "LastHeardFrom",
    "UpdateSequenceNumber", "DaemonStartTime", "MyCurrentTime", "TotalTimeClaimedBusy",
    "TotalTimeUnclaimedIdle", "TotalJobRunTime", "TotalClaimRunTime", "KeyboardIdle", "ConsoleIdle",
    "LoadAvg", "CondorLoadAvg", "TotalLoadAvg", "TotalCondorLoadAvg", "Name", "Machine", "SlotID",
    "DSlotId", "ParentSlotId", "DynamicSlot", "PartitionableSlot", "SlotType", "SlotTypeID",
    "ChildCpus", "ChildMemory", "ChildDisk", "ChildName", "ChildState", "ChildActivity", "NumDynamicSlots",
    "Cpus", "Memory", "Disk", "GPUs", "Requirements", "Start", "Rank", "ImageSize", "Mips", "KFlops",
    "LastBenchmark", "ExpectedMachineGracefulDrainingCompletion", "ExpectedMachineQuickDrainingCompletion",
    "MachineMaxVacateTime", "MaxJobRetirementTime", "TargetType", "MyType", "WithinResourceLimits",
))
_PAIR = re.compile(r'([A-Za-z_][A-Za-z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass(frozen=True)
class MachineClass:
    """``count`` identical machines: their sizing knobs and their extra slot-ad attributes."""

    count: int
    knobs: tuple[tuple[str, str], ...] = ()
    attributes: tuple[tuple[str, Any], ...] = ()
    where: str = ""  # file:line, for messages
    names: tuple[str, ...] = field(default=(), compare=False)  # machine names from a dump
    owner: OwnerActivity | None = None  # OWNER_ACTIVE: when an owner works at the machines


def read_machines(path: Path) -> list[MachineClass]:
    """The machine classes of ``path``, a compact machine file or a status dump."""
    try:
        text = path.read_text()
    except OSError as e:
        raise SimInputError(path, None, f"cannot read the machine file: {e.strerror}") from None
    first = next((line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")),
                 "")
    if re.match(r"^[A-Za-z_][A-Za-z0-9_.]*\s*=", first):
        return read_status_dump(path, text)
    return list(read_compact(path, text))


def read_compact(path: Path, text: str) -> Iterator[MachineClass]:
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        count_text, _, rest = line.partition(" ")
        if not count_text.isdigit() or int(count_text) < 1:
            raise SimInputError(path, number, f"a machine line starts with a positive count, not {count_text!r}")
        leftover = _PAIR.sub("", rest).strip()
        if leftover:
            raise SimInputError(path, number, f"expected NAME=VALUE, found {leftover.split()[0]!r}")
        knobs: list[tuple[str, str]] = []
        attrs: list[tuple[str, Any]] = []
        owner = None
        for name, value in _PAIR.findall(rest):
            knob = _knob(name)
            if name.upper() == "OWNER_ACTIVE":
                try:
                    owner = OwnerActivity.parse(value.strip('"'))
                except ValueError as e:
                    raise SimInputError(path, number, f"OWNER_ACTIVE: {e}") from None
            elif knob is not None:
                if not re.fullmatch(r"\d+(\.\d+)?", value):
                    raise SimInputError(path, number, f"{name} must be a number, not {value!r}")
                knobs.append((knob, value))
            else:
                attrs.append((name, _value(path, number, name, value)))
        yield MachineClass(int(count_text), tuple(knobs), tuple(attrs), f"{path}:{number}", owner=owner)


def _knob(name: str) -> str | None:
    upper = name.upper()
    if upper in SIZE_KNOBS or upper.startswith("MACHINE_RESOURCE_"):
        return upper if upper in SIZE_KNOBS else "MACHINE_RESOURCE_" + name[len("MACHINE_RESOURCE_"):]
    if upper == "GPUS":
        return "MACHINE_RESOURCE_GPUs"
    return None


def _value(path: Path, line: int, name: str, text: str) -> Any:
    try:
        ad = parseOne(f"[{name} = {text}]")
    except (ClassAdError, ValueError) as e:
        raise SimInputError(path, line, f"{name}={text} is not a ClassAd value: {e}") from None
    if name not in ad:
        raise SimInputError(path, line, f"{name}={text} is not a ClassAd value")
    return ad.get(name)


def read_status_dump(path: Path, text: str) -> list[MachineClass]:
    """Machines of a ``condor_status -long`` dump (see the module docstring)."""
    machines: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for start, block in _blocks(text):
        try:
            ad = parseOne("[" + ";".join(block) + "]")
        except (ClassAdError, ValueError) as e:
            raise SimInputError(path, start, f"not a slot ad: {e}") from None
        values = {k: ad.get(k) for k in ad}
        machine = values.get("Machine")
        if not isinstance(machine, str):
            raise SimInputError(path, start, "a slot ad without Machine")
        machines.setdefault(machine, []).append((start, values))
    classes: dict[tuple[Any, ...], MachineClass] = {}
    for machine, slots in machines.items():
        start = slots[0][0]
        knobs = _dump_knobs(path, start, [values for _, values in slots])
        attrs = sorted((k, v) for k, v in slots[0][1].items()
                       if k.lower() not in STATE_ATTRIBUTES and not k.startswith("Total")
                       and not k.startswith("Child") and not k.startswith("Assigned") and k not in _resource_names(knobs))
        key = (knobs, tuple((k, str(v)) for k, v in attrs))
        known = classes.get(key)
        if known is None:
            classes[key] = MachineClass(1, knobs, tuple(attrs), f"{path}:{start}", (machine,))
        else:
            classes[key] = MachineClass(known.count + 1, knobs, known.attributes, known.where,
                                        (*known.names, machine))
    return list(classes.values())


def _resource_names(knobs: tuple[tuple[str, str], ...]) -> set[str]:
    return {k[len("MACHINE_RESOURCE_"):] for k, _ in knobs if k.startswith("MACHINE_RESOURCE_")}


def _blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    block: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            if block:
                yield start, block
            block = []
            continue
        if line.startswith("#"):
            continue
        if not block:
            start = number
        block.append(line)
    if block:
        yield start, block


def _dump_knobs(path: Path, line: int, slots: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The sizing knobs of one machine from its slot ads."""
    first = slots[0]

    def total(attr: str) -> int | None:
        value = as_number(first.get(f"Total{attr}"))
        if value is None:
            parts = [as_number(s.get(attr)) for s in slots if s.get("DynamicSlot") is not True]
            if not parts or any(p is None for p in parts):
                return None
            value = sum(p for p in parts if p is not None)
        return int(value)

    cpus, memory = total("Cpus"), total("Memory")
    if cpus is None or memory is None:
        raise SimInputError(path, line, "a slot ad without TotalCpus/Cpus or TotalMemory/Memory")
    knobs = [("NUM_CPUS", str(cpus)), ("MEMORY", str(memory))]
    disk = total("Disk")
    if disk is not None:
        knobs.append(("DISK", str(disk)))
    names = first.get("MachineResources")
    for name in (names.split() if isinstance(names, str) else []):
        if name.lower() in ("cpus", "memory", "disk", "swap"):
            continue
        amount = total(name)
        if amount:
            knobs.append((f"MACHINE_RESOURCE_{name}", str(amount)))
    return tuple(knobs)


__all__ = ["STATE_ATTRIBUTES", "MachineClass", "read_compact", "read_machines", "read_status_dump"]
