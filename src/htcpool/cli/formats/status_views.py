"""condor_status's other slot views: ``-state``, ``-server``, ``-gpus`` and ``-compact``.

Each returns the heading line and one row per slot (``format_status`` adds the blank line,
the cut to the console and the totals). Missing attributes print ``??`` as in the default
view; durations are ``days+hh:mm:ss`` against the ad's own clock (``activity_time``).

* ``-state``: Name, Cpu, Mem, LoadAv, KbdIdle, State, StateTime, Activ, ActvtyTime;
* ``-server``: Name, OpSys, Arch, LoadAv, Mem, Disk, Mips, KFlops;
* ``-gpus``: Name, ST (state and activity initials), User, GPUs, GPU-Memory, GPU-Name, for
  slots with GPUs;
* ``-compact``: one row per machine: a partitionable slot stands for its dynamic slots
  (their jobs are its ``Jobs``); columns Machine, Platform, Slots, Cpus, Gpus, TotalGb,
  FreCpu, FreeGb, CpuLoad, ST, Jobs.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    Column,
    format_duration,
    lookup_bool,
    lookup_float,
    lookup_int,
    lookup_str,
)


def _text(slot: ClassAd, attr: str) -> str:
    value = lookup_str(slot, attr)
    return "??" if value is None else value


def _int(slot: ClassAd, attr: str) -> str:
    value = lookup_int(slot, attr)
    return "??" if value is None else str(value)


def _load(slot: ClassAd) -> str:
    load = lookup_float(slot, "CondorLoadAvg")
    return "??" if load is None else "%.3f" % load


def _since(slot: ClassAd, attr: str, now: int) -> str:
    entered = lookup_int(slot, attr)
    if entered is None:
        return "-"
    clock = lookup_int(slot, "MyCurrentTime") or lookup_int(slot, "LastHeardFrom") or now
    return format_duration(clock - entered)


def state_view(slots: Sequence[ClassAd], now: int) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("Name", -34), Column("Cpu", 3), Column("Mem", 5), Column("LoadAv", 6),
               Column("    KbdIdle", 11), Column("State", -10), Column("    StateTime", 13),
               Column("Activ", -5), Column("  ActvtyTime", 12)]
    rows = [[_text(s, "Name"), _int(s, "Cpus"), _int(s, "Memory"), _load(s),
             format_duration(lookup_int(s, "KeyboardIdle") or 0), _text(s, "State"),
             _since(s, "EnteredCurrentState", now), _text(s, "Activity")[:4], _since(s, "EnteredCurrentActivity", now)]
            for s in slots]
    return columns, rows


def server_view(slots: Sequence[ClassAd]) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("Name", -34), Column("OpSys", -10), Column("Arch", -8), Column("LoadAv", 6),
               Column("Mem", 8), Column("Disk", 10), Column("Mips", 8), Column("KFlops", 9)]
    rows = [[_text(s, "Name"), _text(s, "OpSys"), _text(s, "Arch"), _load(s), _int(s, "Memory"),
             _int(s, "Disk"), _int(s, "Mips"), _int(s, "KFlops")] for s in slots]
    return columns, rows


def _initials(slot: ClassAd) -> str:
    return (_text(slot, "State")[:1] + _text(slot, "Activity")[:1]).replace("?", "")


def gpus_view(slots: Sequence[ClassAd]) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("Name", -34), Column("ST", -2), Column("User", -20), Column("GPUs", 4),
               Column("GPU-Memory", 10), Column("GPU-Name", 0)]
    rows = []
    for s in slots:
        if not (lookup_int(s, "GPUs") or lookup_int(s, "TotalGPUs")):
            continue
        memory = lookup_int(s, "GPUs_GlobalMemoryMb")
        rows.append([_text(s, "Name"), _initials(s), lookup_str(s, "RemoteUser") or "",
                     _int(s, "GPUs"), "" if memory is None else f"{memory / 1024:.1f} GB",
                     lookup_str(s, "GPUs_DeviceName") or ""])
    return columns, rows


def compact_view(slots: Sequence[ClassAd]) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("Machine", -24), Column("Platform", -12), Column("Slots", 5), Column("Cpus", 4),
               Column("Gpus", 4), Column("TotalGb", 7), Column("FreCpu", 6), Column("FreeGb", 7),
               Column("CpuLoad", 7), Column("ST", -2), Column("Jobs", 4)]
    machines: dict[str, list[ClassAd]] = {}
    for s in slots:
        machines.setdefault(_text(s, "Machine"), []).append(s)
    rows = []
    for machine, group in machines.items():
        parents = [s for s in group if lookup_bool(s, "PartitionableSlot") is True] or group
        dynamic = [s for s in group if lookup_bool(s, "DynamicSlot") is True]
        cpus = sum(lookup_int(s, "TotalSlotCpus") or lookup_int(s, "Cpus") or 0 for s in parents)
        total_mb = sum(lookup_int(s, "TotalSlotMemory") or lookup_int(s, "Memory") or 0 for s in parents)
        free_cpus = sum(lookup_int(s, "Cpus") or 0 for s in parents if s.get("State") == "Unclaimed")
        free_mb = sum(lookup_int(s, "Memory") or 0 for s in parents if s.get("State") == "Unclaimed")
        load = sum(lookup_float(s, "CondorLoadAvg") or 0.0 for s in group)
        gpus = sum(lookup_int(s, "TotalSlotGPUs") or lookup_int(s, "GPUs") or 0 for s in parents)
        first = group[0]
        platform = f"{_text(first, 'Arch').lower()}/{_text(first, 'OpSys')}"
        jobs = len(dynamic) + sum(1 for s in group if lookup_bool(s, "PartitionableSlot") is not True
                                  and lookup_bool(s, "DynamicSlot") is not True and s.get("State") == "Claimed")
        rows.append([machine, platform, str(len(parents) + len(dynamic)), str(cpus), str(gpus),
                     f"{total_mb / 1024:.2f}", str(free_cpus), f"{free_mb / 1024:.2f}", f"{load:.2f}",
                     _initials(parents[0]), str(jobs)])
    return columns, rows
