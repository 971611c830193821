"""The job's process family as its starter sees it: the subreaper, the strays, the leader's end.

``become_subreaper`` makes the starter adopt whatever the job orphans (Linux
``PR_SET_CHILD_SUBREAPER``), so those processes stay its descendants; ``signal_strays`` signals
the descendants that left the job's process group (``setsid``) and ``job_process_count`` counts
the live ones; ``exit_watch`` waits for the leader's end on a pidfd (naps where the kernel has
none), ``leader_exited`` checks it, and ``reap_family`` kills and reaps what the job left.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time
from collections.abc import Callable

import psutil

from htcpool.runtime.confined import JobConfinement

_PR_SET_CHILD_SUBREAPER = 36
_CLEANUP_DEADLINE = 5.0


def signal_strays(pgid: int, sig: int) -> int:
    """``sig`` to this process's live descendants outside process group ``pgid``: job
    processes that made their own session or group, still held here as the subreaper.
    Returns how many were signalled."""
    count = 0
    try:
        tree = psutil.Process().children(recursive=True)
    except psutil.Error:
        return 0
    for proc in tree:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE or os.getpgid(proc.pid) == pgid:
                continue
            os.kill(proc.pid, sig)
            count += 1
        except (psutil.Error, ProcessLookupError, PermissionError):
            pass
    return count


def job_process_count() -> int:
    """How many live processes the job has (this starter's descendants), at least 1."""
    try:
        tree = psutil.Process().children(recursive=True)
    except psutil.Error:
        return 1
    alive = 0
    for proc in tree:
        try:
            alive += proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            pass
    return max(1, alive)


def leader_exited(pid: int) -> bool:
    """Whether the job's leader exited (left unreaped); reaps adopted orphans on the way."""
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if found is None or found.si_pid == 0:
            return False
        if found.si_pid == pid:
            return True
        with contextlib.suppress(ChildProcessError):
            os.waitpid(found.si_pid, 0)


def reap_family(pgid: int, confinement: JobConfinement) -> None:
    """After the leader is reaped: SIGKILL what is left of its group, and the descendants that
    left it, until all are gone, reaping adopted members. With a cgroup, the cgroup's emptiness
    says whether anything of the job is left, and the cgroup's kill reaches what left the group:
    no walk of the process table."""
    deadline = time.monotonic() + _CLEANUP_DEADLINE
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        empty = confinement.empty()
        strays = signal_strays(pgid, signal.SIGKILL) if empty is None else 0
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if empty or (empty is None and not strays):
                return
            if empty is False:
                confinement.kill_all(patience=0)
        time.sleep(0.01)


def become_subreaper() -> None:
    """Adopt orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``); a no-op elsewhere."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def exit_watch(pid: int) -> Callable[[float | None], None]:
    """A wait that ends when the leader exits or after the seconds given (None: release the watch).
    Through a pidfd where the kernel has them, so the job's end is seen at once; else naps of at
    most 50 ms. Orphans adopted meanwhile are reaped at the next look (``_leader_exited``)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return lambda seconds: time.sleep(min(0.05, seconds)) if seconds is not None else None

    def wait(seconds: float | None) -> None:
        if seconds is None:
            os.close(pidfd)
        else:
            select.select([pidfd], [], [], min(seconds, 1.0))

    return wait


__all__ = ["become_subreaper", "exit_watch", "job_process_count", "leader_exited", "reap_family", "signal_strays"]
