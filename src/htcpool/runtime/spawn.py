"""How the master starts a daemon process, hears its keep-alives, and ends a previous set.

``spawn_process`` starts ``python -m htcpool.runtime.services KIND`` with its output appended
to ``log/<Kind>Log.out``, a pipe for its keep-alives (``runtime/childalive.py`` writes them,
``DaemonProcess.keepalives`` reads them on the master's loop) and its parent's pid (the
master's) in its environment. Every daemon's identity is recorded in ``run/<name>.pid``
(``runtime/pidfile.py``) while it runs.

``DaemonForks`` starts the same daemon by forking it from a fork server of the master's that
has imported every daemon's modules once (``runtime/forkserver.py``, kind ``daemon``): a
daemon's start was some 0.7 s of CPU, nearly all of it the interpreter importing the same
modules again (docs/performance.md, "Daemons forked from the master's fork server"). The child
is the daemon a fresh interpreter would be: its own arguments, environment, standard streams,
keep-alive pipe and nothing else of the server's open, its command line in ``ps`` the one above
(``setproctitle``). Its parent is the fork server, whose pid it is given as its master's: when
the master dies the server ends (its socket closed), and the daemons go as they always did
when their parent went. Where the server cannot be started or cannot fork, the daemon is
started as a program of its own, and the MasterLog says why. A ``restart`` command renews the
server (``DaemonForks.renew``), so that daemons restarted after htcpool was upgraded run the new
code; the old server stays until the daemons it forked are gone. ``MASTER_FORK_SERVER = False``
(htcpool's own knob, like ``STARTER_FORK_SERVER``) always starts programs.

``end_orphans``: a master that starts finds the pid files its predecessor left. A daemon they
still name belongs to a master that died without stopping it; such daemons shut down by
themselves once they notice their master is gone; ``end_orphans`` tells them again, waits,
then kills those that remain, so that one pool never has two sets of daemons on one queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from htcpool.runtime.childalive import ALIVE_FD_ENV, MASTER_PID_ENV
from htcpool.runtime.forkserver import ForkedChild, ForkServer
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.liveness import decode_beats
from htcpool.runtime.local_names import DaemonEntry
from htcpool.runtime.pidfile import (
    ProcessIdentity,
    is_live,
    read_pid_file,
    remove_pid_file,
    signal_identified,
    write_pid_file,
)

log = logging.getLogger("htcpool.master")
Receive = Callable[[float], None]


class ChildProcess(Protocol):
    """What the master needs of a child's process."""

    @property
    def pid(self) -> int: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...

    def keepalives(self, receive: Receive) -> None:
        """Call ``receive(timeout)`` for each keep-alive the child sends from now on."""


#: starts the daemon of that name in the pool's layout (``entry``: its kind and local name when the
#: name is not a kind itself); returns its process
Spawn = Callable[..., Awaitable[ChildProcess]]


def pid_file(layout: PoolLayout, name: str) -> Path:
    """``run/<name>.pid``: the identity of the daemon of that DAEMON_LIST name while it runs."""
    return layout.run / f"{name.lower()}.pid"


class _Beats(asyncio.Protocol):
    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.rest = b""

    def data_received(self, data: bytes) -> None:
        timeouts, self.rest = decode_beats(self.rest + data)
        for timeout in timeouts:
            self.receive(timeout)
        self.rest = self.rest[-256:]  # a line never gets this long: garbage is not kept


class DaemonProcess:
    """A daemon started by ``spawn_process``: its process and the read end of its keep-alive pipe."""

    def __init__(self, process: asyncio.subprocess.Process | ForkedChild, alive_read: int) -> None:
        self.process = process
        self._alive_read: int | None = alive_read
        self._transport: asyncio.BaseTransport | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    async def wait(self) -> int:
        code = await self.process.wait()
        self._close()
        return code

    def send_signal(self, sig: int) -> None:
        self.process.send_signal(sig)

    def kill(self) -> None:
        self.process.kill()

    def keepalives(self, receive: Receive) -> None:
        fd, self._alive_read = self._alive_read, None
        if fd is None:
            return
        pipe = os.fdopen(fd, "rb", buffering=0)
        task = asyncio.get_running_loop().connect_read_pipe(lambda: _Beats(receive), pipe)

        async def connect() -> None:
            self._transport, _ = await task

        asyncio.get_running_loop().create_task(connect())

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        if self._alive_read is not None:
            with contextlib.suppress(OSError):
                os.close(self._alive_read)
            self._alive_read = None


#: how a daemon's program is run; its arguments follow (``_daemon_args``)
_PROGRAM = (sys.executable, "-m", "htcpool.runtime.services")


def _daemon_args(layout: PoolLayout, entry: DaemonEntry) -> list[str]:
    args = [entry.kind, "--local-dir", str(layout.root)]
    if entry.name != entry.kind or entry.local_name is not None:
        args += ["--as", entry.name] + (["--local-name", entry.local_name] if entry.local_name else [])
    return args


def _output(layout: PoolLayout, entry: DaemonEntry) -> Path:
    """``log/<Kind>Log.out`` (with the local name or DAEMON_LIST name of a second instance)."""
    suffix = f".{entry.local_name}" if entry.local_name else ("" if entry.name == entry.kind else f".{entry.name}")
    return layout.log / f"{entry.kind.capitalize()}Log{suffix}.out"


def _environment(layout: PoolLayout) -> dict[str, str]:
    return dict(os.environ, CONDOR_CONFIG=str(layout.config))


async def spawn_process(name: str, layout: PoolLayout, entry: DaemonEntry | None = None) -> DaemonProcess:
    """A daemon as a program of its own, its output appended to ``log/<Name>Log.out``."""
    entry = entry or DaemonEntry(name, name)
    read_end, write_end = os.pipe()
    env = _environment(layout)
    env.update({MASTER_PID_ENV: str(os.getpid()), ALIVE_FD_ENV: str(write_end)})
    command = [*_PROGRAM, *_daemon_args(layout, entry)]
    try:
        with open(_output(layout, entry), "ab") as out:
            process = await asyncio.create_subprocess_exec(*command, env=env, stdout=out, stderr=out,
                                                           stdin=asyncio.subprocess.DEVNULL,
                                                           pass_fds=(write_end,))
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)  # the child's copy is the only one: its end closes when it exits
    write_pid_file(pid_file(layout, entry.name), process.pid)
    return DaemonProcess(process, read_end)


#: the descriptor a forked daemon finds its keep-alive pipe on (after stdin, stdout and stderr)
_FORKED_ALIVE_FD = 3


class DaemonForks:
    """The master's daemons forked from its fork server (module docstring); ``spawn`` is a
    ``Spawn``. The server is started at the first daemon's start and ended by ``close``."""

    def __init__(self, layout: PoolLayout) -> None:
        self._environment = _environment(layout)
        self.server = ForkServer(self._environment, kind="daemon")
        self._retired: list[ForkServer] = []  # servers renewed away whose daemons still run

    def renew(self) -> None:
        """Daemons started from now on come from a new server, which imports the modules afresh: a
        restart after htcpool was upgraded runs the new code, as a restarted program would. The
        old server stays as long as daemons it forked run (they go when it goes)."""
        self._retired.append(self.server)
        self.server = ForkServer(self._environment, kind="daemon")

    async def _close_idle_retired(self) -> None:
        for server in [s for s in self._retired if not s.has_children]:
            self._retired.remove(server)
            await server.close()

    async def spawn(self, name: str, layout: PoolLayout, entry: DaemonEntry | None = None) -> DaemonProcess:
        entry = entry or DaemonEntry(name, name)
        await self._close_idle_retired()
        try:
            parent = await self.server.server_pid()
        except OSError as e:
            log.warning("the daemons' fork server did not start (%s); starting %s as a program", e, entry.name)
            return await spawn_process(name, layout, entry)
        env = _environment(layout)
        env.update({MASTER_PID_ENV: str(parent), ALIVE_FD_ENV: str(_FORKED_ALIVE_FD)})
        args = _daemon_args(layout, entry)
        read_end, write_end = os.pipe()
        try:
            with open(_output(layout, entry), "ab") as out, open(os.devnull, "rb") as null:
                child = await self.server.fork_daemon(args, env, " ".join([*_PROGRAM, *args]),
                                                      [null.fileno(), out.fileno(), out.fileno(), write_end])
        except OSError as e:
            os.close(read_end)
            log.warning("the daemons' fork server could not fork %s (%s); starting it as a program", entry.name, e)
            return await spawn_process(name, layout, entry)
        finally:
            os.close(write_end)  # the child's copy is the only one: its end closes when it exits
        write_pid_file(pid_file(layout, entry.name), child.pid)
        return DaemonProcess(child, read_end)

    async def close(self) -> None:
        """End the servers (once their daemons have ended: they go when it goes)."""
        for server in [*self._retired, self.server]:
            await server.close()
        self._retired.clear()


async def end_orphans(layout: PoolLayout, grace: float, keep: Callable[[Path], bool] = lambda path: False) -> list[str]:
    """Tell the daemons the pid files in ``run/`` still name to shut down fast (SIGQUIT), wait up to
    ``grace`` seconds for them, then kill those left; the pid files are removed. Returns the names
    of the daemons found."""
    orphans: dict[str, ProcessIdentity] = {}
    for path in sorted(layout.run.glob("*.pid")):
        if keep(path):
            continue
        identity = read_pid_file(path)
        if identity is not None and is_live(identity):
            orphans[path.stem] = identity
            log.warning("%s (pid %d) of a previous master still runs; telling it to shut down fast and "
                        "waiting up to %.0f s for it", path.stem, identity.pid, grace)
            signal_identified(identity, signal.SIGQUIT)
        remove_pid_file(path)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while any(is_live(i) for i in orphans.values()) and loop.time() < deadline:
        await asyncio.sleep(0.1)
    for name, identity in orphans.items():
        if signal_identified(identity, signal.SIGKILL):
            log.warning("killed %s (pid %d) of a previous master", name, identity.pid)
    return list(orphans)
