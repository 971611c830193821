"""A root starter runs its job as the job's account (runtime/job_account.py): the job's identity,
its scratch directory, the files it reads and writes on the submit side."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.runtime.runas import Account, os_account
from tests.runtime.test_starter import Events, make_spec, run, script, spawn, start

NOBODY = os_account("nobody")
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or NOBODY is None,
                                reason="running a job as another account needs root and the nobody account")


@pytest.fixture
def iwd() -> Iterator[Path]:
    """A submit directory of nobody's, in a directory nobody can reach."""
    assert NOBODY is not None
    base = Path(tempfile.mkdtemp(prefix="htcpool-runas-", dir="/tmp"))
    os.chmod(base, 0o755)
    path = base / "iwd"
    path.mkdir()
    os.chown(path, NOBODY.uid, NOBODY.gid)
    try:
        yield path
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _as_nobody(spec: object) -> object:
    return dataclasses.replace(spec, run_as=NOBODY)  # type: ignore[type-var]


def test_job_runs_as_its_account_in_its_own_scratch(iwd: Path) -> None:
    body = 'id -un\nid -u\nstat -c "%u %a" "$_CONDOR_SCRATCH_DIR"\necho made > result.txt\n'
    spec = _as_nobody(make_spec(iwd, script(iwd, body), ShouldTransferFiles="YES"))

    async def test() -> None:
        _handle, events, _ = await start(spec)  # type: ignore[arg-type]
        assert (await events.until("exited"))["exit_code"] == 0

    run(test)
    assert NOBODY is not None
    lines = (iwd / "out.txt").read_text().split("\n")
    assert lines[:3] == ["nobody", str(NOBODY.uid), f"{NOBODY.uid} 700"], lines
    for name in ("out.txt", "err.txt", "result.txt"):
        assert (iwd / name).stat().st_uid == NOBODY.uid, name


def test_an_input_the_account_cannot_read_is_refused(iwd: Path) -> None:
    secret = iwd.parent / "secret.txt"
    secret.write_text("root's\n")
    os.chmod(secret, 0o600)
    spec = _as_nobody(make_spec(iwd, script(iwd, "cat secret.txt\n"), ShouldTransferFiles="YES",
                                TransferInput=str(secret)))

    async def test() -> None:
        events = Events()
        await spawn(spec, events)  # type: ignore[arg-type]
        error = await events.until("error")
        assert "Permission denied" in error["message"], error

    run(test)
    assert not (iwd / "secret.txt").exists()


DAEMON = os_account("daemon")


@pytest.mark.skipif(DAEMON is None or DAEMON.uid == 0, reason="needs a second unprivileged account, daemon")
def test_a_job_run_as_another_account_has_its_owners_files_handled_as_the_owner(iwd: Path) -> None:
    """SLOT<N>_USER or nobody runs the job; the owner's Iwd (private to the owner) is still read
    and written as the owner: inputs in, streams, outputs back."""
    assert DAEMON is not None and NOBODY is not None
    os.chown(iwd, DAEMON.uid, DAEMON.gid)
    os.chmod(iwd, 0o700)
    (iwd / "in.txt").write_text("owner's input\n")
    os.chown(iwd / "in.txt", DAEMON.uid, DAEMON.gid)
    os.chmod(iwd / "in.txt", 0o600)
    name = script(iwd, "id -un\ncat in.txt\necho made > result.txt\n")
    scratch = str(iwd.parent / "execute" / "dir_1")
    spec = dataclasses.replace(make_spec(iwd, name, ShouldTransferFiles="YES", TransferInput="in.txt"),
                               run_as=NOBODY, owner_account=DAEMON, scratch_dir=scratch, cwd=scratch)

    async def test() -> None:
        _handle, events, _ = await start(spec)
        assert (await events.until("exited"))["exit_code"] == 0

    run(test)
    assert stat.S_IMODE(iwd.stat().st_mode) == 0o700  # the owner's directory was left alone
    assert (iwd / "out.txt").read_text() == "nobody\nowner's input\n"
    for produced in ("out.txt", "result.txt"):
        assert (iwd / produced).stat().st_uid == DAEMON.uid, produced


def test_account_round_trip() -> None:
    account = Account("x", 5, 6, (6, 7), "/h")
    assert Account.from_json(account.to_json()) == account
    assert Account.from_json(None) is None
    with pytest.raises(ValueError):
        Account.from_json("x")


def test_a_root_schedd_writes_user_logs_as_the_owner(iwd: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from htcpool.classad import ClassAd
    from htcpool.runtime.joblog import UserLogWriter
    from htcpool.schedd import eventlog as ev

    assert NOBODY is not None
    private = iwd.parent / "root-only"
    private.mkdir(mode=0o700)
    target = private / "stolen.log"
    (iwd / "link.log").symlink_to(target)
    writer = UserLogWriter(0, as_owner=True)
    with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
        for proc, path in enumerate((iwd / "job.log", iwd / "link.log", private / "direct.log")):
            ad = ClassAd({"ClusterId": 1, "ProcId": proc, "Owner": "nobody", "UserLog": str(path)})
            writer.write(ev.LogEvent(ev.SUBMIT, 1, proc, 1_700_000_000.0, host="<127.0.0.1:9618>"), ad)
        ghost = ClassAd({"ClusterId": 1, "ProcId": 9, "Owner": "no-such-user-here", "UserLog": str(iwd / "g.log")})
        writer.write(ev.LogEvent(ev.SUBMIT, 1, 9, 1_700_000_000.0, host="<127.0.0.1:9618>"), ghost)
    assert (iwd / "job.log").stat().st_uid == NOBODY.uid
    assert not target.exists() and not (private / "direct.log").exists()
    assert not (iwd / "g.log").exists()
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "Permission denied" in messages and "'no-such-user-here' has no account" in messages, messages
    assert os.geteuid() == 0 and os.getegid() == 0  # the writer gave its identity back
    probe = private / "root-can-still-write"
    probe.write_text("x")
    assert probe.stat().st_uid == 0


def _real_cgroups() -> tuple[object, str]:
    from htcpool.runtime.cgroups import detect

    found = detect()
    return found.version, found.reason


@pytest.mark.skipif(_real_cgroups()[0] is None, reason=f"no usable cgroups here: {_real_cgroups()[1]}")
def test_a_job_run_as_its_account_is_still_confined(iwd: Path) -> None:
    from htcpool.runtime.cgroups import CgroupSpec, MemoryLimits

    version, _ = _real_cgroups()
    cgroup = CgroupSpec("/sys/fs/cgroup", version, "htcondor", f"htcpool_runas_{os.getpid()}",  # type: ignore[arg-type]
                        MemoryLimits(hard_mb=64))
    spec = dataclasses.replace(make_spec(iwd, script(iwd, "id -un\ncat /proc/self/cgroup\n"),
                                         ShouldTransferFiles="YES"), run_as=NOBODY, cgroup=cgroup)

    async def test() -> None:
        _handle, events, _ = await start(spec)
        started = events.seen[0]
        assert started["confinement_problems"] == [], started
        assert (await events.until("exited"))["exit_code"] == 0

    run(test)
    text = (iwd / "out.txt").read_text()
    assert text.startswith("nobody\n") and f"htcpool_runas_{os.getpid()}" in text, text
