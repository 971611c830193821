"""A pool across three hosts: a central manager, a submit host and an execute host.

The hosts are network namespaces made by the test (``tests/netns.py``), each running ``htcpool up``
with its own configuration: ``use ROLE : CentralManager``, ``Submit`` or ``Execute`` and the same
``CONDOR_HOST``. The submit and execute hosts get the central manager's signing key and
certificate authority copied, as docs/security.md, "Setting up three hosts", tells an administrator to.
Two OS users made for the test submit from the submit host; their jobs run on the execute host;
each may act only on their own jobs, a forged ``Owner`` is not kept (overwritten, or the cluster
refused), every daemon refuses a request that carries no credentials, and the daemons of different
hosts know each other by their tokens over TLS. Namespaces, bridge and users are removed afterwards, even
after a failure; the test is skipped, saying why, where namespaces cannot be made.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from htcpool.protocol import AdList, HistoryQuery, QueryAds, QueueQuery, encode
from htcpool.runtime.http import PATH
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PoolClient
from tests import netns
from tests.e2e.pool import FAST
from tests.os_users import NOT_FOR_OTHERS, made_users

_NO_NAMESPACES = netns.unavailable()
pytestmark = [pytest.mark.skipif(NOT_FOR_OTHERS is not None, reason=str(NOT_FOR_OTHERS)),
              pytest.mark.skipif(_NO_NAMESPACES is not None, reason=str(_NO_NAMESPACES)),
              pytest.mark.skipif(shutil.which("useradd") is None or shutil.which("setpriv") is None,
                                 reason="needs useradd and setpriv to make the test's users and act as them")]

ROLES = {"cm": "CentralManager", "submit": "Submit", "exec": "Execute"}
CONFIG = """\
LOCAL_DIR = {local_dir}
use ROLE : {role}
CONDOR_HOST = {cm}
UID_DOMAIN = multihost.example
TRUST_DOMAIN = multihost.example
FILESYSTEM_DOMAIN = multihost.example
NUM_CPUS = 2
use FEATURE : PartitionableSlot
""" + FAST  # FAST has no braces, so CONFIG.format leaves it as it is
ECHO_JOB = """\
executable = /bin/echo
arguments = ran on the execute host
output = out.txt
{forged}queue
"""
SLEEP_JOB = """\
executable = /bin/sleep
arguments = 600
queue
"""
#: asks a daemon on loopback inside a host, with no credentials; prints the HTTP status
NO_CREDENTIALS = """\
import json, ssl, sys, urllib.error, urllib.request
url, ca, body = sys.argv[1], sys.argv[2], sys.argv[3].encode()
context = ssl.create_default_context(cafile=ca) if url.startswith("https") else None
request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(request, timeout=20, context=context).status)
except urllib.error.HTTPError as e:
    print(e.code)
"""


@dataclass
class ThreePool:
    hosts: netns.Hosts
    root: Path

    def layout(self, host: str) -> PoolLayout:
        return PoolLayout(self.root / host)

    def htcpool(self, host: str, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        """``htcpool ARGS`` on ``host``, as root with the host's configuration, or as ``user``
        pointed at the host's pool like any local user."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        argv: list[str] = []
        cwd = self.root
        if user is None:
            env["CONDOR_CONFIG"] = str(self.root / f"{host}.conf")
            env["HOME"] = str(self.root)
        else:
            entry = pwd.getpwnam(user)
            cwd = self.home(user)
            env.update(HOME=str(cwd), USER=user, LOGNAME=user, HTCPOOL_LOCAL_DIR=str(self.layout(host).root))
            argv = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
        command = self.hosts.command(host, *argv, sys.executable, "-m", "htcpool", *args)
        return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)

    def down(self) -> None:
        """``htcpool down -fast`` on every host that was started, all at once."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root)}
        stopping = [subprocess.Popen(self.hosts.command(host, sys.executable, "-m", "htcpool", "down", "-fast"),
                                     env={**env, "CONDOR_CONFIG": str(self.root / f"{host}.conf")},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    for host in ROLES if self.layout(host).token_file.exists()]
        for process in stopping:
            process.wait(timeout=120)

    def home(self, user: str) -> Path:
        home = self.root / "home" / user
        if not home.exists():
            home.mkdir(parents=True)
            entry = pwd.getpwnam(user)
            os.chown(home, entry.pw_uid, entry.pw_gid)
        return home

    def submit_as(self, user: str, text: str) -> subprocess.CompletedProcess[str]:
        (self.home(user) / "job.sub").write_text(text)
        return self.htcpool("submit", "submit", "-terse", "job.sub", user=user)

    def cluster_of(self, user: str, text: str) -> int:
        done = self.submit_as(user, text)
        assert done.returncode == 0, done.stdout + done.stderr
        return int(done.stdout.split(".")[0])

    def job(self, cluster: int) -> Any | None:
        """The job's ad, asked of the submit host's schedd on its Unix socket (the namespaces share
        the file system, so the test reaches it from outside)."""
        client = PoolClient(self.layout("submit"))
        try:
            for query in (QueueQuery(f"ClusterId == {cluster}"), HistoryQuery(f"ClusterId == {cluster}")):
                reply = client.send("schedd", query)
                if isinstance(reply, AdList) and reply.ads:
                    return reply.ads[0]
        finally:
            client.close()
        return None

    def slot(self, name: str) -> Any | None:
        """The slot's ad in the central manager's collector (on its Unix socket)."""
        return self._first_slot(f'Name == "{name}"')

    def slot_at(self, address: str) -> Any | None:
        """A slot the startd at ``address`` advertises, from the central manager's collector."""
        return self._first_slot(f'MyAddress == "{address}"')

    def _first_slot(self, constraint: str) -> Any | None:
        client = PoolClient(self.layout("cm"))
        try:
            found = client.query("Machine", constraint)
        finally:
            client.close()
        return found[0] if found else None

    def wait_for(self, probe: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        seen: Any = None
        while time.monotonic() < deadline:
            try:
                seen = probe()
            except Exception as e:  # a daemon still starting: look again
                seen = e
            else:
                if seen:
                    return seen
            time.sleep(0.2)
        raise AssertionError(f"{what}: not within {timeout:.0f} s; last seen {seen!r}\n{self.picture()}")

    def picture(self) -> str:
        lines = []
        for host in ROLES:
            log = self.layout(host).log
            for path in sorted(log.glob("*Log*")) if log.exists() else []:
                text = path.read_text(errors="replace").splitlines()
                flagged = [line for line in text if "WARNING" in line or "ERROR" in line or "Traceback" in line]
                lines += [f"--- {host}/{path.name}", *flagged[-8:]]
        return "\n".join(lines)


def _start(pool: ThreePool) -> None:
    cm = pool.hosts.addresses["cm"]
    for host, role in ROLES.items():
        pool.layout(host).root.mkdir(parents=True)
        (pool.root / f"{host}.conf").write_text(
            CONFIG.format(local_dir=pool.layout(host).root, role=role, cm=cm))
    up = pool.htcpool("cm", "up")
    assert up.returncode == 0, up.stdout + up.stderr + pool.picture()
    refused = pool.htcpool("exec", "up")  # without the central manager's keys a host may not join
    assert refused.returncode != 0 and "passwords.d/POOL" in refused.stderr, refused.stdout + refused.stderr
    keys = pool.layout("cm").root / "passwords.d"
    for host in ("submit", "exec"):
        target = pool.layout(host).root / "passwords.d"
        target.mkdir(mode=0o700, exist_ok=True)
        for name in ("POOL", "ca.key", "ca.pem"):
            shutil.copy2(keys / name, target / name)
        up = pool.htcpool(host, "up")
        assert up.returncode == 0, up.stdout + up.stderr + pool.picture()


@pytest.fixture
def users() -> Iterator[tuple[str, ...]]:
    with made_users("htcma", "htcmb") as names:
        yield names


@pytest.fixture
def three() -> Iterator[ThreePool]:
    root = Path(tempfile.mkdtemp(prefix="htcmulti-"))
    os.chmod(root, 0o755)  # the test's users must reach the submit host's pool and their homes
    try:
        hosts = netns.Hosts(tuple(ROLES))
        pool = ThreePool(hosts, root)
        try:
            _start(pool)
            yield pool
        finally:
            try:
                pool.down()
            finally:
                hosts.close()  # kills whatever the pools left running
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_three_hosts_two_users(users: tuple[str, str], three: ThreePool) -> None:
    """The users are made first and removed last, once nothing of theirs runs."""
    alice, bob = users
    addresses = three.hosts.addresses
    for host, daemons in (("cm", ("collector", "negotiator")), ("submit", ("schedd",)), ("exec", ("startd",))):
        for daemon in daemons:
            url = three.layout(host).read_address(daemon)
            assert url is not None and url.startswith(f"https://{addresses[host]}:"), (host, daemon, url)
        assert three.layout(host).read_address("schedd" if host != "submit" else "startd") is None
    assert three.layout("cm").read_address("collector") == f"https://{addresses['cm']}:9618"

    forged = three.submit_as(alice, ECHO_JOB.format(forged=f'+Owner = "{bob}"\n'))
    if forged.returncode == 0:  # the schedd overwrote the Owner alice wrote
        echo = int(forged.stdout.split(".")[0])
    else:  # or refused the cluster, naming it
        assert f'Owner = "{bob}"' in forged.stderr, forged.stdout + forged.stderr
        echo = three.cluster_of(alice, ECHO_JOB.format(forged=""))
    sleeper = three.cluster_of(bob, SLEEP_JOB)
    done = three.wait_for(lambda: (ad := three.job(echo)) is not None and ad.get("JobStatus") == 4 and ad,
                          90, "alice's job completed")
    assert done["Owner"] == alice and str(done["User"]) == f"{alice}@multihost.example", "a forged Owner stays"
    assert (three.home(alice) / "out.txt").read_text().strip() == "ran on the execute host"
    running = three.wait_for(lambda: (ad := three.job(sleeper)) is not None and ad.get("JobStatus") == 2 and ad,
                             60, "bob's job running")
    slot = three.slot(str(running["RemoteHost"]))
    assert slot is not None and str(slot["MyAddress"]).startswith(f"https://{addresses['exec']}:"), slot

    refused = three.htcpool("submit", "rm", str(sleeper), user=alice)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert three.job(sleeper)["JobStatus"] == 2, "alice removed bob's job"
    removed = three.htcpool("submit", "rm", str(sleeper), user=bob)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    three.wait_for(lambda: (ad := three.job(sleeper)) is not None and ad.get("JobStatus") == 3, 30,
                   "bob's job removed by bob")
    _no_credentials_refused(three)

    daemon = three.htcpool("submit", "ping", "-type", "collector", "-table", "READ", "ADVERTISE_SCHEDD")
    rows = [line.split() for line in daemon.stdout.splitlines()[1:]]
    assert daemon.returncode == 0 and rows and all(row[1:5] == ["TOKEN", "TLS", "ALLOW", "condor@multihost.example"]
                                                   for row in rows), daemon.stdout + daemon.stderr
    tokenless = three.htcpool("submit", "ping", "-type", "collector", "READ", user=alice)
    assert tokenless.returncode != 0 and "failed as unauthenticated@unmapped" in tokenless.stdout, \
        tokenless.stdout + tokenless.stderr  # alice has no token for the network, and the pool's is not hers


def _no_credentials_refused(three: ThreePool) -> None:
    """Every daemon, on its network port or (the masters) on its host's loopback, refuses a request
    without a token; a plain-HTTP request gets no answer from a port that speaks HTTPS."""
    body = encode(QueryAds("Machine"))
    ca = str(three.layout("cm").ca_file)
    with httpx.Client(timeout=20, trust_env=False, verify=ssl.create_default_context(cafile=ca)) as http:
        for host, daemon in (("cm", "collector"), ("cm", "negotiator"), ("submit", "schedd"), ("exec", "startd")):
            url = three.layout(host).read_address(daemon)
            assert url is not None
            answer = http.post(url + PATH, json=body)
            assert answer.status_code == 401, (daemon, answer.status_code, answer.text)
            with pytest.raises(httpx.HTTPError):
                httpx.post(url.replace("https://", "http://") + PATH, json=body, timeout=10)
    for host in ROLES:
        url = three.layout(host).read_address("master")
        assert url is not None
        asked = three.hosts.run(host, sys.executable, "-c", NO_CREDENTIALS, url + PATH,
                                str(three.layout(host).ca_file), json.dumps(body))
        assert asked.stdout.strip() == "401", (host, asked.stdout, asked.stderr)


@pytest.mark.slow
def test_the_pool_comes_back_after_the_central_managers_collector_restarts(users: tuple[str, str],
                                                                           three: ThreePool) -> None:
    """The collector listens on COLLECTOR_HOST's port again; the other hosts advertise to it again
    and their jobs run."""
    alice, _ = users
    restarted = three.htcpool("cm", "restart", "-daemon", "collector")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    exec_startd = three.layout("exec").read_address("startd")
    three.wait_for(lambda: (ad := three.slot_at(str(exec_startd))) is not None and ad, 60,
                   "the execute host's slot back in the restarted collector")
    echo = three.cluster_of(alice, ECHO_JOB.format(forged=""))
    three.wait_for(lambda: (ad := three.job(echo)) is not None and ad.get("JobStatus") == 4, 90,
                   "alice's job completed after the restart")
