"""The startd's side of a starter: spawn it, send it commands, hear its events (asyncio).

``StarterHandle.spawn`` starts ``python -m htcpool.runtime.starter``, or has the startd's
fork server fork one (``forkserver``: the same starter without the interpreter's start), with
pipes for stdin and stdout (stderr goes to a log file when one is named), sends
the launch description as the first line (to a forked starter, into its stdin before the fork,
so it is there when the starter looks), and keeps one task reading events.
Each event is a dict passed to ``on_event`` in the order the starter wrote them;
the handle notes the job's pid from ``started``.

The startd always hears exactly one ``exited`` per handle. When the starter ends
without writing one (it could not start the job, or it died), the handle writes
the missing events itself: an ``error`` if the starter gave none, then an
``exited`` with null exit code and signal and ``"reported_error": true``, so
the startd knows the outcome was already reported as an error.

Commands to a starter that has gone away are dropped silently. ``kill_family``
is the last resort: it stops the starter, SIGKILLs the process group of every
job it started, SIGKILLs the starter and waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pwd
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from htcpool.runtime.forkserver import ForkedStarter, ForkServer
from htcpool.runtime.launch import LaunchSpec, canonical_signal
from htcpool.runtime.starter_wire import StarterCommand, StarterEvent

EventCallback = Callable[[dict[str, Any]], None]
log = logging.getLogger("htcpool.starter_client")


def child_environment() -> dict[str, str]:
    """The startd's environment, with htcpool's own source directory on PYTHONPATH."""
    env = dict(os.environ)
    source = str(Path(__file__).resolve().parents[2])
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if source not in paths:
        env["PYTHONPATH"] = os.pathsep.join([source, *paths])
    return env


class StarterHandle:
    """One running starter process."""

    def __init__(self, process: asyncio.subprocess.Process | ForkedStarter, spec: LaunchSpec,
                 on_event: EventCallback) -> None:
        self.process = process
        self.spec = spec
        self.on_event = on_event
        self.job_pid: int | None = None
        self.saw_error = False
        self.saw_exited = False
        self.spawned_at = time.monotonic()
        self._reader = asyncio.get_running_loop().create_task(self._read_events())

    @classmethod
    async def spawn(cls, spec: LaunchSpec, on_event: EventCallback, python: str = sys.executable,
                    stderr_path: str | None = None, user: str | None = None,
                    forkserver: ForkServer | None = None) -> StarterHandle:
        """Start a starter for ``spec`` (as ``user`` when given: the caller is root; forked by
        ``forkserver`` when given and no user is); OSError when the starter cannot be started."""
        first = {"spec": spec.to_json()}
        if forkserver is not None and user is None:  # the first line goes with the fork request
            return cls(await forkserver.spawn(stderr_path, _line(first)), spec, on_event)
        log_file = open(stderr_path, "ab") if stderr_path else None
        try:
            process = await asyncio.create_subprocess_exec(
                python, "-m", "htcpool.runtime.starter", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log_file if log_file is not None else asyncio.subprocess.DEVNULL,
                env=child_environment(), user=user,
                group=None if user is None else pwd.getpwnam(user).pw_gid,
                extra_groups=None if user is None else [])
        finally:
            if log_file is not None:
                log_file.close()
        handle = cls(process, spec, on_event)
        await handle._send(first)
        return handle

    @classmethod
    def warm(cls, server: ForkServer, spec: LaunchSpec, on_event: EventCallback,
             stderr_path: str | None = None) -> StarterHandle | None:
        """A starter ``server`` forked ahead, given ``spec`` at once; None when none is waiting."""
        if not server.has_warm(stderr_path):
            return None
        child = server.take_warm(stderr_path, _line({"spec": spec.to_json()}))
        return None if child is None else cls(child, spec, on_event)

    @property
    def pid(self) -> int:
        """The starter's own pid."""
        return self.process.pid

    @property
    def done(self) -> bool:
        """The starter has exited and every event it wrote has been delivered."""
        return self.process.returncode is not None and self._reader.done()

    # -- commands
    async def suspend(self) -> None:
        await self._send({"cmd": StarterCommand.SUSPEND})

    async def continue_(self) -> None:
        await self._send({"cmd": StarterCommand.CONTINUE})

    async def soft_kill(self, sig: str | int | None = None) -> None:
        """``sig`` (default: the job's KillSig) to the job's group; LaunchError for an unknown one."""
        await self._send({"cmd": StarterCommand.SOFT_KILL, "signal": canonical_signal(sig or self.spec.kill_sig)})

    async def hard_kill(self) -> None:
        await self._send({"cmd": StarterCommand.HARD_KILL})

    async def kill_family(self) -> None:
        """SIGKILL the job's process groups and the starter, and wait for the starter to end."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGSTOP)  # it starts nothing more
            for group in self._job_groups():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        await self.wait()

    def _job_groups(self) -> set[int]:
        """The process groups of all the (stopped) starter holds: the job's, and those of
        job processes that left it with ``setsid`` (the starter is their subreaper)."""
        groups = {self.job_pid} if self.job_pid is not None else set()
        try:
            tree = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return groups
        for child in tree:
            with contextlib.suppress(ProcessLookupError):
                groups.add(os.getpgid(child.pid))
        return groups

    async def close(self) -> None:
        """Close the starter's stdin: the starter kills the job and exits."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
            with contextlib.suppress(OSError, RuntimeError):
                await stdin.wait_closed()

    async def wait(self) -> int:
        """Wait until the starter has exited and all its events are delivered; its exit status."""
        status = await self.process.wait()
        await asyncio.shield(self._reader)
        return status

    # -- plumbing
    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing() or self.process.returncode is not None:
            return
        try:
            stdin.write(_line(message))
            await stdin.drain()
        except (OSError, RuntimeError):
            pass  # the starter is gone; its end is reported through the event stream

    async def _read_events(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except (OSError, ValueError):
                break
            if not line:
                break
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self._deliver(event)
        status = await self.process.wait()
        await self.close()  # release the stdin pipe now, not when the loop is gone
        if not self.saw_exited:
            if not self.saw_error:
                self._deliver({"event": StarterEvent.ERROR,
                               "message": f"starter ended without reporting (exit status {status})"})
            self._deliver({"event": StarterEvent.EXITED, "exit_code": None, "exit_signal": None,
                           "user_cpu": 0.0, "sys_cpu": 0.0, "rss_kb": 0, "killed": False,
                           "wall": round(time.monotonic() - self.spawned_at, 3),
                           "reported_error": True})

    def _deliver(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == StarterEvent.STARTED and isinstance(event.get("pid"), int):
            self.job_pid = event["pid"]
        elif kind == StarterEvent.ERROR:
            self.saw_error = True
        elif kind == StarterEvent.EXITED:
            if self.saw_exited:
                return
            self.saw_exited = True
        try:
            self.on_event(event)
        except Exception as e:  # the startd's bug must not stop the event stream
            log.exception("on_event failed on %r: %r", event, e)


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


__all__ = ["EventCallback", "StarterHandle"]
