"""Moving processes between cgroups: where this process is, where the starter goes back to,
and the kernel's wait for a move paid ahead of time.

The starter starts its job from inside the job's cgroup (``confined.CgroupEntry``): it writes
itself into the job's cgroup, forks the job, which is born there, and goes back to the cgroups
it came from, which ``home_entry_files`` names (``/proc/self/cgroup`` read against the cgroup
root of the job's spec; ``own_cgroups``).

A whole-process move (a pid written to ``cgroup.procs``) takes the kernel's lock on all
processes' cgroup membership; taking it after a pause first waits for an RCU grace period
(about 7 ms on the machine of ``docs/performance.md``), with the cgroup mutex held, so every
other cgroup's creation, removal and move waits as well. On v1 a thread moves itself through
the ``tasks`` file, which needs no such lock (0.3 ms for four hierarchies there, against 7.7):
the starter moves its one thread that forks the job, and the job's process, born where that
thread is, is all inside. A v2 domain takes whole processes only; ``prepare_move`` makes a move
there that changes nothing (this process into the cgroup it is in) for the wait alone, on a
worker thread of the startd as a job's start begins, so that the starter's moves a few
milliseconds later go through at once. (A cgroup file system mounted with ``favordynmods``, where
the kernel offers it, has no such wait, at some cost to every fork and exit.)
"""

from __future__ import annotations

import contextlib
import os

from htcpool.runtime.cgroups import MOVE_FILE, CgroupSpec, CgroupVersion, JobCgroup


def own_cgroups() -> dict[str, str]:
    """This process's cgroup path in each v1 hierarchy, by controller, and in the v2 one (key
    ``""``), from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f.read().splitlines():
            parts = line.split(":", 2)
            if len(parts) == 3:
                for controller in parts[1].split(","):
                    out[controller] = parts[2]
    return out


def _own_file(spec: CgroupSpec, own: dict[str, str], hierarchy: str, name: str) -> str | None:
    """The file ``name`` of this process's cgroup in one hierarchy of the spec's root (a v1
    controller, or ``unified``); None when it is not to be found there."""
    v2 = spec.version is CgroupVersion.V2
    rel = own.get("" if v2 else hierarchy)
    if rel is None:
        return None
    path = os.path.join(spec.root if v2 else os.path.join(spec.root, hierarchy), rel.lstrip("/"), name)
    return path if os.path.isfile(path) else None


def home_entry_files(cgroup: JobCgroup) -> list[str] | None:
    """The files that move the writer back into the cgroups this process is in now, one for each
    hierarchy of the job's (``JobCgroup.entry_files``' kind: ``tasks`` on v1); None when one
    cannot be found (a path this process does not see under the root)."""
    own = own_cgroups()
    name = MOVE_FILE[cgroup.spec.version]
    files = [_own_file(cgroup.spec, own, hierarchy, name) for hierarchy in cgroup.dirs]
    return None if None in files else [f for f in files if f is not None]


def needs_prepared_move(spec: CgroupSpec) -> bool:
    """Whether the starter's moves for ``spec`` wait for the kernel (whole-process moves: v2)."""
    return MOVE_FILE[spec.version] == "cgroup.procs"


def prepare_move(spec: CgroupSpec) -> None:
    """Write this process into the cgroup it is in (the memory hierarchy's on v1): a move that
    changes nothing, made for the kernel's wait (module docstring). Errors are ignored: the
    starter's moves then only cost their usual time."""
    path = _own_file(spec, own_cgroups(), "memory", "cgroup.procs")
    if path is not None:
        with contextlib.suppress(OSError), open(path, "w") as f:
            f.write("0")


__all__ = ["home_entry_files", "needs_prepared_move", "own_cgroups", "prepare_move"]
