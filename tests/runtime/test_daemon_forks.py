"""Daemons forked from the master's fork server (``runtime/spawn.py`` ``DaemonForks``,
``runtime/forkserver_loop.py`` kind ``daemon``) are the daemons a fresh interpreter would be.

A real collector is forked in a pool directory of its own: it runs, sends its keep-alives on its
pipe, shows the daemon's command line, holds nothing of the server's open, and its end (a stop,
a kill) reaches the master with its status. When the server goes, its daemons go. A server that
cannot start leaves the master starting programs; a malformed request is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
import pytest

from htcpool.runtime import spawn as spawning
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PERSONAL_CONFIG
from htcpool.runtime.spawn import DaemonForks, DaemonProcess

DEADLINE = 30.0


def _layout(tmp_path: Path) -> PoolLayout:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.config.write_text(PERSONAL_CONFIG.format(local_dir=layout.root))
    return layout


async def _until(what: str, check: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def _fds_on(pid: int, path: Path) -> set[int]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd) == str(path):
                found.add(int(fd.name))
        except OSError:
            continue
    return found


def _parent(pid: int) -> int:
    return psutil.Process(pid).ppid()


async def _serving(layout: PoolLayout, what: str = "the collector's address") -> None:
    await _until(what, lambda: layout.read_address("collector") is not None)


def _run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 90))


def test_a_forked_collector_runs_as_a_program_would_and_its_ends_reach_the_master(tmp_path: Path) -> None:
    layout = _layout(tmp_path)

    async def test() -> None:
        forks = DaemonForks(layout)
        try:
            first = await forks.spawn("collector", layout)
            server = forks.server.process
            assert server is not None
            beats: list[float] = []
            first.keepalives(beats.append)
            # it serves, and its first keep-alive comes up its pipe (descriptor 3, named in its environment)
            await _serving(layout)
            await _until("a keep-alive", lambda: bool(beats))
            proc = Path(f"/proc/{first.pid}")
            assert _parent(first.pid) == server.pid
            assert (proc / "cmdline").read_bytes().rstrip(b"\0").decode() == \
                f"{sys.executable} -m htcpool.runtime.services collector --local-dir {layout.root}"
            # nothing of the server's left open in the daemon: not its socket to the master, nor the
            # descriptors it received for the child (the output file is the child's 1 and 2 only)
            assert not _socket_inodes(first.pid) & _socket_inodes(server.pid)
            assert _fds_on(first.pid, layout.log / "CollectorLog.out") == {1, 2}
            assert "collector" in (layout.log / "CollectorLog").read_text()
            assert (spawning.pid_file(layout, "collector")).exists()
            # a graceful stop ends it with status 0, as the master sees it
            first.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(first.wait(), DEADLINE) == 0
            # a second one, killed: its status says so
            layout.clear_address("collector")
            second = await forks.spawn("collector", layout)
            await _serving(layout, "the second collector's address")
            second.kill()
            assert await asyncio.wait_for(second.wait(), DEADLINE) == -signal.SIGKILL
        finally:
            await forks.close()

    _run(test)


def test_when_the_server_ends_its_daemons_end_and_their_ends_are_still_seen(tmp_path: Path) -> None:
    layout = _layout(tmp_path)

    async def test() -> None:
        forks = DaemonForks(layout)
        daemon = await forks.spawn("collector", layout)
        await _serving(layout)
        await forks.close()  # as when the master dies: the server's socket closes, the server exits
        assert await asyncio.wait_for(daemon.wait(), DEADLINE) == 255  # from its pidfd: status unknown

    _run(test)


def test_a_server_that_cannot_start_leaves_the_daemon_started_as_a_program(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    layout = _layout(tmp_path)

    async def broken(self: object) -> int:
        raise OSError("no such interpreter")

    monkeypatch.setattr("htcpool.runtime.forkserver.ForkServer.server_pid", broken)

    async def test() -> None:
        forks = DaemonForks(layout)
        daemon = await forks.spawn("collector", layout)
        try:
            assert isinstance(daemon, DaemonProcess) and isinstance(daemon.process, asyncio.subprocess.Process)
            assert _parent(daemon.pid) == os.getpid()
            await _serving(layout)
        finally:
            daemon.send_signal(signal.SIGQUIT)
            assert await asyncio.wait_for(daemon.wait(), DEADLINE) == 0
            await forks.close()

    _run(test)
    assert "the daemons' fork server did not start (no such interpreter); starting collector as a program" \
        in caplog.text


@pytest.mark.parametrize("request_text", [
    "D 7 {not json",
    'D 7 {"argv": ["collector"], "env": {"A": 1}, "title": "t"}',
    'D 7 {"argv": "collector", "env": {}, "title": "t"}',
    "S 7",
])
def test_a_malformed_request_is_refused_and_the_server_goes_on(request_text: str) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = subprocess.Popen([sys.executable, "-m", "htcpool.runtime.forkserver_loop", str(theirs.fileno()),
                               "daemon"], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
    theirs.close()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        ours.settimeout(DEADLINE)
        socket.send_fds(ours, [request_text.encode()], [null] * 4)
        assert ours.recv(4096) == b"F 7 malformed request\n"
        # still serving: the next malformed one is answered too
        socket.send_fds(ours, [json.dumps({"argv": []}).join(["D 8 ", ""]).encode()], [null] * 4)
        assert ours.recv(4096) == b"F 8 malformed request\n"
    finally:
        os.close(null)
        ours.close()
        assert server.wait(DEADLINE) == 0  # its client gone, the server ends


@pytest.mark.parametrize(("setting", "forked", "warned"), [
    ("", True, False),
    ("MASTER_FORK_SERVER = False\n", False, False),
    ("MASTER_FORK_SERVER = perhaps\n", True, True),
])
def test_master_fork_server_chooses_how_the_master_starts_its_daemons(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, setting: str, forked: bool, warned: bool) -> None:
    from htcpool.runtime.master import MasterService
    from tests.runtime.inprocess import Clock, Network, daemon, pool_layout

    async def test() -> None:
        layout = pool_layout(tmp_path, setting)
        with caplog.at_level("WARNING", logger="htcpool.master"):
            service = MasterService(daemon("master", layout, Clock(), Network()))
        assert (service.forks is not None) is forked
        assert service.spawn == (service.forks.spawn if service.forks is not None else spawning.spawn_process)
        assert ("MASTER_FORK_SERVER" in caplog.text and "perhaps" in caplog.text) is warned

    _run(test)


def test_a_renewed_server_forks_the_next_daemons_and_the_old_one_ends_with_its_last_daemon(tmp_path: Path) -> None:
    """What a ``restart`` does (after an upgrade the restarted daemons must run the new code)."""
    layout = _layout(tmp_path)

    async def test() -> None:
        forks = DaemonForks(layout)
        try:
            before = await forks.spawn("collector", layout)
            await _serving(layout)
            old = forks.server.process
            assert old is not None
            forks.renew()
            # the daemon of the old server runs on: its server stays while it does
            await asyncio.sleep(0.5)
            assert old.returncode is None and before.pid > 0 and Path(f"/proc/{before.pid}").exists()
            layout.clear_address("collector")
            before.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(before.wait(), DEADLINE) == 0
            after = await forks.spawn("collector", layout)
            new = forks.server.process
            assert new is not None and new.pid != old.pid
            assert _parent(after.pid) == new.pid
            assert await asyncio.wait_for(old.wait(), DEADLINE) == 0  # its last daemon gone, it was ended
            await _serving(layout, "the second collector's address")
            after.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(after.wait(), DEADLINE) == 0
        finally:
            await forks.close()

    _run(test)
