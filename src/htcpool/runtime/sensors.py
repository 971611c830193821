"""What the startd measures about its machine: load, owner activity, memory, disk.

A ``SensorSource`` answers ``read(now)`` with ``SensorReadings`` (the startd
core's message). The startd fills ``condor_load`` itself from its starters'
usage events, so sources leave it empty.

``HostSensors`` reads the machine it runs on:

* ``load_avg``: the one-minute load average (``os.getloadavg``, else psutil's);
* ``keyboard_idle`` and ``console_idle``: seconds since the newest access time
  of the owner's devices. As in HTCondor, keyboard idle looks at the terminals
  of logged-in users (``psutil.users()``, ``/dev/<terminal>``) and the console
  devices; console idle only at the console devices, here the readable entries
  of ``/dev/input``. Either is None when the machine shows none of its devices;
* ``memory``: total physical memory in MiB;
* ``disk``: free KiB on the partition of the execute directory;
* ``swap``: free swap plus free memory in KiB (what the slot ads call VirtualMemory).

A reading that fails is left at None (or 0.0 for the load) rather than raised.

``ScriptedSensors`` lets tests and demonstrations play the machine owner: it
reads a JSON file on every call, e.g. ``{"load_avg": 0.2, "keyboard_active_at":
1718000000}``. Keys it understands are ``load_avg``, ``keyboard_active_at`` and
``console_active_at`` (epoch seconds of the owner's last activity; the idle time
is ``now`` minus that, never negative), ``memory``, ``disk`` and ``swap``. A key
that is missing or not a number, and every key when the file is absent or not
a JSON object, comes from the fallback source.

``benchmark`` times two short loops for the slots' ``Mips`` and ``KFlops``
(the core asks for it through ``RunBenchmarks``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Iterable
from typing import Any, Protocol

import psutil

from htcpool.classad import as_number
from htcpool.protocol.startd import SensorReadings

_MIB = 1024 * 1024


class SensorSource(Protocol):
    """Anything that can say what the machine looks like at ``now`` (epoch seconds)."""

    def read(self, now: float) -> SensorReadings: ...


def newest_access(paths: Iterable[str]) -> float | None:
    """The latest access time among ``paths`` that can be looked at, or None."""
    newest: float | None = None
    for path in paths:
        try:
            atime = os.stat(path).st_atime
        except OSError:
            continue
        newest = atime if newest is None else max(newest, atime)
    return newest


def _idle(now: float, last_active: float | None) -> float | None:
    return None if last_active is None else max(0.0, now - last_active)


class HostSensors:
    """Readings of this host; ``execute_dir`` is where starters make scratch directories."""

    def __init__(self, execute_dir: str, device_dir: str = "/dev") -> None:
        self.execute_dir = execute_dir
        self.device_dir = device_dir

    def read(self, now: float) -> SensorReadings:
        console = self.console_devices()
        return SensorReadings(
            load_avg=self.load_average(),
            keyboard_idle=_idle(now, newest_access([*self.user_terminals(), *console])),
            console_idle=_idle(now, newest_access(console)),
            memory=self.memory_mib(),
            disk=self.disk_free_kib(),
            swap=self.swap_kib(),
        )

    def user_terminals(self) -> list[str]:
        """Device paths of the terminals logged-in users sit at."""
        try:
            users = psutil.users()
        except (OSError, psutil.Error):
            return []
        terminals = {u.terminal for u in users if u.terminal}
        return [os.path.join(self.device_dir, t) for t in sorted(terminals)]

    def console_devices(self) -> list[str]:
        """The input devices (keyboards, mice) under ``<device_dir>/input``."""
        directory = os.path.join(self.device_dir, "input")
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return []
        return [os.path.join(directory, n) for n in names]

    @staticmethod
    def load_average() -> float:
        try:
            return float(os.getloadavg()[0])
        except (OSError, AttributeError):
            pass
        try:
            return float(psutil.getloadavg()[0])
        except (OSError, AttributeError, psutil.Error):
            return 0.0

    @staticmethod
    def memory_mib() -> int | None:
        try:
            return int(psutil.virtual_memory().total // _MIB)
        except (OSError, psutil.Error):
            return None

    def disk_free_kib(self) -> int | None:
        try:
            return shutil.disk_usage(self.execute_dir).free // 1024
        except OSError:
            return None

    @staticmethod
    def swap_kib() -> int | None:
        try:
            return int((psutil.swap_memory().free + psutil.virtual_memory().free) // 1024)
        except (OSError, RuntimeError, psutil.Error):
            return None


class FixedSensors:
    """The same readings every time (a fallback for tests and for ``ScriptedSensors``)."""

    def __init__(self, readings: SensorReadings | None = None) -> None:
        self.readings = readings or SensorReadings()

    def read(self, now: float) -> SensorReadings:
        return self.readings


class ScriptedSensors:
    """Readings from a JSON file that may come, go or change at any time, over a fallback."""

    def __init__(self, path: str | os.PathLike[str], fallback: SensorSource | None = None) -> None:
        self.path = os.fspath(path)
        self.fallback: SensorSource = fallback if fallback is not None else FixedSensors()

    def script(self) -> dict[str, Any]:
        """The file's object; empty when the file is absent, unreadable or not a JSON object."""
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def read(self, now: float) -> SensorReadings:
        readings = self.fallback.read(now)
        script = self.script()
        changes: dict[str, Any] = {}
        load = as_number(script.get("load_avg"))
        if load is not None:
            changes["load_avg"] = float(load)
        for key, field in (("keyboard_active_at", "keyboard_idle"),
                           ("console_active_at", "console_idle")):
            when = as_number(script.get(key))
            if when is not None:
                changes[field] = _idle(now, when)
        for key in ("memory", "disk", "swap"):
            amount = as_number(script.get(key))
            if amount is not None:
                changes[key] = int(amount)
        return dataclasses.replace(readings, **changes) if changes else readings


def benchmark() -> tuple[int, int]:
    """A rough integer and floating-point speed (Mips and KFlops) from two short timed loops."""
    start = time.perf_counter()
    total = 0
    for i in range(100_000):
        total += i ^ (i >> 3)
    seconds = max(time.perf_counter() - start, 1e-6)
    mips = int(100_000 * 10 / seconds / 1e6) or 1
    start = time.perf_counter()
    x = 1.0
    for _ in range(100_000):
        x = x * 1.000001 + 0.5
    seconds = max(time.perf_counter() - start, 1e-6)
    return mips, int(100_000 * 2 / seconds / 1e3) or 1


__all__ = ["FixedSensors", "HostSensors", "ScriptedSensors", "SensorSource", "benchmark", "newest_access"]
