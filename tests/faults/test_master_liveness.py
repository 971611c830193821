"""The master supervises liveness, not only exit (issue 19, item 3).

The attack: a daemon whose event loop stops (SIGSTOP, or a computation that never ends) keeps its
process and its port, so a master that only waits for exits never notices, and the pool is
without that daemon for good. Now each daemon sends keep-alives from its event loop and the
master kills one silent for its NOT_RESPONDING_TIMEOUT, after a dump of its stacks into its log,
and starts it again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.config import read_config
from htcpool.runtime.childalive import DUMP_SIGNAL, MasterLink
from htcpool.runtime.liveness import (
    DEFAULT_TIMEOUT,
    Heartbeat,
    Overdue,
    decode_beats,
    encode_beat,
    keepalive_period,
    next_check,
    not_responding_timeout,
    overdue,
)
from htcpool.runtime.pidfile import identity_of, is_live
from tests.e2e.pool import LivePool


# ---------------------------------------------------------------------------- the decision
def test_overdue_takes_only_children_silent_for_their_own_timeout() -> None:
    beats = [Heartbeat("schedd", 11, 100.0, 3600.0), Heartbeat("negotiator", 12, 100.0, 3.0),
             Heartbeat("startd", 13, None, 3.0)]  # no keep-alive yet: not watched
    assert overdue(beats, 102.9) == []
    assert overdue(beats, 103.0) == [Overdue("negotiator", 12, 3.0, 3.0)]
    assert [o.name for o in overdue(beats, 3700.0)] == ["schedd", "negotiator"]
    assert next_check(beats) == 103.0
    assert next_check([Heartbeat("startd", 13, None, 3.0)]) is None
    assert keepalive_period(3600) == 1200 and keepalive_period(3) == 1.0


def test_keepalive_lines_round_trip_and_garbage_is_skipped() -> None:
    data = encode_beat(3) + b"nonsense\nalive x\nalive 0\n" + encode_beat(3600) + b"aliv"
    assert decode_beats(data) == ([3.0, 3600.0], b"aliv")


def test_not_responding_timeout_per_subsystem_and_bad_values_named(tmp_path: Path) -> None:
    def config(text: str):
        path = tmp_path / "condor_config"
        path.write_text(text)
        return read_config(str(path), environ={"CONDOR_CONFIG": str(path)})

    assert not_responding_timeout(config(""), "schedd") == (DEFAULT_TIMEOUT, None)
    both = config("NOT_RESPONDING_TIMEOUT = 600\nSCHEDD_NOT_RESPONDING_TIMEOUT = 30\n")
    assert not_responding_timeout(both, "schedd") == (30, None)
    assert not_responding_timeout(both, "startd") == (600, None)
    value, warning = not_responding_timeout(config("NEGOTIATOR_NOT_RESPONDING_TIMEOUT = 0\n"), "negotiator")
    assert value == DEFAULT_TIMEOUT and warning is not None and "NEGOTIATOR_NOT_RESPONDING_TIMEOUT = 0" in warning
    value, warning = not_responding_timeout(config("NOT_RESPONDING_TIMEOUT = soon\n"), "negotiator")
    assert value == DEFAULT_TIMEOUT and warning is not None and warning.startswith("NOT_RESPONDING_TIMEOUT")


# ---------------------------------------------------------------------------- the daemon's side
def _read_all(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


def test_keepalives_come_from_the_event_loop_and_stop_while_it_is_blocked() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    link = MasterLink.from_environment({"HTCPOOL_ALIVE_FD": str(write_end)}, timeout=1)  # every 1/3 s

    async def test() -> None:
        task = link.start(lambda: None)
        assert task is not None
        await asyncio.sleep(0.8)
        beats, _ = decode_beats(_read_all(read_end))
        assert len(beats) >= 2 and set(beats) == {1.0}
        time.sleep(1.0)  # the loop is stuck (a long computation): no keep-alive may go out
        assert _read_all(read_end) == b""
        task.cancel()

    try:
        asyncio.run(test())
    finally:
        link.close()
        os.close(read_end)


def test_a_daemon_whose_master_is_gone_or_whose_pipe_is_closed_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []  # the kernel's parent-death signal, asked for (not set on the test process)
    monkeypatch.setattr("htcpool.runtime.childalive._die_with_parent", asked.append)

    async def lost(link: MasterLink) -> None:
        gone = asyncio.Event()
        task = link.start(gone.set)
        assert task is not None
        await asyncio.wait_for(gone.wait(), 10)
        await asyncio.wait_for(task, 10)

    not_my_parent = os.getpid()  # this process is not its own parent: its "master" is gone
    link = MasterLink(not_my_parent, None, 3600)
    link.die_with_master()
    asyncio.run(lost(link))
    assert asked == [signal.SIGQUIT]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the master's end is closed: the first keep-alive fails
    link = MasterLink.from_environment({"HTCPOOL_ALIVE_FD": str(write_end)}, 3600)
    asyncio.run(lost(link))
    assert link.alive_fd is None  # closed on the way out


def test_the_stack_dump_is_written_while_the_interpreter_is_busy(tmp_path: Path) -> None:
    log = tmp_path / "BusyLog"
    code = textwrap.dedent(f"""
        import logging, sys
        from htcpool.runtime.childalive import log_stream, register_stack_dump
        logging.basicConfig(filename={str(log)!r})
        assert register_stack_dump(log_stream())
        def busy_computation():
            print("ready", flush=True)
            while True:
                pass
        busy_computation()
    """)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        process.send_signal(DUMP_SIGNAL)
        deadline = time.monotonic() + 20
        while "in busy_computation" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "in busy_computation" in log.read_text(), log.read_text()
        assert process.poll() is None  # the dump does not end it: the master kills it after
    finally:
        process.kill()
        process.wait()


# ---------------------------------------------------------------------------- live
@pytest.fixture
def liveness_pool(tmp_path: Path) -> Iterator[LivePool]:
    pool = LivePool(tmp_path, "NEGOTIATOR_NOT_RESPONDING_TIMEOUT = 3\nMASTER_BACKOFF_CONSTANT = 1\n")
    pool.start()
    yield pool
    pool.stop("fast")


def test_a_stopped_daemon_is_dumped_killed_and_restarted(liveness_pool: LivePool) -> None:
    pool = liveness_pool
    old = pool.pid_of("negotiator")
    identity = identity_of(old)
    assert identity is not None
    # healthy, its keep-alives (every second) keep it: nobody kills it over twice its timeout
    pool.holds_for(lambda: pool.pid_of("negotiator") == old, "the negotiator keeps running", seconds=4)
    os.kill(old, signal.SIGSTOP)
    try:
        pool.wait_restarted("negotiator", old, timeout=40)
    finally:
        if is_live(identity):
            os.kill(old, signal.SIGKILL)
    pool.wait_for(lambda: not is_live(identity), 20, "the hung negotiator gone")
    master_log = pool.layout.log_file("master").read_text()
    assert f"negotiator (pid {old}) has sent no keep-alive for" in master_log, master_log[-2000:]
    assert "NOT_RESPONDING_TIMEOUT 3 s" in master_log
    negotiator_log = pool.layout.log_file("negotiator").read_text()
    assert "most recent call first" in negotiator_log and 'File "' in negotiator_log, negotiator_log[-3000:]
    # the new negotiator sends keep-alives: it outlives its timeout
    new = pool.pid_of("negotiator")
    pool.holds_for(lambda: pool.pid_of("negotiator") == new, "the new negotiator keeps running", seconds=4)
