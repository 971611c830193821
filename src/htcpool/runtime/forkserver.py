"""Starting starters (and daemons) by forking a server that has already imported them.

Starting ``python -m htcpool.runtime.starter`` costs tens of milliseconds of CPU before the
starter does anything (the interpreter, then psutil and the starter's modules): at hundreds
of short jobs that is most of the startd's work. A ``ForkServer`` is one long-lived process
per startd, started once, that imports the starter module and then only forks: each child
becomes one starter with the request's pipes as its stdin, stdout and stderr and runs the
starter's ``main`` with them. It is ``python -m htcpool.runtime.forkserver_loop`` (the server's
side) on one end of a UNIX socket pair; the startd holds the other (this module).

How it works:

* the server is single-threaded and forks from its main loop, so a child never inherits a
  lock held by another thread; the child restores the default signal handling, closes the
  server's descriptors, moves the received ones to 0, 1 and 2, and runs ``starter.run``
  (which ends with ``os._exit``);
* a request is one ``socket.send_fds`` message: ``S <n>`` and the three descriptors (the
  starter's stdin, stdout and stderr). The startd has already written the starter's first line
  (its launch description) into the stdin pipe, as much as the pipe holds, so the starter reads
  it as soon as it runs instead of waiting for the startd to hear the answer; the rest, if any,
  follows then. The answer is ``P <n> <pid> 1`` with a pidfd of the
  child attached (opened by the server before it can reap the child, so the startd's signals
  go to that process even if its pid is later reused), or ``F <n> <why>``;
* the server reaps its children (SIGCHLD wakes its loop through ``signal.set_wakeup_fd``)
  and sends ``E <pid> <wait status>``; a starter's end is that message, as a process's end
  is its exit status;
* when the startd's end of the socket closes the server exits; its starters go on, and each
  sees its stdin close, kills its job and ends (``starter``). When the server is gone the
  startd learns a starter's end from its pidfd instead, with an unknown status (255).

The startd keeps ``WARM`` starters forked ahead of need (``warm_up``; each one taken is replaced at
once): a warm starter waits on its stdin for its launch description, so a job's start costs a
write to a pipe instead of a fork and the child's setting up (about 5 ms of the few tens between
one job's end and the next one's start on the same slot, docs/performance.md). One that is never
given a job sees its stdin close when the startd stops, and ends without a word.

The master has a server of its own (``kind="daemon"``, ``runtime/spawn.py`` ``DaemonForks``): it
imports every daemon's service instead of the starter, and ``fork_daemon`` asks for one daemon
as ``D <n> <json>`` (its arguments, its environment and its process title) with four
descriptors (stdin, stdout, stderr, the keep-alive pipe) on a ``SOCK_SEQPACKET`` pair, so that a
request of any size is one message. Answers and ends are as above; the child is a
``ForkedChild``.

``ForkedStarter`` gives the startd what ``asyncio.subprocess.Process`` gives it for an
exec'd starter (``stdin``, ``stdout``, ``pid``, ``returncode``, ``wait``, ``send_signal``,
``kill``), so ``starter_client.StarterHandle`` works over either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Mapping

_UNKNOWN_STATUS = 255


class ForkedChild:
    """A process forked by the server, as its client sees it: its pid, a pidfd for its signals,
    and its end, which the server reports (see the module docstring)."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None
        self._ended = asyncio.get_running_loop().create_future()

    def ended(self, status: int) -> None:
        """The server reaped it (or, the server gone, its pidfd said it ended)."""
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(status) if status != _UNKNOWN_STATUS else _UNKNOWN_STATUS
        if not self._ended.done():
            self._ended.set_result(self.returncode)
        if self.pidfd >= 0:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = -1

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def send_signal(self, sig: int) -> None:
        """``sig`` to the process (ProcessLookupError once it has ended)."""
        if self.returncode is not None:
            raise ProcessLookupError(self.pid)
        if self.pidfd >= 0:
            signal.pidfd_send_signal(self.pidfd, sig)
        else:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkedStarter(ForkedChild):
    """A starter forked by the server, with the startd's ends of its stdin and stdout."""

    def __init__(self, pid: int, pidfd: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader) -> None:
        super().__init__(pid, pidfd)
        self.stdin = stdin
        self.stdout = stdout


def _prefill(fd: int, data: bytes) -> bytes:
    """Write what fits of ``data`` into the empty pipe ``fd`` now, without blocking; the rest.
    The starter then finds its first line waiting when it starts, instead of waiting for the
    startd to hear the server's answer and write it."""
    if not data:
        return b""
    os.set_blocking(fd, False)
    try:
        return data[os.write(fd, data):]
    except BlockingIOError:
        return data


async def _send_fds(sock: socket.socket, data: bytes, fds: list[int]) -> None:
    """``socket.send_fds`` on a non-blocking socket, waiting while the server is behind."""
    for _ in range(1000):
        try:
            socket.send_fds(sock, [data], fds)
            return
        except BlockingIOError:
            await asyncio.sleep(0.005)
    raise OSError("the fork server does not take requests")


#: starters kept forked ahead of need, waiting for their launch description (module docstring)
WARM = 2


class ForkServer:
    """The connection to a fork server (started on first use, or by ``warm_up``): a startd's, whose
    children are starters, or with ``kind="daemon"`` a master's, whose children are daemons
    (``fork_daemon``; ``forkserver_loop``)."""

    def __init__(self, environment: Mapping[str, str] | None = None, warm: int = WARM,
                 kind: str = "starter") -> None:
        self.environment = dict(environment) if environment is not None else None
        self.kind = kind
        self.process: asyncio.subprocess.Process | None = None
        self.sock: socket.socket | None = None
        self._lock = asyncio.Lock()
        self._answers: dict[str, asyncio.Future[tuple[int, int]]] = {}
        self._children: dict[int, ForkedChild] = {}
        self._early: dict[int, int] = {}  # statuses of children ended before their answer was read
        self._buffer = b""
        self._fds: list[int] = []  # pidfds received whose answer line has not been read yet
        self._serial = 0
        self.warm = warm
        self._ready: list[tuple[str | None, ForkedStarter]] = []  # forked ahead: (stderr path, starter)
        self._warming: set[asyncio.Task[None]] = set()

    async def _start(self) -> None:
        # a daemon's request carries its environment: one message each, whatever its size
        kind = socket.SOCK_SEQPACKET if self.kind == "daemon" else socket.SOCK_STREAM
        ours, theirs = socket.socketpair(socket.AF_UNIX, kind)
        argv = [str(theirs.fileno())] + ([self.kind] if self.kind != "starter" else [])
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "htcpool.runtime.forkserver_loop", *argv,
                pass_fds=(theirs.fileno(),), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                env=self.environment)
        finally:
            theirs.close()
        ours.setblocking(False)
        self.sock = ours
        asyncio.get_running_loop().add_reader(ours.fileno(), self._readable)

    @property
    def running(self) -> bool:
        return self.sock is not None

    @property
    def has_children(self) -> bool:
        """Whether a child it forked has not been seen to end."""
        return bool(self._children)

    async def server_pid(self) -> int:
        """The server's pid (the parent of every child it forks), the server started if need be."""
        async with self._lock:
            if self.sock is None:
                await self._start()
        assert self.process is not None
        return self.process.pid

    async def fork_daemon(self, argv: list[str], environment: Mapping[str, str], title: str,
                          fds: list[int]) -> ForkedChild:
        """A daemon, as ``python -m htcpool.runtime.services ARGV`` in ``environment`` would run, its
        process titled ``title``; ``fds`` are its stdin, stdout, stderr and keep-alive pipe (sent
        to the server; the caller keeps and closes its own). OSError when none can be forked."""
        payload = json.dumps({"argv": argv, "env": dict(environment), "title": title})
        async with self._lock:
            answer = await self._ask("D", fds, payload)
        pid, pidfd = await answer
        child = ForkedChild(pid, pidfd)
        self._adopt(child)
        return child

    async def spawn(self, stderr_path: str | None, first: bytes = b"") -> ForkedStarter:
        """A starter whose stdin begins with ``first``: a warm one when there is one for
        ``stderr_path``, else a new one; OSError when none can be forked."""
        child = self.take_warm(stderr_path, first)
        if child is None:
            child = await self._fork(stderr_path, first)
            self.warm_up(stderr_path)
        return child

    def has_warm(self, stderr_path: str | None) -> bool:
        """Whether a starter forked ahead for ``stderr_path`` may be waiting (``take_warm``)."""
        return any(path == stderr_path and child.returncode is None for path, child in self._ready)

    def take_warm(self, stderr_path: str | None, first: bytes) -> ForkedStarter | None:
        """A warm starter for ``stderr_path`` given ``first`` now, without a pass through the
        event loop (another is forked ahead in its place); None when none is waiting."""
        child = self._take_ready(stderr_path)
        if child is not None:
            child.stdin.write(first)
            self.warm_up(stderr_path)
        return child

    def warm_up(self, stderr_path: str | None) -> None:
        """Fork starters for ``stderr_path`` in the background until ``warm`` wait (or are on their
        way); the server is started first if it is not running."""
        for _ in range(self.warm - len(self._ready) - len(self._warming)):
            task = asyncio.get_running_loop().create_task(self._fork_ahead(stderr_path))
            self._warming.add(task)
            task.add_done_callback(self._warming.discard)

    async def _fork_ahead(self, stderr_path: str | None) -> None:
        try:
            child = await self._fork(stderr_path, b"")
        except OSError:
            return  # the next job's start forks its own, and says what failed
        self._ready.append((stderr_path, child))

    def _take_ready(self, stderr_path: str | None) -> ForkedStarter | None:
        while self._ready:
            path, child = self._ready.pop(0)
            if path == stderr_path and child.returncode is None:
                return child
            child.stdin.close()  # gone, or for another log: it ends on its closed stdin
        return None

    async def _fork(self, stderr_path: str | None, first: bytes) -> ForkedStarter:
        """A new starter whose stdin begins with ``first`` (module docstring)."""
        async with self._lock:
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            rest = _prefill(in_w, first)
            err = os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if stderr_path \
                else os.open(os.devnull, os.O_WRONLY)
            try:
                answer = await self._ask("S", [in_r, out_w, err])
            except OSError:
                for fd in (in_w, out_r):
                    os.close(fd)
                raise
            finally:
                for fd in (in_r, out_w, err):  # the child's ends: sent (the server has copies) or not
                    os.close(fd)
        try:
            pid, pidfd = await answer
        except OSError:
            os.close(in_w)
            os.close(out_r)
            raise
        return await self._wrap(pid, pidfd, in_w, out_r, rest)

    async def _ask(self, kind: str, fds: list[int], payload: str = "") -> asyncio.Future[tuple[int, int]]:
        """Send one request, ``<kind> <serial> [<payload>]`` with ``fds``, the server started first if
        need be; the future of its answer, ``(pid, pidfd)``. Called with the lock held, so that
        requests go out one at a time."""
        if self.sock is None:
            await self._start()
        assert self.sock is not None
        self._serial += 1
        key = str(self._serial)
        answer: asyncio.Future[tuple[int, int]] = asyncio.get_running_loop().create_future()
        self._answers[key] = answer
        try:
            await _send_fds(self.sock, " ".join([kind, key, payload] if payload else [kind, key]).encode(), fds)
        except OSError:
            self._answers.pop(key, None)
            raise
        return answer

    async def _wrap(self, pid: int, pidfd: int, in_w: int, out_r: int, rest: bytes) -> ForkedStarter:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 ** 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                            os.fdopen(in_w, "wb", 0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        if rest:  # what did not fit in the pipe before the fork, ahead of anything else
            writer.write(rest)
        child = ForkedStarter(pid, pidfd, writer, reader)
        self._adopt(child)
        return child

    def _adopt(self, child: ForkedChild) -> None:
        """Follow a child the server forked: its end, reported already, or by the server, or
        (the server gone) by its pidfd."""
        self._children[child.pid] = child
        if child.pid in self._early:
            self._ended(child.pid, self._early.pop(child.pid))
        elif self.sock is None:
            self._watch_pidfd(child)

    def _readable(self) -> None:
        assert self.sock is not None
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, 16)
        except BlockingIOError:
            return
        except OSError:
            data, fds = b"", []
        if not data:
            for fd in fds:
                os.close(fd)
            self._lost()
            return
        self._buffer += data
        self._fds += fds
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._message(line.decode(errors="replace").split(" "), self._fds)

    def _message(self, parts: list[str], fds: list[int]) -> None:
        kind = parts[0]
        if kind == "P" and len(parts) == 4:
            answer = self._answers.pop(parts[1], None)
            pidfd = fds.pop(0) if parts[3] == "1" and fds else -1
            if answer is not None and not answer.done():
                answer.set_result((int(parts[2]), pidfd))
            elif pidfd >= 0:
                os.close(pidfd)
        elif kind == "F" and len(parts) >= 2:
            answer = self._answers.pop(parts[1], None)
            if answer is not None and not answer.done():
                answer.set_exception(OSError(f"the fork server could not fork: {' '.join(parts[2:])}"))
        elif kind == "E" and len(parts) == 3:
            self._ended(int(parts[1]), int(parts[2]))

    def _ended(self, pid: int, status: int) -> None:
        child = self._children.pop(pid, None)
        if child is None:
            self._early[pid] = status
        else:
            child.ended(status)

    def _watch_pidfd(self, child: ForkedChild) -> None:
        """The server is gone: learn the starter's end from its pidfd, status unknown."""
        if child.pidfd < 0:
            child.ended(_UNKNOWN_STATUS)
            return
        asyncio.get_running_loop().add_reader(child.pidfd, lambda: self._ended(child.pid, _UNKNOWN_STATUS))

    def _lost(self) -> None:
        """The server's end closed: its starters' ends come from their pidfds from now on."""
        if self.sock is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self.sock.fileno())
            self.sock.close()
            self.sock = None
        for answer in self._answers.values():
            if not answer.done():
                answer.set_exception(OSError("the fork server ended"))
        self._answers.clear()
        for child in list(self._children.values()):
            self._watch_pidfd(child)

    async def close(self) -> None:
        """Close the server's socket and wait for the server to exit (its starters go on; the warm
        ones end, their stdin closed)."""
        for task in list(self._warming):
            task.cancel()
        waiting = [child for _, child in self._ready]
        self._ready.clear()
        for child in waiting:
            child.stdin.close()
        if waiting:  # their ends, with their statuses, while the server can still tell them
            await asyncio.wait([asyncio.ensure_future(child.wait()) for child in waiting], timeout=2.0)
        self._lost()
        if self.process is not None and self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), 5.0)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


__all__ = ["WARM", "ForkServer", "ForkedChild", "ForkedStarter"]
