"""The starter's hold on its job's cgroup: made, entered, watched for OOM, released.

``JobConfinement(spec)`` makes the job's cgroup from the launch description
(``cgroups.JobCgroup``; none without a spec). Problems never stop the job: a cgroup that cannot
be made, or a job that could not enter it, leaves the job unconfined; a limit the kernel refuses
leaves it without that limit; each is kept in ``problems`` for the ``started`` event, which the
startd logs.

* ``entry()`` puts the job's first process into the cgroup before the job's first instruction,
  so nothing the job forks can be outside it (``CgroupEntry``: the starter steps into the
  cgroup around the job's start, or else the job's process joins between fork and exec);
  ``check_entered(pid)`` verifies it afterwards, ``empty()`` says whether anything of the job
  is left.
* ``oom_killed(count)`` is true once, the first time the kernel's OOM-kill count is above zero
  while the starter itself was not killing the job: the starter then kills the rest of the job
  and reports the limit and the peak (``report``) with its exit.
* ``kill_all`` and ``release`` empty the cgroup of every process (however it detached) and
  remove it, keeping the kernel's count of the peak for the report.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

from htcpool.runtime.cgroup_moves import home_entry_files
from htcpool.runtime.cgroups import MB, CgroupError, CgroupSpec, JobCgroup


class CgroupEntry:
    """How the job's first process gets into the job's cgroup, so that it and everything it starts
    is confined from its first instruction. The files are opened beforehand.

    * By the starter (``by_starter``, where the starter can find its own cgroups): around the
      job's start (``around``) the starter's thread writes itself into the job's cgroup and back
      into its own after (``JobCgroup.entry_files``: on v1 the thread alone, which is quick;
      its other threads, if any, stay home). The job's process is born where that thread is and
      runs no Python between fork and exec, so ``subprocess`` can use ``vfork``.
    * Otherwise by the job's process: ``hook`` is its ``preexec_fn``, which writes the process
      (one thread after the fork) into the cgroup between fork and exec (``0`` names the writer).

    A write that fails leaves the job outside, which the starter's check that the job is inside
    (``JobConfinement.check_entered``) catches."""

    def __init__(self, cgroup: JobCgroup, by_starter: bool) -> None:
        wanted = cgroup.entry_files()
        self.into = _open_all(wanted)
        home = home_entry_files(cgroup) if by_starter else None
        self.home = _open_all(home or [])
        self.by_starter = home is not None and len(self.home) == len(home) and len(self.into) == len(wanted)

    @property
    def hook(self) -> Callable[[], None] | None:
        """The ``preexec_fn`` that puts the job's process in the cgroup; None when the starter does."""
        return None if self.by_starter else self._join

    def _join(self) -> None:
        for fd in self.into:
            with contextlib.suppress(OSError):
                os.write(fd, b"0")

    @contextlib.contextmanager
    def around(self) -> Iterator[None]:
        """The starter inside the job's cgroup for the block (when ``by_starter``)."""
        if not self.by_starter:
            yield
            return
        try:
            self._join()
            yield
        finally:
            self._go_home()

    def _go_home(self) -> None:
        for fd in self.home:
            for attempt in range(3):
                try:
                    os.write(fd, b"0")
                    break
                except OSError as e:
                    if attempt == 2:  # its cgroup's kill_all spares it (``cgroups``)
                        print(f"starter: cannot leave the job's cgroup: {e}", file=sys.stderr, flush=True)

    def close(self) -> None:
        for fd in (*self.into, *self.home):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.into, self.home = [], []


def _open_all(files: list[str]) -> list[int]:
    """Each file opened for writing; those that cannot be are left out."""
    fds = []
    for file in files:
        with contextlib.suppress(OSError):
            fds.append(os.open(file, os.O_WRONLY))
    return fds


def open_job_cgroup(spec: CgroupSpec | None) -> tuple[JobCgroup | None, list[str]]:
    """The job's cgroup made from ``spec`` (None without one), and the problems met: a cgroup
    that cannot be made leaves the job unconfined; refused limits leave it without them."""
    if spec is None:
        return None, []
    cgroup = JobCgroup(spec)
    try:
        cgroup.create()
    except CgroupError as e:
        return None, [f"{e.strerror}; the job runs without kernel enforcement"]
    return cgroup, list(cgroup.problems)


class JobConfinement:
    """One job's cgroup in the starter (see the module docstring)."""

    def __init__(self, spec: CgroupSpec | None) -> None:
        self.cgroup, self.problems = open_job_cgroup(spec)
        self.oom = False
        self.peak_bytes = 0  # the kernel's count, read before the cgroup is removed

    def entry(self, by_starter: bool) -> CgroupEntry | None:
        """How the job enters its cgroup (``CgroupEntry``); None without one."""
        return CgroupEntry(self.cgroup, by_starter) if self.cgroup is not None else None

    def empty(self) -> bool | None:
        """Whether no process of the job is left in its cgroup; None without one."""
        return None if self.cgroup is None else not self.cgroup.members()

    def check_entered(self, pid: int) -> None:
        """The job must be in its cgroup; if it could not enter, it runs without one."""
        if self.cgroup is None or pid in self.cgroup.pids() or _gone(pid):
            return
        self.cgroup.remove()
        self.cgroup = None
        self.problems.append("the job could not be moved into its cgroup; it runs without kernel enforcement")

    def oom_killed(self, oom_kills: int, killing: bool) -> bool:
        """True the first time the kernel is seen to have OOM-killed a process of the job."""
        if self.cgroup is None or self.oom or killing or oom_kills <= 0:
            return False
        self.oom = True
        return True

    def kill_all(self, patience: float = 5.0) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all(patience)

    def release(self) -> None:
        """Kill what is left in the cgroup, reap, remove it."""
        if self.cgroup is None:
            return
        self.cgroup.kill_all()
        self.peak_bytes = self.cgroup.peak_bytes()
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        self.cgroup.remove()

    def report(self, rss_peak_kb: int) -> dict[str, int] | None:
        """The cgroup's limit and the job's peak in MB, when the job died of its limit."""
        if not self.oom or self.cgroup is None:
            return None
        peak = max(rss_peak_kb * 1024, self.peak_bytes, self.cgroup.peak_bytes())
        limit = self.cgroup.spec.limits.hard_mb
        return {"limit_mb": -1 if limit is None else limit, "usage_mb": (peak + MB - 1) // MB}


def _gone(pid: int) -> bool:
    """Whether the process has already ended (a zombie or no more): nothing left to confine."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


__all__ = ["CgroupEntry", "JobConfinement", "open_job_cgroup"]
