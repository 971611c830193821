"""Starters forked by the fork server behave as exec'd ones, and cost far less to start.

The behaviour tests of ``test_starter`` are run again with their starters forked by a
``ForkServer`` (the module's ``spawn`` helper replaced): output and exit, suspension and kills
reaching the whole process tree (processes that left the group too), a closed stdin killing the
job, a missing executable reported as an error. Then what is the fork server's own: a job
through USER_JOB_WRAPPER, the job reniced, the server's end, and the cost."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import startd as m
from htcpool.runtime.forkserver import ForkServer
from htcpool.runtime.job_setup import parse_renice, renice_increment
from htcpool.runtime.launch import LaunchSpec
from htcpool.runtime.starter_client import StarterHandle, child_environment
from tests.runtime import test_starter as base

#: each test's event loop -> its fork server
SERVERS: dict[asyncio.AbstractEventLoop, ForkServer] = {}


async def forked_spawn(spec: LaunchSpec, events: base.Events) -> StarterHandle:
    """``test_starter.spawn``, the starter forked by this loop's server."""
    loop = asyncio.get_running_loop()
    if loop not in SERVERS:
        SERVERS[loop] = ForkServer(child_environment(), warm=0)  # each test's own starters only
    handle = await StarterHandle.spawn(spec, events, forkserver=SERVERS[loop])
    base.HANDLES.append(handle)
    return handle


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(base, "spawn", forked_spawn)
    yield
    while SERVERS:  # each test's loop is gone: close the socket, the server exits on it
        server = SERVERS.pop(next(iter(SERVERS)))
        if server.sock is not None:
            server.sock.close()
        if server.process is not None:
            with contextlib.suppress(ChildProcessError):  # reaped already by its loop's watcher
                os.waitpid(server.process.pid, 0)


SAME_AS_EXEC: list[Callable[[Path], None]] = [
    base.test_streams_arguments_and_environment,
    base.test_exit_code_is_reported,
    base.test_suspend_and_continue_reach_the_whole_group,
    base.test_hard_kill_stops_a_job_that_ignores_sigterm,
    base.test_closing_stdin_kills_the_job_and_leaves_no_orphan,
    base.test_kill_family_removes_starter_and_job,
    base.test_a_process_that_left_the_group_is_suspended_and_killed_with_it,
    base.test_kill_family_reaches_a_process_that_left_the_group,
    base.test_missing_executable_is_an_error_event,
]


@pytest.mark.parametrize("case", SAME_AS_EXEC, ids=[c.__name__[5:] for c in SAME_AS_EXEC])
def test_a_forked_starter_behaves_as_an_exec_one(case: Callable[[Path], None], tmp_path: Path, forked: None) -> None:
    case(tmp_path)


def test_the_job_runs_through_the_wrapper_and_is_reniced(tmp_path: Path, forked: None) -> None:
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text('#!/bin/sh\necho "wrapped $*"\nexec "$@"\n')
    wrapper.chmod(0o755)
    job = base.script(tmp_path, "cut -d' ' -f19 /proc/$$/stat\n")
    spec = dataclasses.replace(base.make_spec(tmp_path, job), wrapper=str(wrapper), nice=7)
    mine = os.getpriority(os.PRIO_PROCESS, 0)

    async def test() -> None:
        handle, events, _ = await base.start(spec)
        assert (await events.until("exited"))["exit_code"] == 0

    base.run(test)
    lines = (tmp_path / "out.txt").read_text().split("\n")
    assert lines[0] == f"wrapped {tmp_path / 'job.sh'}" and int(lines[1]) == min(mine + 7, 19)


def test_when_the_server_ends_its_starters_end_is_still_seen(tmp_path: Path, forked: None) -> None:
    spec = base.make_spec(tmp_path, base.script(tmp_path, "sleep 30\n"))

    async def test() -> None:
        handle, events, pid = await base.start(spec)
        server = SERVERS[asyncio.get_running_loop()]
        await server.close()  # the server exits; the starter and its job go on
        assert server.process is not None and server.process.returncode == 0
        assert not base.gone(pid) and handle.process.returncode is None
        await handle.hard_kill()
        assert await asyncio.wait_for(handle.wait(), 5) == 255  # from its pidfd: ended, status unknown
        assert events.kinds().count("exited") == 1

    base.run(test)


def test_starters_forked_ahead_take_the_next_jobs_and_end_quietly_when_not_needed(tmp_path: Path) -> None:
    """``warm`` starters wait forked ahead: a job's start takes one (no fork on its way) and another
    is forked in its place; those never given a job end with status 0 when the server closes."""
    spec = base.make_spec(tmp_path, "/bin/true")

    async def waiting(server: ForkServer, count: int) -> set[int]:
        deadline = time.monotonic() + 10
        while len(server._ready) < count:
            assert time.monotonic() < deadline, f"{len(server._ready)} starters forked ahead, {count} wanted"
            await asyncio.sleep(0.01)
        return {child.pid for _, child in server._ready}

    async def test() -> None:
        server = ForkServer(child_environment(), warm=2)
        try:
            server.warm_up(None)
            ahead = await waiting(server, 2)
            events = base.Events()
            handle = await StarterHandle.spawn(spec, events, forkserver=server)
            assert handle.pid in ahead
            assert await asyncio.wait_for(handle.wait(), 10) == 0 and events.kinds().count("exited") == 1
            assert len(await waiting(server, 2)) == 2
            left = [child for _, child in server._ready]
        finally:
            await server.close()
        assert [await asyncio.wait_for(child.wait(), 5) for child in left] == [0, 0]

    base.run(test)


def test_a_waiting_starter_is_given_its_job_without_awaiting(tmp_path: Path) -> None:
    """``StarterHandle.warm`` takes a starter forked ahead and writes its launch at once (no pass
    through the event loop between the job's start and the starter's wake-up); with none waiting
    it gives None, and the start goes the usual way."""
    spec = base.make_spec(tmp_path, "/bin/true")

    async def test() -> None:
        server = ForkServer(child_environment(), warm=1)
        try:
            assert StarterHandle.warm(server, spec, base.Events()) is None  # nothing forked yet
            server.warm_up(None)
            deadline = time.monotonic() + 10
            while not server.has_warm(None):
                assert time.monotonic() < deadline, "no starter forked ahead"
                await asyncio.sleep(0.01)
            assert StarterHandle.warm(server, spec, base.Events(), "other.log") is None  # not for that log
            events = base.Events()
            handle = StarterHandle.warm(server, spec, events)
            assert handle is not None
            assert await asyncio.wait_for(handle.wait(), 10) == 0 and events.kinds().count("exited") == 1
        finally:
            await server.close()

    base.run(test)


def test_renice_increment_is_evaluated_per_job(caplog: pytest.LogCaptureFixture) -> None:
    job = m.StartJob("slot1", "c", ClassAd({"ImageSize": 5000}))
    assert renice_increment(parse_renice("ImageSize > 1000 ? 12 : 3"), job) == 12
    assert renice_increment(parse_renice("40"), job) == 19
    assert renice_increment(parse_renice(""), job) == 0
    assert renice_increment(parse_renice("NoSuchAttribute"), job) == 0
    assert "JOB_RENICE_INCREMENT = NoSuchAttribute does not evaluate to a number" in caplog.text
    assert parse_renice("10 +") is None and "is not a ClassAd expression" in caplog.text


def test_forking_costs_far_less_than_starting_an_interpreter(tmp_path: Path) -> None:
    """Eight starters of ``/bin/true`` each way, from spawn to the starter's end."""

    async def timed(server: ForkServer | None) -> float:
        began = time.monotonic()
        handles: list[Any] = []
        for i in range(8):
            scratch = str(tmp_path / f"s{id(server)}_{i}")
            spec = dataclasses.replace(base.make_spec(tmp_path, "/bin/true"), scratch_dir=scratch, cwd=scratch)
            handles.append(await StarterHandle.spawn(spec, base.Events(), forkserver=server))
        for handle in handles:
            await handle.wait()
        return time.monotonic() - began

    async def compare() -> tuple[float, float]:
        server = ForkServer(child_environment())
        try:
            await timed(server)  # the server's own start is paid once
            return await timed(server), await timed(None)
        finally:
            await server.close()

    forked_time, exec_time = asyncio.run(compare())
    assert forked_time * 2 < exec_time, (forked_time, exec_time)
