"""Several users on one host: identities from the OS, ownership, refusals at every daemon.

A pool started by root serves two OS users made for the test (``useradd``, removed afterwards).
They use the tools as any local user would, through the daemons' Unix sockets, with no token:
each is known by their uid, owns the jobs they submit whatever their ads claim, and may act only
on their own jobs. On the TCP ports nothing happens without a token; a token the pool's
administrator made proves its identity there, and that identity, not the client's, owns what it
submits.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from htcpool.cli.submit import DiskFileSystem
from htcpool.protocol import QueryAds, Submit, decode, encode
from htcpool.runtime.http import PATH
from htcpool.submit import SubmitHost, submit_description
from tests.e2e.pool import LivePool
from tests.os_users import NOT_FOR_OTHERS, made_users

pytestmark = [pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None,
                                 reason="needs root and useradd to make the test's users"),
              pytest.mark.skipif(NOT_FOR_OTHERS is not None, reason=str(NOT_FOR_OTHERS))]

JOB = """\
executable = /bin/sleep
arguments = 600
+Owner = "mallory"
+User = "mallory@evil.example"
queue
"""


@pytest.fixture
def users() -> Iterator[tuple[str, ...]]:
    with made_users("htcsa", "htcsb") as names:
        yield names


@pytest.fixture
def pool() -> Iterator[LivePool]:
    root = Path(tempfile.mkdtemp(prefix="htcsec-"))
    os.chmod(root, 0o755)  # pytest's own directories are root's only; the users must reach the pool
    live = LivePool(root)
    os.chmod(live.jobs_dir, 0o1777)
    try:
        live.start()
        yield live
    finally:
        try:
            live.stop("fast")
        finally:
            shutil.rmtree(root, ignore_errors=True)


def as_user(pool: LivePool, user: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``htcpool ARGS`` run by the OS user ``user``, pointed at the pool like any local user."""
    home = pool.jobs_dir / user
    home.mkdir(exist_ok=True)
    entry = pwd.getpwnam(user)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "HTCPOOL_LOCAL_DIR": str(pool.layout.root), "USER": user, "LOGNAME": user}
    return subprocess.run([sys.executable, "-m", "htcpool", *args], capture_output=True, text=True,
                          timeout=60, cwd=home, env=env, user=entry.pw_uid, group=entry.pw_gid)


def submit_as(pool: LivePool, user: str) -> int:
    home = pool.jobs_dir / user
    home.mkdir(exist_ok=True)
    (home / "job.sub").write_text(JOB)
    done = as_user(pool, user, "submit", "-terse", "job.sub")
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split(".")[0])


def test_two_users_own_their_jobs_and_only_theirs(pool: LivePool, users: tuple[str, str]) -> None:
    alice, bob = users
    a, b = submit_as(pool, alice), submit_as(pool, bob)
    ad_a, ad_b = pool.job(a), pool.job(b)
    assert ad_a is not None and ad_b is not None
    assert ad_a["Owner"] == alice and str(ad_a["User"]).startswith(f"{alice}@"), "the forged Owner stays"
    assert ad_b["Owner"] == bob and "mallory" not in str(ad_b["User"])

    refused = as_user(pool, bob, "rm", str(a))
    assert refused.returncode != 0 and pool.job(a) is not None, refused.stdout + refused.stderr
    refused = as_user(pool, bob, "qedit", str(a), "JobPrio", "5")
    assert refused.returncode != 0 and f"may not change a job owned by {alice}" in refused.stderr + refused.stdout
    refused = as_user(pool, alice, "hold", str(b))
    assert refused.returncode != 0
    assert pool.status(b) != 5

    assert as_user(pool, bob, "hold", str(b)).returncode == 0
    pool.wait_for(lambda: pool.status(b) == 5, 20, "bob's job held by bob")
    assert as_user(pool, alice, "rm", str(a)).returncode == 0
    pool.wait_for(lambda: pool.status(a) == 3, 20, "alice's job removed by alice")

    mine = as_user(pool, alice, "ping", "-table", "READ", "WRITE", "ADMINISTRATOR")
    assert mine.returncode == 1  # not an administrator
    rows = {line.split()[0]: line.split() for line in mine.stdout.splitlines()[1:]}
    assert rows["READ"][1:] == ["FS", "none", "ALLOW", rows["READ"][-1]] and rows["READ"][-1].startswith(f"{alice}@")
    assert rows["ADMINISTRATOR"][3] == "DENY"
    off = as_user(pool, alice, "off", "-daemon", "schedd")
    assert off.returncode != 0 and "access level ADMINISTRATOR is needed" in off.stderr
    assert pool.layout.read_address("schedd") is not None
    tcp_ports_refuse_requests_without_a_valid_token(pool)


def tcp_ports_refuse_requests_without_a_valid_token(pool: LivePool) -> None:
    """Part of the test above (one pool: a pool takes seconds to start)."""
    daemons = ("master", "collector", "negotiator", "schedd", "startd")
    body = encode(QueryAds("Machine"))
    with httpx.Client(timeout=10, trust_env=False) as http:
        for daemon in daemons:
            url = pool.layout.read_address(daemon)
            assert url is not None
            for headers in ({}, {"Authorization": "Bearer not-a-token"}):
                r = http.post(url + PATH, json=body, headers=headers)
                assert r.status_code == 401, (daemon, headers, r.text)
        log = pool.log_text("collector")
        assert "PERMISSION DENIED to unauthenticated@unmapped from 127.0.0.1:" in log

        made = subprocess.run([sys.executable, "-m", "htcpool", "token_create", "-identity", "carol@pool.example",
                               "-lifetime", "300"], capture_output=True, text=True, timeout=60,
                              env={**{k: v for k, v in os.environ.items() if k != "CONDOR_CONFIG"},
                                   "HTCPOOL_LOCAL_DIR": str(pool.layout.root)})
        assert made.returncode == 0, made.stderr
        carol = {"Authorization": f"Bearer {made.stdout.strip()}"}
        host = SubmitHost(user="mallory", cwd=str(pool.jobs_dir), now=int(time.time()),
                          environ=dict(os.environ), file_system_domain="localhost")
        jobs = submit_description(JOB, file="job.sub", host=host, fs=DiskFileSystem()).jobs
        schedd = pool.layout.read_address("schedd")
        reply = decode(http.post(f"{schedd}{PATH}", json=encode(Submit("mallory", tuple(jobs))), headers=carol).json())
        ad = pool.job(reply.cluster)
        assert ad is not None and ad["Owner"] == "carol"
