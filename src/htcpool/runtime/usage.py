"""Measuring one job's usage in the starter, as HTCondor's starter reports it.

``JobUsageSampler.sample()`` gives one reading of the job (a dict that becomes the starter's
``usage`` event):

* ``rss_kb`` the job's resident memory now and ``rss_peak_kb`` the most seen so far
  (HTCondor's ``ResidentSetSize`` is that peak; ``MemoryUsage`` is it in MB, rounded up);
* ``image_size_kb`` the virtual size summed over the job's processes (``ImageSize``);
* ``user_cpu`` and ``sys_cpu`` in seconds (``RemoteUserCpu``, ``RemoteSysCpu``), never going
  down; ``cpus_usage`` the cores used on average since the job began (``CpusUsage``) and
  ``cpu_load`` the cores used since the previous reading (the slot's ``CondorLoadAvg``);
* ``disk_usage_kb`` the size of the scratch directory (``DiskUsage``), walked only when
  asked (``with_disk``), since a large sandbox costs a walk;
* ``oom_kills`` how many of the job's processes the kernel killed for its memory limit;
* ``gpus_usage`` and ``gpus_memory_mb`` for a job given NVIDIA devices (``GpuUsage``): the
  devices' utilisation averaged over the job's life (``GPUsUsage``: 1.0 is one device kept
  busy) and the most device memory seen in use, in MiB (``GPUsMemoryUsage``), read through
  NVML (``gpu_nvml.sample_usage``). Without the NVML binding the first job finds that out with
  one failed import, remembered for the process; a job whose devices NVML cannot read stops
  asking after the first failed reading. Jobs without devices never touch NVML.

Where the job has a cgroup (``cgroups.JobCgroup``) memory and CPU come from it: it counts
processes that left the job's session and those already gone, and reading it costs a few
small files however many processes the job has; the page cache is left out as
``CGROUP_IGNORE_CACHE_MEMORY`` says. Without one the starter's process tree is walked with
``/proc`` (each thread's ``children`` list, so the cost follows the job's processes, not the
machine's; psutil where the kernel lacks those lists). The starter is the job's subreaper, so
detached processes stay in its tree; a process that ends between two readings simply stops
counting: that is never an error.
"""

from __future__ import annotations

import os
import time
from typing import Any

import psutil

from htcpool.runtime import gpu_nvml
from htcpool.runtime.cgroups import CgroupError, JobCgroup

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def descendants(root: int) -> list[int] | None:
    """The pids below ``root``, from the kernel's per-thread ``children`` lists (a cost in the
    job's own processes, not the machine's); None where the kernel does not offer the lists."""
    if not os.path.exists(f"/proc/{root}/task/{root}/children"):
        return None
    found: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:  # it ended meanwhile
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            stack.extend(children)
    return found


def _proc_reading(pid: int) -> tuple[tuple[int, int], float, float, int, int] | None:
    """(pid, start) key, user and system CPU seconds (with reaped children), rss and vms bytes."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/statm") as f:
            pages = f.read().split()
    except (OSError, IndexError):
        return None
    try:
        user = (int(fields[11]) + int(fields[13])) / _TICKS
        system = (int(fields[12]) + int(fields[14])) / _TICKS
        return (pid, int(fields[19])), user, system, int(pages[1]) * _PAGE, int(pages[0]) * _PAGE
    except (IndexError, ValueError):
        return None


class ProcessTreeUsage:
    """CPU, memory and image size summed over this process's descendants (the job's tree).

    Processes are told apart by (pid, start time); CPU totals include what each process's
    reaped children used, and never go down. The tree comes from ``/proc`` (``descendants``),
    or from psutil's scan of every process where the kernel lacks the children lists.
    """

    def __init__(self) -> None:
        self.previous: dict[tuple[int, float], float] = {}
        self.user_cpu = self.sys_cpu = 0.0

    def sample(self) -> tuple[int, int, float]:
        """(rss bytes, vms bytes, CPU seconds used since the previous sample)."""
        pids = descendants(os.getpid())
        readings = [r for r in map(_proc_reading, pids) if r is not None] if pids is not None \
            else self._psutil_readings()
        current: dict[tuple[int, float], float] = {}
        busy = user = system = 0.0
        rss = vms = 0
        for key, proc_user, proc_system, proc_rss, proc_vms in readings:
            current[key] = proc_user + proc_system
            busy += max(0.0, current[key] - self.previous.get(key, 0.0))
            user += proc_user
            system += proc_system
            rss += proc_rss
            vms += proc_vms
        self.previous = current
        self.user_cpu = max(self.user_cpu, user)
        self.sys_cpu = max(self.sys_cpu, system)
        return rss, vms, busy

    @staticmethod
    def _psutil_readings() -> list[tuple[tuple[int, float], float, float, int, int]]:
        out = []
        try:
            tree = psutil.Process().children(recursive=True)
        except psutil.Error:
            return []
        for proc in tree:
            try:
                with proc.oneshot():
                    key = (proc.pid, proc.create_time())
                    times = proc.cpu_times()
                    memory = proc.memory_info()
            except psutil.Error:  # it ended while being measured
                continue
            out.append((key, times.user + times.children_user, times.system + times.children_system,
                        memory.rss, memory.vms))
        return out


def image_size_of(pids: list[int]) -> int:
    """Virtual size in bytes summed over ``pids`` (from ``/proc/<pid>/statm``)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[0]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def directory_size_kb(path: str) -> int:
    """KiB of the files under ``path`` (symbolic links not followed); 0 when it is gone."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return (total + 1023) // 1024


def assigned_devices(environment: dict[str, str]) -> tuple[str, ...]:
    """The NVIDIA uuids of the job's devices, from its environment: ``NVIDIA_VISIBLE_DEVICES``
    (HTCondor 25 puts the full ``GPU-``/``MIG-`` uuids there), else the uuids among
    ``CUDA_VISIBLE_DEVICES``; none for ``none``, ``void`` or indices only."""
    for name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        found = tuple(d.strip() for d in environment.get(name, "").split(",")
                      if d.strip().startswith(("GPU-", "MIG-")))
        if found:
            return found
    return ()


class GpuUsage:
    """``GPUsUsage`` and ``GPUsMemoryUsage`` of one job's devices (see the module docstring)."""

    #: whether this process already found the NVML binding missing (one failed import)
    binding_missing = False

    def __init__(self, devices: tuple[str, ...], started: float) -> None:
        self.devices = devices
        self.started = self.last = started
        self.busy_seconds = 0.0
        self.memory_peak_mb = 0.0
        self.seen = False

    def _binding(self) -> bool:
        if GpuUsage.binding_missing:
            return False
        try:
            import pynvml  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            GpuUsage.binding_missing = True
            return False
        return True

    def sample(self, now: float) -> dict[str, float]:
        """The job's GPU readings so far (empty when there are none)."""
        if self.devices and self._binding():
            reading = gpu_nvml.sample_usage(self.devices)
            if reading is None:
                self.devices = ()  # NVML cannot read them: stop asking
            else:
                self.busy_seconds += float(reading["GPUsUsage"]) * max(now - self.last, 0.0)
                self.memory_peak_mb = max(self.memory_peak_mb, float(reading["GPUsMemoryUsage"]))
                self.seen = True
        self.last = now
        return self.report()

    def report(self) -> dict[str, float]:
        """The readings as of the last sample, NVML not asked again (the job's totals at its end)."""
        if not self.seen:
            return {}
        lifetime = max(self.last - self.started, 1e-6)
        return {"gpus_usage": round(self.busy_seconds / lifetime, 4), "gpus_memory_mb": round(self.memory_peak_mb, 1)}


class UpdateSchedule:
    """When a reading is also a report: the first after ``initial_update_interval``
    (STARTER_INITIAL_UPDATE_INTERVAL), then every ``update_interval`` (STARTER_UPDATE_INTERVAL).
    Readings come every ``step``: CGROUP_POLLING_INTERVAL, or sooner when reports are due sooner."""

    def __init__(self, spec: Any, start: float | None = None) -> None:
        self.every = max(float(spec.update_interval), 0.05)
        self.step = max(min(float(spec.usage_interval), self.every, float(spec.initial_update_interval)), 0.05)
        self.next_at = (time.monotonic() if start is None else start) + max(float(spec.initial_update_interval), 0.0)

    def due(self, now: float) -> bool:
        if now + 1e-3 < self.next_at:
            return False
        self.next_at = now + self.every
        return True


class JobUsageSampler:
    """One job's readings over its run (see the module docstring)."""

    def __init__(self, scratch_dir: str, cgroup: JobCgroup | None = None, devices: tuple[str, ...] = ()) -> None:
        self.scratch_dir = scratch_dir
        self.cgroup = cgroup
        self.tree = ProcessTreeUsage()
        self.started = self.last = time.monotonic()
        self.gpus = GpuUsage(devices, self.started)
        self.cpu_total = 0.0
        self.user_cpu = self.sys_cpu = 0.0
        self.rss_peak_kb = 0
        self.image_size_kb = 0
        self.oom_kills = 0
        self.disk_usage_kb = 0

    def sample(self, with_disk: bool = False) -> dict[str, Any]:
        now = time.monotonic()
        elapsed = max(now - self.last, 1e-6)
        self.last = now
        rss, vms, busy = self._measure()
        self.rss_peak_kb = max(self.rss_peak_kb, rss // 1024)
        self.image_size_kb = max(self.image_size_kb, vms // 1024)
        if with_disk:
            self.disk_usage_kb = directory_size_kb(self.scratch_dir)
        reading: dict[str, Any] = {
            "cpu_load": round(busy / elapsed, 4), "rss_kb": rss // 1024, "rss_peak_kb": self.rss_peak_kb,
            "image_size_kb": self.image_size_kb, "user_cpu": round(self.user_cpu, 3),
            "sys_cpu": round(self.sys_cpu, 3), "cpus_usage": self.cpus_usage(now),
            "oom_kills": self.oom_kills, **self.gpus.sample(now)}
        if with_disk:
            reading["disk_usage_kb"] = self.disk_usage_kb
        return reading

    def cpus_usage(self, now: float | None = None) -> float:
        """Cores used on average since the job began."""
        lifetime = max((time.monotonic() if now is None else now) - self.started, 1e-6)
        return round((self.user_cpu + self.sys_cpu) / lifetime, 4)

    def _measure(self) -> tuple[int, int, float]:
        """(memory bytes, virtual bytes, CPU seconds since the last reading), from the cgroup when
        it can be read, else from the process tree."""
        if self.cgroup is not None:
            try:
                usage = self.cgroup.usage()
            except CgroupError:
                pass
            else:
                total = usage.user_cpu + usage.sys_cpu
                busy = max(0.0, total - self.cpu_total)
                self.cpu_total = max(self.cpu_total, total)
                self.user_cpu = max(self.user_cpu, usage.user_cpu)
                self.sys_cpu = max(self.sys_cpu, usage.sys_cpu)
                self.oom_kills = max(self.oom_kills, usage.oom_kills)
                return usage.memory_bytes, image_size_of(self.cgroup.pids()), busy
        rss, vms, busy = self.tree.sample()
        self.user_cpu = max(self.user_cpu, self.tree.user_cpu)
        self.sys_cpu = max(self.sys_cpu, self.tree.sys_cpu)
        return rss, vms, busy


__all__ = ["GpuUsage", "JobUsageSampler", "assigned_devices", "ProcessTreeUsage", "UpdateSchedule", "descendants", "directory_size_kb", "image_size_of"]
