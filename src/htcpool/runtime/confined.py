"""The starter's hold on its job's cgroup: made, entered, watched for OOM, released.

``JobConfinement(spec)`` makes the job's cgroup from the launch description
(``cgroups.JobCgroup``; none without a spec). Problems never stop the job: a cgroup that cannot
be made, or a job that could not enter it, leaves the job unconfined; a limit the kernel refuses
leaves it without that limit; each is kept in ``problems`` for the ``started`` event, which the
startd logs.

* ``joiner()`` is the ``preexec_fn`` of the job's process: between fork and exec the child
  writes itself into the cgroup (the files opened beforehand, so the child only writes), so
  nothing the job forks can be outside it; ``check_entered(pid)`` verifies it afterwards.
* ``oom_killed(count)`` is true once, the first time the kernel's OOM-kill count is above zero
  while the starter itself was not killing the job: the starter then kills the rest of the job
  and reports the limit and the peak (``report``) with its exit.
* ``kill_all`` and ``release`` empty the cgroup of every process (however it detached) and
  remove it, keeping the kernel's count of the peak for the report.
"""

from __future__ import annotations

import contextlib
import os

from htcpool.runtime.cgroups import MB, CgroupError, CgroupSpec, JobCgroup


class Joiner:
    """Puts the calling process into the job's cgroup: the ``preexec_fn`` of the job's process,
    run in the child between fork and exec. The files are opened beforehand, in the starter,
    so the child only writes (``0`` names the writer itself); a failure there is caught by the
    starter's check that the job is inside."""

    def __init__(self, cgroup: JobCgroup) -> None:
        self.fds: list[int] = []
        for file in cgroup.procs_files():
            try:
                self.fds.append(os.open(file, os.O_WRONLY))
            except OSError:
                continue

    def __call__(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.write(fd, b"0")

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


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

    def joiner(self) -> Joiner | None:
        return Joiner(self.cgroup) if self.cgroup is not None else None

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


__all__ = ["JobConfinement", "Joiner", "open_job_cgroup"]
