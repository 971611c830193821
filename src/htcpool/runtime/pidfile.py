"""Pid files that name one process, not just a number the kernel may give to another.

A pid file holds ``<pid> <start>``: the process id and the process's start time as the kernel
keeps it (on Linux the ``starttime`` field of ``/proc/<pid>/stat``, in clock ticks since boot,
exact; elsewhere psutil's creation time, compared to within a second). A pid file is *live*
only while a process with that pid exists and started at that time; once the process is gone
and its pid is reused, the file is stale and names nobody. A file with a pid alone (written by
an older htcpool) cannot be checked and counts as stale.

``signal_identified`` signals a process only if it is still the one the file named: on Linux it
opens a pidfd first and checks the start time through it, so the pid cannot be reused between
the check and the signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil

_LINUX = sys.platform.startswith("linux")


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process: its pid and when it started (``start_of``'s units)."""

    pid: int
    start: float

    def text(self) -> str:
        return f"{self.pid} {self.start!r}\n"


def start_of(pid: int) -> float | None:
    """When the process ``pid`` started; None when there is no such process or it has ended and
    only waits to be reaped (a zombie)."""
    if _LINUX:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and ')'
        try:
            # field 3 of the line is the state, field 22 the start in clock ticks since boot
            return None if fields[0] in ("Z", "X") else float(fields[19])
        except (IndexError, ValueError):
            return None
    try:
        process = psutil.Process(pid)
        return None if process.status() == psutil.STATUS_ZOMBIE else float(process.create_time())
    except (psutil.Error, OSError):
        return None


def identity_of(pid: int) -> ProcessIdentity | None:
    start = start_of(pid)
    return None if start is None else ProcessIdentity(pid, start)


def _same_start(recorded: float, now: float) -> bool:
    return recorded == now if _LINUX else abs(recorded - now) < 1.0


def is_live(identity: ProcessIdentity) -> bool:
    """The process ``identity`` names still runs (its pid has not gone to another process)."""
    start = start_of(identity.pid)
    return start is not None and _same_start(identity.start, start)


def write_pid_file(path: Path, pid: int) -> ProcessIdentity | None:
    """Record the process ``pid`` in ``path`` (atomically); None, and nothing written, when the
    process is already gone."""
    identity = identity_of(pid)
    if identity is None:
        return None
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(identity.text())
    os.replace(tmp, path)
    return identity


def read_pid_file(path: Path) -> ProcessIdentity | None:
    """What ``path`` records; None when it is absent or not of the form ``<pid> <start>``."""
    try:
        words = path.read_text().split()
    except OSError:
        return None
    if len(words) != 2:
        return None
    try:
        pid, start = int(words[0]), float(words[1])
    except ValueError:
        return None
    return ProcessIdentity(pid, start) if pid > 0 else None


def live_pid(path: Path) -> int | None:
    """The pid ``path`` records when that process still runs; None for a stale or absent file."""
    identity = read_pid_file(path)
    return identity.pid if identity is not None and is_live(identity) else None


def remove_pid_file(path: Path, pid: int | None = None) -> None:
    """Remove ``path`` (only if it records ``pid``, when one is given)."""
    if pid is not None:
        identity = read_pid_file(path)
        if identity is None or identity.pid != pid:
            return
    with contextlib.suppress(OSError):
        path.unlink()


def signal_identified(identity: ProcessIdentity, sig: int) -> bool:
    """Send ``sig`` to the process ``identity`` names if it is still that process; False when it
    is gone (or its pid now belongs to another process, which is left alone)."""
    if _LINUX and hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(identity.pid)
        except OSError:
            return False
        try:
            if not is_live(identity):  # the pid went to another process before the pidfd was opened
                return False  # (from here on the signal goes through the pidfd: to this process or none)
            signal.pidfd_send_signal(fd, sig)
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
    if not is_live(identity):
        return False
    try:
        os.kill(identity.pid, sig)
    except OSError:
        return False
    return True
