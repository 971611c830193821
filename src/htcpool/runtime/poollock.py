"""One master per local directory: an exclusive lock the master holds for its life.

HTCondor's master locks an instance lock file (``MASTER_INSTANCE_LOCK``, by default
``$(LOCK)/InstanceLock``) so that a second master on the same directories refuses to start.
htcpool's master does the same with ``flock`` on ``run/master.lock`` in the pool's local
directory. The kernel drops the lock when the master's process ends, however it ends, so a
master killed with SIGKILL leaves no stale lock behind; the lock file itself stays (removing
it would let two masters lock two different files). The descriptor is not inherited by the
daemons the master starts, so the lock is the master's alone. A refused master names the
holder from ``run/master.pid`` (``runtime/pidfile.py``), which the holder writes as soon as it
has the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from htcpool.runtime.pidfile import live_pid

LOCK_FILE = "master.lock"
#: the exit status of a master that found the pool's lock taken
EXIT_LOCKED = 3


class PoolLocked(RuntimeError):
    """Another master holds the pool's lock."""

    def __init__(self, root: Path, holder: int | None) -> None:
        self.root = root
        self.holder = holder
        who = f"master pid {holder}" if holder is not None else "another master"
        super().__init__(f"a pool is already running in {root} ({who}); stop it with `htcpool down` first")


class InstanceLock:
    """The exclusive lock on ``run/master.lock``, held until ``release`` or the process's end."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, run_dir: Path, pid_file: Path, *, patience: float = 2.0) -> InstanceLock:
        """Take the lock; ``PoolLocked`` naming the holder (from ``pid_file``) when another master
        has it after ``patience`` seconds of trying."""
        path = run_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + patience
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return cls(path, fd)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
            except OSError:
                os.close(fd)
                raise
        os.close(fd)
        raise PoolLocked(run_dir.parent, _holder(pid_file, patience))

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the only descriptor drops the lock
            self._fd = -1


def _holder(pid_file: Path, patience: float) -> int | None:
    """The running master's pid: the holder writes its pid file just after it takes the lock."""
    deadline = time.monotonic() + patience
    while True:
        pid = live_pid(pid_file)
        if pid is not None or time.monotonic() >= deadline:
            return pid
        time.sleep(0.05)
