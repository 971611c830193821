"""The starter with real processes, driven through StarterHandle (each test well under 10 s)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from htcpool.classad import ClassAd
from htcpool.runtime.launch import LaunchSpec, launch_spec
from htcpool.runtime.starter_client import StarterHandle

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")


def script(directory: Path, body: str, name: str = "job.sh") -> str:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return name


def make_spec(iwd: Path, cmd: str, **attrs: Any) -> LaunchSpec:
    ad = ClassAd({"Cmd": cmd, "Iwd": str(iwd), "Out": "out.txt", "Err": "err.txt"})
    for name, value in attrs.items():
        ad[name] = value
    spec = launch_spec(ad, str(iwd / "scratch"), "slot1_1", {"EXTRA": "e"}, now=1_800_000_000.0)
    return dataclasses.replace(spec, usage_interval=0.2)


class Events:
    """Collects a starter's events; lets a test wait for one kind."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self.seen.append(event)

    def kinds(self) -> list[str]:
        return [e["event"] for e in self.seen]

    async def until(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.seen:
                if event["event"] == kind:
                    return event
            await asyncio.sleep(0.02)
        raise AssertionError(f"no {kind} event in {self.seen}")


async def poll(check: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


HANDLES: list[StarterHandle] = []


def run(test: Callable[[], Awaitable[None]], limit: float = 8.0) -> None:
    """Run ``test`` in a fresh loop, then make sure every starter it spawned is gone."""

    async def bounded() -> None:
        try:
            await asyncio.wait_for(test(), limit)
        finally:
            while HANDLES:
                await asyncio.wait_for(HANDLES.pop().kill_family(), 1.0)

    asyncio.run(bounded())


async def spawn(spec: LaunchSpec, events: Events) -> StarterHandle:
    handle = await StarterHandle.spawn(spec, events)
    HANDLES.append(handle)
    return handle


def status(pid: int) -> str:
    try:
        return str(psutil.Process(pid).status())
    except psutil.NoSuchProcess:
        return "gone"


def gone(pid: int) -> bool:
    return status(pid) in ("gone", psutil.STATUS_ZOMBIE)


async def start(spec: LaunchSpec) -> tuple[StarterHandle, Events, int]:
    events = Events()
    handle = await spawn(spec, events)
    started = await events.until("started")
    assert handle.job_pid == started["pid"]
    return handle, events, started["pid"]


def test_streams_arguments_and_environment(tmp_path: Path) -> None:
    cmd = script(tmp_path, 'echo "$1|$2|$FOO|$EXTRA|$_CONDOR_SLOT|$(pwd)"\necho complaint >&2\n')
    spec = make_spec(tmp_path, cmd, Arguments="one 'two words'", Environment="FOO='x y'")

    async def test() -> None:
        handle, events, _ = await start(spec)
        assert await handle.wait() == 0
        exited = events.seen[-1]
        assert exited["event"] == "exited"
        assert (exited["exit_code"], exited["exit_signal"], exited["killed"]) == (0, None, False)
        assert events.kinds().count("exited") == 1 and handle.done

    run(test)
    scratch = str(tmp_path / "scratch")
    assert (tmp_path / "out.txt").read_text() == f"one|two words|x y|e|slot1_1|{scratch}\n"
    assert (tmp_path / "err.txt").read_text() == "complaint\n"
    assert not os.path.exists(scratch)


def test_exit_code_is_reported(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "exit 3\n"))

    async def test() -> None:
        handle, events, _ = await start(spec)
        exited = await events.until("exited")
        assert (exited["exit_code"], exited["exit_signal"]) == (3, None)
        assert exited["wall"] >= 0 and exited["user_cpu"] >= 0

    run(test)


def test_death_by_signal_is_reported(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "kill -USR2 $$\nsleep 5\n"))

    async def test() -> None:
        _, events, _ = await start(spec)
        exited = await events.until("exited")
        assert (exited["exit_code"], exited["exit_signal"]) == (None, int(signal.SIGUSR2))
        assert exited["killed"] is False

    run(test)


def test_suspend_and_continue_reach_the_whole_group(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "sleep 30 &\necho $! > child.pid\nwait\n"))

    async def test() -> None:
        handle, events, pid = await start(spec)
        child_file = tmp_path / "scratch" / "child.pid"
        await poll(lambda: child_file.exists() and child_file.read_text().strip() != "")
        child = int(child_file.read_text())
        await handle.suspend()
        await events.until("suspended")
        await poll(lambda: status(pid) == status(child) == psutil.STATUS_STOPPED)
        await handle.continue_()
        await events.until("continued")
        await poll(lambda: psutil.STATUS_STOPPED not in (status(pid), status(child)))
        await handle.hard_kill()
        exited = await events.until("exited")
        assert exited["exit_signal"] == int(signal.SIGKILL) and exited["killed"] is True
        await handle.wait()
        assert gone(pid) and gone(child)

    run(test)


def test_soft_kill_delivers_the_signal_to_a_trapping_job(tmp_path: Path) -> None:
    body = ("trap 'echo caught > trapped; exit 7' USR1\ntouch ready\n"
            "while true; do sleep 0.05; done\n")
    spec = make_spec(tmp_path, script(tmp_path, body), ShouldTransferFiles="YES")

    async def test() -> None:
        handle, events, _ = await start(spec)
        await poll(lambda: (tmp_path / "scratch" / "ready").exists())
        await handle.soft_kill("SIGUSR1")
        exited = await events.until("exited")
        assert (exited["exit_code"], exited["exit_signal"], exited["killed"]) == (7, None, True)

    run(test)
    assert (tmp_path / "trapped").read_text() == "caught\n"


def test_soft_kill_of_a_suspended_job_sends_killsig_and_continues_it(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "touch ready\nexec sleep 30\n"), KillSig="HUP")

    async def test() -> None:
        handle, events, pid = await start(spec)
        await poll(lambda: (tmp_path / "scratch" / "ready").exists())
        await handle.suspend()
        await poll(lambda: status(pid) == psutil.STATUS_STOPPED)
        await handle.soft_kill()
        exited = await events.until("exited")
        assert exited["exit_signal"] == int(signal.SIGHUP)
        assert "continued" in events.kinds()

    run(test)


def test_hard_kill_stops_a_job_that_ignores_sigterm(tmp_path: Path) -> None:
    body = "trap '' TERM\ntouch ready\nwhile true; do sleep 0.05; done\n"
    spec = make_spec(tmp_path, script(tmp_path, body))

    async def test() -> None:
        handle, events, pid = await start(spec)
        await poll(lambda: (tmp_path / "scratch" / "ready").exists())
        await handle.soft_kill("SIGTERM")
        await asyncio.sleep(0.3)
        assert "exited" not in events.kinds() and not gone(pid)
        await handle.hard_kill()
        exited = await events.until("exited")
        assert exited["exit_signal"] == int(signal.SIGKILL) and exited["killed"] is True

    run(test)


def test_closing_stdin_kills_the_job_and_leaves_no_orphan(tmp_path: Path) -> None:
    body = "sleep 30 &\necho $! > child.pid\nwait\n"
    spec = make_spec(tmp_path, script(tmp_path, body))

    async def test() -> None:
        handle, _, pid = await start(spec)
        child_file = tmp_path / "scratch" / "child.pid"
        await poll(lambda: child_file.exists() and child_file.read_text().strip() != "")
        child = int(child_file.read_text())
        await handle.close()
        await handle.wait()
        assert gone(pid) and gone(child)
        assert not (tmp_path / "scratch").exists()

    run(test)


def test_kill_family_removes_starter_and_job(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "sleep 30 &\nwait\n"))

    async def test() -> None:
        handle, events, pid = await start(spec)
        await handle.kill_family()
        assert handle.done and gone(handle.pid)
        await poll(lambda: gone(pid))  # SIGKILL takes effect when the job is next scheduled
        assert events.kinds().count("exited") == 1
        assert events.seen[-1].get("reported_error") is True
        await handle.hard_kill()  # talking to a dead starter does not raise
        await handle.suspend()

    run(test)


ESCAPE = ("setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' &\n"
          "sleep 30 &\necho $! > child.pid\nwait\n")


async def _escaped_pid(tmp_path: Path) -> int:
    found = tmp_path / "scratch" / "escaped.pid"
    await poll(lambda: found.exists() and found.read_text().strip() != "")
    return int(found.read_text())


def test_a_process_that_left_the_group_is_suspended_and_killed_with_it(tmp_path: Path) -> None:
    """A job process in a session of its own (setsid) is still the job's: SIGSTOP, SIGCONT
    and the hard kill reach it too, as HTCondor's process-family tracking does."""
    spec = make_spec(tmp_path, script(tmp_path, ESCAPE))

    async def test() -> None:
        handle, events, pid = await start(spec)
        escaped = await _escaped_pid(tmp_path)
        assert os.getpgid(escaped) != pid
        await handle.suspend()
        await poll(lambda: status(pid) == status(escaped) == psutil.STATUS_STOPPED)
        await handle.continue_()
        await poll(lambda: psutil.STATUS_STOPPED not in (status(pid), status(escaped)))
        await handle.hard_kill()
        await events.until("exited")
        await handle.wait()
        assert gone(pid) and gone(escaped)

    run(test)


def test_a_process_that_left_the_group_dies_when_the_job_ends(tmp_path: Path) -> None:
    """When the job's leader exits, what is left of the job goes, in its group or not."""
    spec = make_spec(tmp_path, script(tmp_path, "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' &\n"
                                                "while [ ! -s escaped.pid ]; do sleep 0.05; done\n"))

    async def test() -> None:
        handle, events, _ = await start(spec)
        escaped = await _escaped_pid(tmp_path)
        exited = await events.until("exited")
        assert exited["exit_code"] == 0
        await handle.wait()
        await poll(lambda: gone(escaped))

    run(test)


def test_kill_family_reaches_a_process_that_left_the_group(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, ESCAPE))

    async def test() -> None:
        handle, _, pid = await start(spec)
        escaped = await _escaped_pid(tmp_path)
        await handle.kill_family()
        await poll(lambda: gone(pid) and gone(escaped))

    run(test)


def test_missing_executable_is_an_error_event(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, "no-such-program")

    async def test() -> None:
        events = Events()
        handle = await spawn(spec, events)
        error = await events.until("error")
        assert "no-such-program" in error["message"]
        await handle.wait()
        assert events.kinds() == ["error", "exited"]
        assert events.seen[-1]["reported_error"] is True

    run(test)


def test_unreadable_stdin_is_an_error_event(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "cat\n"), In="absent.txt")

    async def test() -> None:
        events = Events()
        handle = await spawn(spec, events)
        assert "absent.txt" in (await events.until("error"))["message"]
        await handle.wait()

    run(test)


def test_input_and_output_transfer(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("input\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.txt").write_text("from a directory\n")
    body = ("cat in.txt x.txt > result.txt\necho more >> result.txt\n"
            "mkdir sub\necho x > sub/ignored\n")
    spec = make_spec(tmp_path, script(tmp_path, body), ShouldTransferFiles="YES",
                     TransferInput="in.txt,data/")

    async def test() -> None:
        handle, events, _ = await start(spec)
        assert (await events.until("exited"))["exit_code"] == 0
        await handle.wait()  # the scratch directory is removed after the report, before the starter ends

    run(test)
    assert (tmp_path / "result.txt").read_text() == "input\nfrom a directory\nmore\n"
    assert not (tmp_path / "sub").exists() and not (tmp_path / ".job.ad").exists()
    assert not (tmp_path / "scratch").exists()


def test_listed_outputs_and_the_job_ad(tmp_path: Path) -> None:
    body = 'cp "$_CONDOR_JOB_AD" ad.copy\necho skipped > other.txt\n'
    spec = make_spec(tmp_path, script(tmp_path, body), ShouldTransferFiles="YES",
                     TransferOutput="ad.copy,missing.txt", ClusterId=12)

    async def test() -> None:
        handle, events, _ = await start(spec)
        exited = await events.until("exited")
        assert exited["exit_code"] == 0
        assert [p for p in exited["transfer_errors"] if "missing.txt" in p] == exited["transfer_errors"]
        assert len(exited["transfer_errors"]) == 1

    run(test)
    assert "ClusterId = 12" in (tmp_path / "ad.copy").read_text()
    assert not (tmp_path / "other.txt").exists()


def test_usage_events_arrive_while_the_job_runs(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, script(tmp_path, "while true; do :; done\n"))

    async def test() -> None:
        handle, events, _ = await start(spec)
        await poll(lambda: events.kinds().count("usage") >= 3, timeout=4.0)
        await handle.hard_kill()
        await handle.wait()
        usage = [e for e in events.seen if e["event"] == "usage"]
        assert set(usage[-1]) >= {"event", "update", "cpu_load", "rss_kb", "rss_peak_kb", "image_size_kb",
                                  "user_cpu", "sys_cpu", "cpus_usage", "oom_kills"}
        assert max(u["cpu_load"] for u in usage) > 0.3
        assert usage[-1]["rss_kb"] > 0 and usage[-1]["image_size_kb"] >= usage[-1]["rss_kb"]
        assert usage[-1]["user_cpu"] + usage[-1]["sys_cpu"] > 0.1
        assert events.seen[-1]["user_cpu"] >= usage[-1]["user_cpu"]

    run(test)


def test_malformed_first_line_is_an_error_event(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "htcpool.runtime.starter"], input=b"{nonsense\n",
                            capture_output=True, timeout=8)
    event = json.loads(result.stdout.splitlines()[0])
    assert event["event"] == "error" and "launch description" in event["message"]
    assert result.returncode != 0
