"""A daemon's tie to the master that started it: keep-alives up, the master's death down.

The master starts each daemon with two things in its environment: ``HTCPOOL_MASTER_PID``, its
own pid, and ``HTCPOOL_ALIVE_FD``, the write end of a pipe whose read end it keeps. The
daemon takes both out of its environment (so nothing it starts inherits them) and then:

* writes a keep-alive line (``runtime/liveness.py``) into the pipe once it has started (as
  HTCondor's daemons send their first once their main loop runs) and then every third of its
  ``NOT_RESPONDING_TIMEOUT``. The writes come from a task on the daemon's event loop,
  never from a thread: a daemon whose loop is stopped (SIGSTOP) or stuck in a long
  computation sends nothing, and its master takes it for hung. The pipe never blocks the
  loop: a full pipe (a master that does not read) drops the keep-alive;
* notices that its master is gone, however the master ended, and shuts down fast, as
  HTCondor's daemons do when their parent goes away: on Linux the kernel sends it SIGQUIT
  when the master dies (``PR_SET_PDEATHSIG``, asked for before the daemon starts its
  service); once started it also checks every second that its parent is still the master and
  treats a closed pipe the same way. A new master can then
  start the pool again without two sets of daemons on one queue.

A daemon started by a master also gets ``register_stack_dump``: SIGUSR2 writes every thread's
stack into its log (``faulthandler``, which does it in the signal handler itself, even while
the interpreter is busy in a long computation); the master asks for that before it kills a
hung daemon, the log then says what the daemon was doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import faulthandler
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import IO

from htcpool.runtime.liveness import encode_beat, keepalive_period

log = logging.getLogger("htcpool.daemon")
MASTER_PID_ENV = "HTCPOOL_MASTER_PID"
ALIVE_FD_ENV = "HTCPOOL_ALIVE_FD"
#: the signal the master sends for a dump of every thread's stack before it kills a hung daemon
DUMP_SIGNAL = signal.SIGUSR2
_PR_SET_PDEATHSIG = 1
_PARENT_POLL = 1.0  # seconds between looks at the parent


class MasterLink:
    """What a daemon knows of its master (nothing when it was not started by one)."""

    def __init__(self, master_pid: int | None, alive_fd: int | None, timeout: float) -> None:
        self.master_pid = master_pid
        self.alive_fd = alive_fd
        self.timeout = timeout

    @classmethod
    def from_environment(cls, environ: MutableMapping[str, str], timeout: float) -> MasterLink:
        """The link the master's environment variables describe; they are removed from ``environ``."""
        pid_text = environ.pop(MASTER_PID_ENV, "")
        fd_text = environ.pop(ALIVE_FD_ENV, "")
        master_pid = int(pid_text) if pid_text.isdigit() else None
        alive_fd = int(fd_text) if fd_text.isdigit() else None
        if alive_fd is not None:
            try:
                os.set_inheritable(alive_fd, False)
                os.set_blocking(alive_fd, False)
            except OSError:
                log.warning("%s names no open pipe (%s); sending no keep-alives", ALIVE_FD_ENV, fd_text)
                alive_fd = None
        return cls(master_pid, alive_fd, timeout)

    def master_gone(self) -> bool:
        return self.master_pid is not None and os.getppid() != self.master_pid

    def die_with_master(self) -> None:
        """Ask the kernel for SIGQUIT (a fast stop) when the master dies; at once, before the daemon
        starts its service, so that even a daemon still starting goes with its master."""
        if self.master_pid is not None:
            _die_with_parent(signal.SIGQUIT)

    def start(self, on_lost: Callable[[], None]) -> asyncio.Task[None] | None:
        """Watch the master and send keep-alives on the running loop; ``on_lost`` once the master is
        gone. None when there is no master to watch."""
        if self.master_pid is None and self.alive_fd is None:
            return None
        register_stack_dump(log_stream())  # what the master asks for before it kills a hung daemon
        return asyncio.get_running_loop().create_task(self._run(on_lost))

    def _beat(self) -> bool:
        """One keep-alive; False when the master's end of the pipe is closed."""
        if self.alive_fd is None:
            return True
        try:
            os.write(self.alive_fd, encode_beat(self.timeout))
        except BlockingIOError:
            pass  # the master is not reading: it will see the silence itself
        except OSError:  # EPIPE: nobody holds the read end any more
            return False
        return True

    async def _run(self, on_lost: Callable[[], None]) -> None:
        period = keepalive_period(self.timeout)
        next_beat = 0.0
        try:
            while True:
                if self.master_gone():
                    log.warning("the master (pid %d) went away; shutting down fast", self.master_pid)
                    on_lost()
                    return
                now = time.monotonic()
                if now >= next_beat:
                    if not self._beat():
                        log.warning("the master's keep-alive pipe is closed; shutting down fast")
                        on_lost()
                        return
                    next_beat = now + period
                await asyncio.sleep(min(_PARENT_POLL, period))
        finally:
            self.close()

    def close(self) -> None:
        if self.alive_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.alive_fd)
            self.alive_fd = None


def _die_with_parent(sig: int) -> None:
    """Ask the kernel for ``sig`` when the parent ends (Linux); elsewhere the polling suffices."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            log.warning("PR_SET_PDEATHSIG failed (errno %d); watching the master by polling", ctypes.get_errno())
    except (OSError, AttributeError) as e:
        log.warning("no PR_SET_PDEATHSIG (%s); watching the master by polling", e)


def register_stack_dump(stream: IO[str] | None) -> bool:
    """SIGUSR2 writes every thread's stack to ``stream`` (the daemon's log); False without one."""
    if stream is None:
        return False
    try:
        faulthandler.register(DUMP_SIGNAL, file=stream, all_threads=True, chain=False)
    except (ValueError, OSError, RuntimeError, AttributeError) as e:
        log.warning("no stack dump on %s: %s", DUMP_SIGNAL.name, e)
        return False
    return True


def log_stream() -> IO[str] | None:
    """A stream of its own on the process's log file (the root logger's file handler), if it has
    one: the handler's stream may be closed and reopened under it."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            try:
                return open(handler.baseFilename, "a", encoding="utf-8")  # noqa: SIM115 (kept for life)
            except OSError as e:
                log.warning("cannot open %s for stack dumps: %s", handler.baseFilename, e)
    return None
