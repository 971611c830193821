"""A pool started by root serves every local user, and runs each job as its owner (issue 17).

Two throw-away accounts are made for the test (``useradd``; removed afterwards) and a third for
``SLOT1_USER``. Root starts a pool in a fresh directory under ``/tmp``; each user submits with
nothing but ``HTCPOOL_LOCAL_DIR`` set, through ``runuser``. The jobs report who they are, what
their scratch directory looks like, and what happens when they try to read the other user's
scratch directory and the pool's keys. Skipped, with the reason, where the test is not root or
the account tools are missing.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.pool import FAST
from tests.os_users import NOT_FOR_OTHERS

pytestmark = [
    pytest.mark.skipif(NOT_FOR_OTHERS is not None, reason=str(NOT_FOR_OTHERS)),
    pytest.mark.skipif(os.geteuid() != 0, reason="a system pool is started by root"),
    pytest.mark.skipif(not (shutil.which("useradd") and shutil.which("userdel") and shutil.which("runuser")),
                       reason="useradd, userdel and runuser are needed to make the test's users"),
]
HTCPOOL = str(Path(sys.executable).parent / "htcpool")

JOB = """#!/bin/sh
echo "user=$(id -un)"
echo "scratch=$(stat -c '%U %a' "$_CONDOR_SCRATCH_DIR")"
echo "$_CONDOR_SCRATCH_DIR" > "$1/scratch.$(id -un)"
for key in "$2/passwords.d/POOL" "$2/pool.token"; do
    cat "$key" > /dev/null 2>&1 && echo "read $key" || echo "denied $key"
done
i=0
while [ ! -s "$1/scratch.$3" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
other=$(cat "$1/scratch.$3")
ls "$other" > /dev/null 2>&1 && echo "listed other" || echo "denied other"
cat "$other/.job.ad" > /dev/null 2>&1 && echo "read other" || echo "denied other ad"
echo made > result.txt
"""


def _sh(*argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, **kw)  # type: ignore[call-overload]


@pytest.fixture
def accounts() -> Iterator[list[str]]:
    names = [f"htcp{tag}{secrets.token_hex(3)}" for tag in ("a", "b", "s")]
    made: list[str] = []
    try:
        for name in names:
            done = _sh("useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh", name)
            if done.returncode != 0:
                pytest.skip(f"useradd {name} failed: {done.stderr.strip()}")
            made.append(name)
        yield names
    finally:
        for name in made:
            _sh("userdel", name)


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="htcpool-system-", dir="/tmp"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CONDOR_") and k != "CONDOR_CONFIG"}
    return {**env, **extra}


def _as(user: str, cwd: Path, pool: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return _sh("runuser", "-u", user, "--", "env", f"HTCPOOL_LOCAL_DIR={pool}", "HOME=/nonexistent",
               HTCPOOL, *argv, cwd=str(cwd), env=_environment())


def _wait_text(path: Path, needle: str, timeout: float, why: object) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{path} never held {needle!r} in {timeout} s; it holds {text!r}; {why()}")


def test_root_pool_runs_each_users_job_as_that_user(accounts: list[str], base: Path) -> None:
    a, b, slot_user = accounts
    pool = base / "pool"
    pool.mkdir(mode=0o755)
    from htcpool.runtime.pool import PERSONAL_CONFIG
    (pool / "condor_config").write_text(PERSONAL_CONFIG.format(local_dir=pool) + FAST
                                        + f"NUM_CPUS = 3\nSLOT1_USER = {slot_user}\n"
                                        "STARTER_ALLOW_RUNAS_OWNER = WantSlotUser =!= true\n")
    shared = base / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    homes = {}
    for user in (a, b):
        homes[user] = base / user
        homes[user].mkdir()
        entry = pwd.getpwnam(user)
        os.chown(homes[user], entry.pw_uid, entry.pw_gid)
        os.chmod(homes[user], 0o700)
    up = _sh(HTCPOOL, "up", "--local-dir", str(pool), env=_environment())
    assert up.returncode == 0, up
    try:
        _check_modes(pool)
        _check_jobs(pool, shared, homes, a, b, slot_user)
    finally:
        down = _sh(HTCPOOL, "down", "--local-dir", str(pool), env=_environment())
        assert down.returncode == 0, down


def _check_modes(pool: Path) -> None:
    """What every user may read or connect to, and what is root's alone."""
    wanted = {pool: 0o755, pool / "condor_config": 0o644, pool / "run": 0o755, pool / "run" / "schedd.sock": 0o666,
              pool / "passwords.d": 0o700, pool / "passwords.d" / "POOL": 0o600, pool / "pool.token": 0o600,
              pool / "spool": 0o700, pool / "log": 0o700, pool / "execute": 0o711}
    found = {path: oct(stat.S_IMODE(path.stat().st_mode)) for path in wanted}
    assert found == {path: oct(mode) for path, mode in wanted.items()}, found
    assert all(path.stat().st_uid == 0 for path in wanted)


def _check_jobs(pool: Path, shared: Path, homes: dict[str, Path], a: str, b: str, slot_user: str) -> None:
    for user, other in ((a, b), (b, a)):
        (homes[user] / "job.sh").write_text(JOB)
        (homes[user] / "job.sub").write_text(
            f"executable = job.sh\narguments = {shared} {pool} {other}\noutput = out.txt\nerror = err.txt\n"
            "request_cpus = 1\nrequest_memory = 64\nqueue\n")
        entry = pwd.getpwnam(user)
        for name in ("job.sh", "job.sub"):
            os.chown(homes[user] / name, entry.pw_uid, entry.pw_gid)
        os.chmod(homes[user] / "job.sh", 0o755)
        done = _as(user, homes[user], pool, "submit", "job.sub")
        assert done.returncode == 0 and "submitted to cluster" in done.stdout, done
    for user in (a, b):
        out = homes[user] / "out.txt"
        text = _wait_text(out, "denied other ad", 90,
                          lambda u=user: (homes[u] / "err.txt").read_text() if (homes[u] / "err.txt").exists() else "")
        assert f"user={user}" in text, text
        assert f"scratch={user} 700" in text, text
        assert f"denied {pool}/passwords.d/POOL" in text and f"denied {pool}/pool.token" in text, text
        assert "denied other" in text and "read other" not in text and "listed other" not in text, text
        result = homes[user] / "result.txt"
        _wait_text(result, "made", 30, lambda u=user: sorted(p.name for p in homes[u].iterdir()))
        for path in (out, result):
            assert path.stat().st_uid == pwd.getpwnam(user).pw_uid, (path, path.stat().st_uid)
    seen = _as(a, homes[a], pool, "q", "-allusers")
    history = _as(b, homes[b], pool, "history")
    assert seen.returncode == 0 and history.returncode == 0, (seen, history)
    assert a in seen.stdout + history.stdout and b in history.stdout, (seen.stdout, history.stdout)
    # a job that does not ask to run as its owner (RunAsOwner), or that the startd's
    # STARTER_ALLOW_RUNAS_OWNER does not let, runs as the slot's user; its files in Iwd are still
    # read and written as its owner
    (homes[a] / "slot.sub").write_text("executable = /usr/bin/id\narguments = -un\noutput = slot.txt\n"
                                       "+RunAsOwner = False\nqueue\n")
    (homes[b] / "slot.sub").write_text("executable = /usr/bin/id\narguments = -un\noutput = slot.txt\n"
                                       "+WantSlotUser = true\nqueue\n")  # STARTER_ALLOW_RUNAS_OWNER says no
    for user in (a, b):
        done = _as(user, homes[user], pool, "submit", "slot.sub")
        assert done.returncode == 0, done
    for user in (a, b):
        _wait_text(homes[user] / "slot.txt", slot_user, 60,
                   lambda u=user: _as(u, homes[u], pool, "q", "-hold").stdout)
        assert (homes[user] / "slot.txt").stat().st_uid == pwd.getpwnam(user).pw_uid
