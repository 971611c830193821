"""The schedd's local runs (runtime/local_universe.py) with real starters: a job runs in its Iwd
with a scratch directory, a stop kills it, an unknown owner is a start failure."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import JobEvent
from htcpool.runtime.local_universe import LocalUniverse, error_number
from htcpool.schedd import LocalJobReport, StartLocalJob, StopLocalJob
from tests.os_users import NOT_FOR_OTHERS


def job_ad(tmp_path: Path, body: str) -> ClassAd:
    exe = tmp_path / "job.sh"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return ClassAd({"Cmd": str(exe), "Iwd": str(tmp_path), "Out": "out.txt", "JobUniverse": 12,
                    "ShouldTransferFiles": "IF_NEEDED", "Owner": "someone"})


def _has_account(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def run_local(tmp_path: Path, test: Callable[[LocalUniverse, list[LocalJobReport]], Awaitable[None]],
              execute: Path | None = None) -> None:
    reports: list[LocalJobReport] = []

    async def go() -> None:
        local = LocalUniverse(execute or tmp_path / "local_univ_execute", tmp_path / "LocalStarterLog",
                              reports.append, time.time)
        try:
            await asyncio.wait_for(test(local, reports), 10)
        finally:
            await local.close()

    asyncio.run(go())


async def until(reports: list[LocalJobReport], event: JobEvent) -> LocalJobReport:
    while True:
        found = [r for r in reports if r.update.event == event]
        if found:
            return found[0]
        await asyncio.sleep(0.02)


def test_a_local_job_runs_in_its_iwd_and_its_exit_comes_back(tmp_path: Path) -> None:
    async def test(local: LocalUniverse, reports: list[LocalJobReport]) -> None:
        local.start(StartLocalJob("run-1", 1, 0, job_ad(tmp_path, 'echo "$(pwd) $_CONDOR_SCRATCH_DIR"\nexit 4\n')))
        exited = await until(reports, JobEvent.EXITED)
        assert exited.update.claim_id == "run-1" and exited.update.exit_code == 4

    run_local(tmp_path, test)
    where, scratch = (tmp_path / "out.txt").read_text().split()
    assert where == str(tmp_path) and scratch.startswith(str(tmp_path / "local_univ_execute"))
    assert not Path(scratch).exists()  # the scratch directory is gone with the run


def test_a_stop_sends_the_kill_signal(tmp_path: Path) -> None:
    async def test(local: LocalUniverse, reports: list[LocalJobReport]) -> None:
        local.start(StartLocalJob("run-2", 1, 0, job_ad(tmp_path, "trap 'echo got-term; exit 9' TERM\n"
                                                                   "while :; do sleep 0.05; done\n")))
        await until(reports, JobEvent.STARTED)
        await local.stop(StopLocalJob("run-2", "SIGTERM", 5.0))
        exited = await until(reports, JobEvent.EXITED)
        assert exited.update.killed and exited.update.exit_code == 9

    run_local(tmp_path, test)
    assert (tmp_path / "out.txt").read_text() == "got-term\n"


def test_an_owner_without_an_account_cannot_run(tmp_path: Path) -> None:
    async def test(local: LocalUniverse, reports: list[LocalJobReport]) -> None:
        local.start(StartLocalJob("run-3", 1, 0, job_ad(tmp_path, "exit 0\n"), user="no-such-user-htcpool"))
        error = await until(reports, JobEvent.ERROR)
        assert "no account 'no-such-user-htcpool'" in error.update.message
        await until(reports, JobEvent.EXITED)

    run_local(tmp_path, test)


def test_error_numbers_from_the_starters_messages() -> None:
    assert error_number("cannot execute /x: No such file or directory") == 2
    assert error_number("cannot execute /x: Permission denied") == 13
    assert error_number("something else") == 0


@pytest.mark.skipif(os.geteuid() != 0 or not _has_account("nobody"), reason="needs root and a 'nobody' account")
@pytest.mark.skipif(NOT_FOR_OTHERS is not None, reason=str(NOT_FOR_OTHERS))
def test_where_the_schedd_is_root_the_job_runs_as_its_owner() -> None:
    where = Path(tempfile.mkdtemp(prefix="htcpool-local-"))  # not under a private temporary directory
    try:
        where.chmod(0o777)
        (where / "execute").mkdir(mode=0o755)

        async def test(local: LocalUniverse, reports: list[LocalJobReport]) -> None:
            local.start(StartLocalJob("run-4", 1, 0, job_ad(where, "id -un\n"), user="nobody"))
            exited = await until(reports, JobEvent.EXITED)
            assert exited.update.exit_code == 0, reports

        run_local(where, test, execute=where / "execute")
        assert (where / "out.txt").read_text() == "nobody\n"
    finally:
        shutil.rmtree(where, ignore_errors=True)
