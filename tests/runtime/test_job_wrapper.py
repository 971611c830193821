"""USER_JOB_WRAPPER and the machine ad: the launch description, then a real starter running
a job through a wrapper (HTCondor's starter runs ``wrapper executable args...``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.runtime.launch import MACHINE_AD_FILE, LaunchError, LaunchSpec, launch_spec
from tests.runtime.test_starter import run, script, start

NOW = 1_800_000_000.0


def _job(iwd: Path, cmd: str, arguments: str = "") -> ClassAd:
    return ClassAd({"Cmd": cmd, "Iwd": str(iwd), "Out": "out.txt", "Err": "err.txt", "Arguments": arguments})


def test_the_wrapper_comes_first_and_the_job_follows_as_its_arguments(tmp_path: Path) -> None:
    machine = ClassAd({"SlotID": 3, "Cpus": 2})
    spec = launch_spec(_job(tmp_path, "/bin/echo", "a 'b c'"), str(tmp_path / "s"), "slot3", {}, machine,
                       "/opt/wrap", now=NOW)
    assert spec.argv == ["/opt/wrap", "/bin/echo", "a", "b c"]
    assert spec.environment["_CONDOR_MACHINE_AD"] == str(tmp_path / "s" / MACHINE_AD_FILE)
    assert "SlotID = 3" in spec.machine_ad_text
    again = LaunchSpec.from_json(spec.to_json())
    assert (again.wrapper, again.machine_ad_text) == (spec.wrapper, spec.machine_ad_text)


def test_without_wrapper_or_machine_ad_nothing_changes(tmp_path: Path) -> None:
    spec = launch_spec(_job(tmp_path, "/bin/echo", "x"), str(tmp_path / "s"), "slot1", {}, now=NOW)
    assert spec.argv == ["/bin/echo", "x"] and "_CONDOR_MACHINE_AD" not in spec.environment


def test_a_relative_wrapper_is_refused_naming_the_knob(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="USER_JOB_WRAPPER"):
        launch_spec(_job(tmp_path, "/bin/echo"), str(tmp_path / "s"), "slot1", {}, None, "wrap.sh", now=NOW)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_a_real_starter_runs_the_job_through_the_wrapper(tmp_path: Path) -> None:
    wrapper = tmp_path / script(tmp_path, 'echo "wrapped $(grep -c . "$_CONDOR_MACHINE_AD")"\nexec "$@"\n',
                                "wrap.sh")
    job = script(tmp_path, 'echo "job $1"\n')
    spec = launch_spec(_job(tmp_path, job, "arg"), str(tmp_path / "scratch"), "slot3", {},
                       ClassAd({"SlotID": 3, "CAN_RUN_WHOLE_MACHINE": True}), str(wrapper), now=NOW)

    async def test() -> None:
        handle, events, _ = await start(spec)
        assert await handle.wait() == 0
        assert events.seen[-1]["exit_code"] == 0

    run(test)
    assert (tmp_path / "out.txt").read_text() == "wrapped 2\njob arg\n"


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_a_wrapper_that_cannot_run_is_a_startup_error_naming_it(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-wrapper")
    spec = launch_spec(_job(tmp_path, script(tmp_path, "exit 0\n")), str(tmp_path / "scratch"), "slot1", {},
                       None, missing, now=NOW)

    async def test() -> None:
        from tests.runtime.test_starter import Events, spawn
        events = Events()
        handle = await spawn(spec, events)
        error = await events.until("error")
        assert "USER_JOB_WRAPPER" in error["message"] and missing in error["message"]
        await handle.wait()

    run(test)
