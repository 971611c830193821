"""Kernel confinement of one job: its own cgroup, limits from the slot, usage, OOM, the final kill.

HTCondor's starter puts every job in a cgroup of its own (the HTCondor manual, "Policy
Configuration for Execution Points": "Cgroup Based Process Tracking" and "Limiting Resource
Usage Using Cgroups"). This module does the same for htcpool's starter, on both layouts of
the cgroup file system:

* **v2** (one unified hierarchy: ``<root>/cgroup.controllers`` lists ``memory``): the job's
  cgroup is ``<root>/<BASE_CGROUP>/<name>``; the memory and cpu controllers are enabled in
  ``cgroup.subtree_control`` of the root and of the base. Limits: ``memory.max`` (hard),
  ``memory.high`` (soft), ``memory.low`` (custom low), ``memory.swap.max = 0`` without swap,
  ``cpu.weight``. Usage: ``memory.current`` less the page cache (``file`` of
  ``memory.stat``), ``cpu.stat``; OOM kills are counted in ``memory.events``.
* **v1** (one hierarchy per controller: ``<root>/memory``, ``<root>/cpu``, ``<root>/cpuacct``,
  ``<root>/freezer``): the job gets ``<root>/<controller>/<BASE_CGROUP>/<name>`` in each that
  is mounted. Limits: ``memory.limit_in_bytes`` (hard), ``memory.soft_limit_in_bytes``,
  ``memory.memsw.limit_in_bytes`` equal to the hard limit without swap, ``cpu.shares``.
  Usage: ``memory.usage_in_bytes`` less ``total_cache``, ``cpuacct.stat``; OOM kills are
  ``oom_kill`` of ``memory.oom_control`` (``under_oom`` on kernels without that count).

``memory_limits`` turns ``CGROUP_MEMORY_LIMIT_POLICY`` and the slot's ``Memory`` into limits
(pure). ``detect`` says which layout a machine has, or why there is none usable.
``JobCgroup`` makes the cgroup (``create``), takes a process (``join``), reads
``usage``, kills every process in it (``kill_all``: ``cgroup.kill`` on v2, else the v1
freezer around SIGKILL of every pid in ``cgroup.procs``; never the calling process) and removes
it (``remove``); the starter's use of it is ``confined``, the moves of processes between
cgroups ``cgroup_moves``. Nothing here reads ClassAds: the starter imports it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

DEFAULT_ROOT = "/sys/fs/cgroup"
MB = 1024 * 1024
V1_CONTROLLERS = ("memory", "cpu", "cpuacct", "freezer")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class CgroupError(OSError):
    """A cgroup could not be made, limited, read or removed (the message says which file)."""


class CgroupVersion(StrEnum):
    V1 = "v1"
    V2 = "v2"


#: where a process moves itself (``0``) on each layout (``JobCgroup.entry_files``)
MOVE_FILE = {CgroupVersion.V1: "tasks", CgroupVersion.V2: "cgroup.procs"}


class MemoryPolicy(StrEnum):
    """``CGROUP_MEMORY_LIMIT_POLICY``."""

    HARD = "hard"
    SOFT = "soft"
    CUSTOM = "custom"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """Limits in MiB; None leaves the kernel's default (no limit). ``soft_mb`` is v1's soft limit
    (reclaimed first under pressure), ``high_mb`` v2's throttle (``memory.high``)."""

    hard_mb: int | None = None
    soft_mb: int | None = None
    low_mb: int | None = None
    high_mb: int | None = None


def memory_limits(policy: MemoryPolicy, slot_mb: int, machine_mb: int,
                  custom_hard_mb: int | None = None, custom_low_mb: int | None = None) -> MemoryLimits:
    """The limits of a job on a slot of ``slot_mb`` on a machine of ``machine_mb``: hard (the slot;
    90 % of it as the soft limit), soft (the slot soft, the machine hard), custom (the values of
    ``CGROUP_HARD_MEMORY_LIMIT_EXPR`` and ``CGROUP_LOW_MEMORY_LIMIT_EXPR``) or none."""
    if policy is MemoryPolicy.HARD:
        return MemoryLimits(hard_mb=slot_mb, soft_mb=int(slot_mb * 0.9))
    if policy is MemoryPolicy.SOFT:
        return MemoryLimits(hard_mb=max(slot_mb, machine_mb), soft_mb=slot_mb, high_mb=slot_mb)
    if policy is MemoryPolicy.CUSTOM:
        return MemoryLimits(hard_mb=custom_hard_mb, low_mb=custom_low_mb)
    return MemoryLimits()


@dataclass(frozen=True, slots=True)
class CgroupSpec:
    """What the starter needs to confine one job (travels in the launch description)."""

    root: str
    version: CgroupVersion
    base: str
    name: str
    limits: MemoryLimits = MemoryLimits()
    cpu_weight: int = 100  # per core of the slot, as HTCondor's cpu.shares = Cpus * 100
    disable_swap: bool = True
    ignore_cache: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> CgroupSpec | None:
        """The spec ``to_json`` wrote; None for no confinement; ValueError for a malformed one."""
        if not data:
            return None
        try:
            limits = dict(data.get("limits") or {})
            return cls(root=str(data["root"]), version=CgroupVersion(data["version"]),
                       base=str(data["base"]), name=str(data["name"]),
                       limits=MemoryLimits(**{k: None if v is None else int(v) for k, v in limits.items()}),
                       cpu_weight=int(data.get("cpu_weight", 100)),
                       disable_swap=bool(data.get("disable_swap", True)),
                       ignore_cache=bool(data.get("ignore_cache", True)))
        except (KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"malformed cgroup description: {e!r}") from None


@dataclass(frozen=True, slots=True)
class Detected:
    """What ``detect`` found: a usable layout, or None and the reason why not."""

    version: CgroupVersion | None
    reason: str = ""


def detect(root: str = DEFAULT_ROOT, base: str = "htcondor", *, euid: int | None = None) -> Detected:
    """Which cgroup layout this machine offers the startd, making ``base`` to prove it writable."""
    if not base.strip("/"):
        return Detected(None, "BASE_CGROUP is empty, which turns cgroups off")
    if (os.geteuid() if euid is None else euid) != 0:
        return Detected(None, "the startd does not run as root")
    controllers = _read(os.path.join(root, "cgroup.controllers"))
    if controllers is not None and "memory" in controllers.split():
        version, probe = CgroupVersion.V2, os.path.join(root, base.strip("/"))
    elif os.path.isfile(os.path.join(root, "memory", "memory.limit_in_bytes")):
        version, probe = CgroupVersion.V1, os.path.join(root, "memory", base.strip("/"))
    else:
        return Detected(None, f"no cgroup v2 memory controller and no v1 memory hierarchy under {root}")
    try:
        os.makedirs(probe, exist_ok=True)
        if version is CgroupVersion.V2:
            _enable_v2_controllers(root, base.strip("/"))
    except OSError as e:
        return Detected(None, f"cannot create the cgroup {probe}: {e.strerror or e}")
    return Detected(version)


def _enable_v2_controllers(root: str, base: str) -> None:
    path = root
    for part in ("", *base.split("/")):
        path = os.path.join(path, part) if part else path
        available = (_read(os.path.join(path, "cgroup.controllers")) or "").split()
        wanted = " ".join(f"+{c}" for c in ("memory", "cpu") if c in available)
        if wanted:
            _write(os.path.join(path, "cgroup.subtree_control"), wanted)


@dataclass(frozen=True, slots=True)
class CgroupUsage:
    """One reading of a job's cgroup."""

    memory_bytes: int  # current use, less the page cache when ignore_cache
    user_cpu: float  # seconds, every process the cgroup ever held
    sys_cpu: float
    oom_kills: int
    processes: int


class JobCgroup:
    """The cgroup(s) of one job."""

    def __init__(self, spec: CgroupSpec) -> None:
        self.spec = spec
        rel = os.path.join(spec.base.strip("/"), spec.name)
        if spec.version is CgroupVersion.V2:
            self.dirs = {"unified": os.path.join(spec.root, rel)}
        else:
            self.dirs = {c: os.path.join(spec.root, c, rel) for c in V1_CONTROLLERS
                         if os.path.isdir(os.path.join(spec.root, c))}
        self.memory_dir = self.dirs.get("unified") or self.dirs.get("memory", "")
        self.problems: list[str] = []  # limits the kernel refused (the job runs without them)

    # -- life
    def create(self) -> None:
        """Make the cgroup and set its limits; CgroupError when it cannot be made at all."""
        for path in self.dirs.values():
            try:
                os.makedirs(path, exist_ok=True)
            except OSError as e:
                self.remove()
                raise CgroupError(e.errno, f"cannot create the cgroup {path}: {e.strerror}") from None
        for file, value in self._settings():
            try:
                _write(file, value)
            except OSError as e:
                self.problems.append(f"the kernel refused {value} for {file}: {e.strerror or e}")

    def _settings(self) -> list[tuple[str, str]]:
        s, lim = self.spec, self.spec.limits
        out: list[tuple[str, str]] = []
        if s.version is CgroupVersion.V2:
            d = self.dirs["unified"]
            for value, file in ((lim.hard_mb, "memory.max"), (lim.high_mb, "memory.high"),
                                (lim.low_mb, "memory.low")):
                if value is not None:
                    out.append((os.path.join(d, file), str(value * MB)))
            if s.disable_swap and lim.hard_mb is not None:
                out.append((os.path.join(d, "memory.swap.max"), "0"))
            out.append((os.path.join(d, "cpu.weight"), str(max(1, min(10000, s.cpu_weight)))))
            return out
        memory, cpu = self.dirs.get("memory"), self.dirs.get("cpu")
        if memory:
            if lim.hard_mb is not None:
                out.append((os.path.join(memory, "memory.limit_in_bytes"), str(lim.hard_mb * MB)))
                if s.disable_swap and os.path.exists(os.path.join(memory, "memory.memsw.limit_in_bytes")):
                    out.append((os.path.join(memory, "memory.memsw.limit_in_bytes"), str(lim.hard_mb * MB)))
            soft = lim.soft_mb if lim.soft_mb is not None else lim.low_mb
            if soft is not None:
                out.append((os.path.join(memory, "memory.soft_limit_in_bytes"), str(soft * MB)))
        if cpu:
            out.append((os.path.join(cpu, "cpu.shares"), str(max(2, s.cpu_weight))))
        return out

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` a process writes its pid into to join every hierarchy."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def entry_files(self) -> list[str]:
        """The files a process writes ``0`` into to move itself into every hierarchy: on v1 the
        ``tasks`` file, which moves the writing thread alone (the whole of a process that has one)
        without the kernel's wait for an RCU grace period that a whole-process move takes
        (``cgroup_moves``); on v2, where a thread cannot leave its process's domain, ``cgroup.procs``."""
        name = MOVE_FILE[self.spec.version]
        return [os.path.join(d, name) for d in self.dirs.values()]

    def join(self, pid: int) -> None:
        for file in self.procs_files():
            _write(file, str(pid))

    # -- reading
    def pids(self) -> list[int]:
        text = _read(os.path.join(self.memory_dir, "cgroup.procs")) or ""
        return [int(p) for p in text.split() if p.isdigit()]

    def usage(self) -> CgroupUsage:
        """The cgroup's memory, CPU time and OOM kills now; CgroupError if it cannot be read."""
        try:
            if self.spec.version is CgroupVersion.V2:
                return self._usage_v2()
            return self._usage_v1()
        except (OSError, ValueError) as e:
            raise CgroupError(0, f"cannot read the cgroup {self.memory_dir}: {e}") from None

    def _usage_v2(self) -> CgroupUsage:
        d = self.dirs["unified"]
        current = int(_must(os.path.join(d, "memory.current")))
        stat = _keyed(_read(os.path.join(d, "memory.stat")) or "")
        if self.spec.ignore_cache:
            current = max(0, current - stat.get("file", 0))
        cpu = _keyed(_read(os.path.join(d, "cpu.stat")) or "")
        events = _keyed(_read(os.path.join(d, "memory.events")) or "")
        return CgroupUsage(current, cpu.get("user_usec", 0) / 1e6, cpu.get("system_usec", 0) / 1e6,
                           events.get("oom_kill", 0), len(self.pids()))

    def _usage_v1(self) -> CgroupUsage:
        memory = self.dirs["memory"]
        current = int(_must(os.path.join(memory, "memory.usage_in_bytes")))
        stat = _keyed(_read(os.path.join(memory, "memory.stat")) or "")
        if self.spec.ignore_cache:
            current = max(0, current - stat.get("total_cache", stat.get("cache", 0)))
        user = system = 0.0
        acct = self.dirs.get("cpuacct")
        if acct:
            times = _keyed(_read(os.path.join(acct, "cpuacct.stat")) or "")
            user, system = times.get("user", 0) / _TICKS, times.get("system", 0) / _TICKS
        oom = _keyed(_read(os.path.join(memory, "memory.oom_control")) or "")
        kills = oom.get("oom_kill", oom.get("under_oom", 0))  # older kernels lack the count
        return CgroupUsage(current, user, system, kills, len(self.pids()))

    def peak_bytes(self) -> int:
        """The most memory the cgroup ever held, by the kernel's count (0 when it keeps none)."""
        name = "memory.peak" if self.spec.version is CgroupVersion.V2 else "memory.max_usage_in_bytes"
        text = _read(os.path.join(self.memory_dir, name)) or ""
        return int(text) if text.strip().isdigit() else 0

    # -- the end
    def kill_all(self, patience: float = 5.0) -> bool:
        """SIGKILL every process of the job until none is left; True when it is empty."""
        kill_file = os.path.join(self.dirs.get("unified", ""), "cgroup.kill")
        freezer = self.dirs.get("freezer")
        deadline = time.monotonic() + patience
        me = os.getpid()
        while True:
            found = self.members()
            pids = [p for p in found if p != me]
            if not pids:
                return True
            if me in found:  # never itself (a starter the kernel kept inside): one by one, nothing frozen
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            elif self.spec.version is CgroupVersion.V2 and os.path.exists(kill_file):
                with contextlib.suppress(OSError):
                    _write(kill_file, "1")
            else:
                self._freeze(freezer, "FROZEN")
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                self._freeze(freezer, "THAWED")
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def members(self) -> list[int]:
        """Every live process in the job's cgroups and the cgroups below them."""
        found: set[int] = set()
        for path in self.dirs.values():
            for dirpath, _, _ in os.walk(path):
                text = _read(os.path.join(dirpath, "cgroup.procs")) or ""
                found.update(int(p) for p in text.split() if p.isdigit())
        return sorted(found)

    @staticmethod
    def _freeze(freezer: str | None, state: str) -> None:
        if freezer:
            with contextlib.suppress(OSError):
                _write(os.path.join(freezer, "freezer.state"), state)

    def remove(self) -> None:
        """Remove the cgroup (deepest first: a job may have made its own children)."""
        for path in self.dirs.values():
            for dirpath, _, _ in sorted(os.walk(path), key=lambda w: -w[0].count(os.sep)):
                with contextlib.suppress(OSError):
                    os.rmdir(dirpath)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _must(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _keyed(text: str) -> dict[str, int]:
    """``name value`` lines (memory.stat, cpu.stat, memory.events, oom_control) as a dict."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


__all__ = [
    "CgroupError", "CgroupSpec", "CgroupUsage", "CgroupVersion", "Detected", "JobCgroup",
    "MemoryLimits", "MemoryPolicy", "detect", "memory_limits",
]
