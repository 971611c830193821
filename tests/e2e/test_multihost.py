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

import functools
import os
import pwd
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from htcpool.protocol import AdList, HistoryQuery, QueryAds, QueueQuery, UserprioQuery, encode
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
FULL_HOSTNAME = {host}.multihost.example
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


@dataclass
class ThreePool:
    """Pools on network-namespace hosts, one per role of ``roles`` (the three hosts by default)."""

    hosts: netns.Hosts
    root: Path
    roles: dict[str, str] = field(default_factory=lambda: dict(ROLES))

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
                    for host in self.roles if self.layout(host).token_file.exists()]
        for process in stopping:
            process.wait(timeout=120)

    def home(self, user: str) -> Path:
        home = self.root / "home" / user
        if not home.exists():
            home.mkdir(parents=True)
            entry = pwd.getpwnam(user)
            os.chown(home, entry.pw_uid, entry.pw_gid)
        return home

    def submit_as(self, user: str, text: str, host: str = "submit") -> subprocess.CompletedProcess[str]:
        (self.home(user) / "job.sub").write_text(text)
        return self.htcpool(host, "submit", "-terse", "job.sub", user=user)

    def cluster_of(self, user: str, text: str, host: str = "submit") -> int:
        done = self.submit_as(user, text, host)
        assert done.returncode == 0, done.stdout + done.stderr
        return int(done.stdout.split(".")[0])

    def job(self, cluster: int, host: str = "submit") -> Any | None:
        """The job's ad, asked of the submit host's schedd on its Unix socket (the namespaces share
        the file system, so the test reaches it from outside)."""
        client = PoolClient(self.layout(host))
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
        for host in self.roles:
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
            CONFIG.format(local_dir=pool.layout(host).root, role=role, cm=cm, host=host))
    up = pool.htcpool("cm", "up")
    assert up.returncode == 0, up.stdout + up.stderr + pool.picture()
    refused = pool.htcpool("exec", "up")  # without the central manager's keys a host may not join
    assert refused.returncode != 0 and "passwords.d/POOL" in refused.stderr, refused.stdout + refused.stderr
    for host in ("submit", "exec"):
        copy_keys(pool, "cm", host)
        up = pool.htcpool(host, "up")
        assert up.returncode == 0, up.stdout + up.stderr + pool.picture()


def copy_keys(pool: ThreePool, source: str, target: str, names: tuple[str, ...] = ("POOL", "ca.key", "ca.pem")) -> None:
    """What an administrator copies from one host's SEC_PASSWORD_DIRECTORY to another's."""
    into = pool.layout(target).root / "passwords.d"
    into.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name in names:
        shutil.copy2(pool.layout(source).root / "passwords.d" / name, into / name)


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
    # the new dynamic slot's ad reaches the collector a moment after the claim
    slot = three.wait_for(lambda: three.slot(str(running["RemoteHost"])), 10, "the running job's slot ad")
    assert str(slot["MyAddress"]).startswith(f"https://{addresses['exec']}:"), slot

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
    """Every daemon, masters included, refuses a request without a token on its network port; a
    plain-HTTP request gets no answer from a port that speaks HTTPS."""
    body = encode(QueryAds("Machine"))
    ca = str(three.layout("cm").ca_file)
    daemons = (("cm", "collector"), ("cm", "negotiator"), ("submit", "schedd"), ("exec", "startd"),
               *((host, "master") for host in ROLES))
    with httpx.Client(timeout=20, trust_env=False, verify=ssl.create_default_context(cafile=ca)) as http:
        for host, daemon in daemons:
            url = three.layout(host).read_address(daemon)
            assert url is not None and url.startswith(f"https://{three.hosts.addresses[host]}:"), (host, daemon, url)
            answer = http.post(url + PATH, json=body)
            assert answer.status_code == 401, (host, daemon, answer.status_code, answer.text)
            with pytest.raises(httpx.HTTPError):
                httpx.post(url.replace("https://", "http://") + PATH, json=body, timeout=10)


def test_the_central_manager_administers_the_execute_host_through_its_master(users: tuple[str, str],
                                                                             three: ThreePool) -> None:
    """condor_off -name HOST -startd from the central manager: the tool finds the execute host's
    master in the collector and that master, listening on the network, stops its startd. A user
    whose token names them (not an administrator) is refused, the refusal naming the level."""
    alice, _ = users
    startd = three.layout("exec").read_address("startd")
    three.wait_for(lambda: (ad := three.slot_at(str(startd))) is not None and ad, 60, "the execute host's slot")
    token = three.htcpool("cm", "token_create", "-identity", "alice@multihost.example")
    assert token.returncode == 0 and token.stdout.strip(), token.stdout + token.stderr
    tokens = three.home(alice) / ".condor" / "tokens.d"
    tokens.mkdir(parents=True)
    (tokens / "alice").write_text(token.stdout.strip() + "\n")
    entry = pwd.getpwnam(alice)
    for path in (tokens.parent, tokens, tokens / "alice"):
        os.chown(path, entry.pw_uid, entry.pw_gid)
    os.chmod(tokens / "alice", 0o600)

    refused = three.htcpool("cm", "off", "-name", "exec.multihost.example", "-startd", user=alice)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "PERMISSION DENIED to alice@multihost.example" in refused.stderr and "ADMINISTRATOR" in refused.stderr, \
        refused.stderr
    assert three.layout("exec").read_address("startd") == startd, "a user stopped the execute host's startd"

    off = three.htcpool("cm", "off", "-name", "exec.multihost.example", "-startd")
    assert off.returncode == 0, off.stdout + off.stderr + three.picture()
    assert off.stdout.strip() == 'Sent "Kill-Daemon" command for "startd" to master exec.multihost.example'
    three.wait_for(lambda: three.layout("exec").read_address("startd") is None, 60, "the execute host's startd stopped")
    unknown = three.htcpool("cm", "on", "-name", "nowhere.multihost.example", "-startd")
    assert unknown.returncode != 0 and "Can't find address for master nowhere.multihost.example" in unknown.stderr, \
        unknown.stdout + unknown.stderr
    on = three.htcpool("cm", "on", "-startd", "-pool", three.hosts.addresses["cm"], "exec")
    assert on.returncode == 0, on.stdout + on.stderr
    three.wait_for(lambda: three.layout("exec").read_address("startd"), 60, "the execute host's startd started again")


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


HA_ROLES = {"cm": "CentralManager", "cm2": "CentralManager", "exec": "Execute"}


@pytest.fixture
def two_collectors() -> Iterator[ThreePool]:
    """A central manager, a second one running only a collector, and an execute host, all with
    ``COLLECTOR_HOST`` listing both collectors (high availability)."""
    root = Path(tempfile.mkdtemp(prefix="htcmultiha-"))
    try:
        hosts = netns.Hosts(tuple(HA_ROLES))
        pool = ThreePool(hosts, root, dict(HA_ROLES))
        try:
            both = f"COLLECTOR_HOST = {hosts.addresses['cm']}, {hosts.addresses['cm2']}\n"
            for host, role in HA_ROLES.items():
                pool.layout(host).root.mkdir(parents=True)
                text = CONFIG.format(local_dir=pool.layout(host).root, role=role, cm=hosts.addresses["cm"], host=host)
                only_collector = "DAEMON_LIST = MASTER COLLECTOR\n" if host == "cm2" else ""
                (root / f"{host}.conf").write_text(text + both + only_collector)
            for host in HA_ROLES:
                if host != "cm":
                    copy_keys(pool, "cm", host)
                up = pool.htcpool(host, "up")
                assert up.returncode == 0, up.stdout + up.stderr + pool.picture()
            yield pool
        finally:
            try:
                pool.down()
            finally:
                hosts.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_ads_reach_every_collector_and_tools_fall_back_when_the_first_is_down(two_collectors: ThreePool) -> None:
    pool = two_collectors
    addresses = pool.hosts.addresses
    assert pool.layout("cm2").read_address("collector") == f"https://{addresses['cm2']}:9618"
    assert pool.layout("exec").read_collectors() == [f"https://{addresses['cm']}:9618", f"https://{addresses['cm2']}:9618"]

    def slots_in(host: str) -> list[str]:
        client = PoolClient(pool.layout(host))  # that host's collector, on its Unix socket
        try:
            return [str(ad["Name"]) for ad in client.query("Machine")]
        finally:
            client.close()
    for host in ("cm", "cm2"):
        pool.wait_for(functools.partial(slots_in, host), 60, f"the execute host's slots in {host}'s collector")

    off = pool.htcpool("cm", "off", "-collector")
    assert off.returncode == 0, off.stdout + off.stderr
    pool.wait_for(lambda: pool.layout("cm").read_address("collector") is None, 60, "the first collector stopped")
    status = pool.htcpool("exec", "status", "-af", "Name")
    assert status.returncode == 0, status.stdout + status.stderr
    assert sorted(status.stdout.split()) == sorted(slots_in("cm2")), (status.stdout, status.stderr)


FLOCK_ROLES = {"pa": "A: CentralManager, Submit", "pb": "B: CentralManager, Execute"}
FLOCK_COMMON = """\
LOCAL_DIR = {local_dir}
CONDOR_HOST = {cm}
FULL_HOSTNAME = {host}.flock.example
TRUST_DOMAIN = {domain}
UID_DOMAIN = {domain}
FILESYSTEM_DOMAIN = {domain}
""" + FAST
FLOCK_A = """\
DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD
SCHEDD_NAME = schedd@a.test
FLOCK_TO = {other}
FLOCK_INCREMENT = 1
"""
FLOCK_B = """\
DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, STARTD
NUM_CPUS = 2
ACCOUNTANT_LOCAL_DOMAIN = b.test
REMOTE_PRIO_FACTOR = 5000
FLOCK_FROM = {other}
ALLOW_WRITE_COLLECTOR = $(ALLOW_WRITE), $(FLOCK_FROM)
ALLOW_WRITE_STARTD = $(ALLOW_WRITE), $(FLOCK_FROM)
ALLOW_READ_COLLECTOR = $(ALLOW_READ), $(FLOCK_FROM)
ALLOW_READ_STARTD = $(ALLOW_READ), $(FLOCK_FROM)
"""
FLOCKED_JOB = """\
executable = /bin/true
should_transfer_files = YES
log = flocked.log
queue
"""


@pytest.fixture
def two_pools() -> Iterator[ThreePool]:
    """Pool A (a central manager that is also a submit host, no startd) and pool B (a central
    manager with a startd) on two hosts, each with its own signing key and trust domain and both
    with certificates of one certificate authority (A's), as docs/flocking.md says."""
    root = Path(tempfile.mkdtemp(prefix="htcmultiflock-"))
    os.chmod(root, 0o755)
    try:
        hosts = netns.Hosts(tuple(FLOCK_ROLES))
        pool = ThreePool(hosts, root, dict(FLOCK_ROLES))
        try:
            a, b = hosts.addresses["pa"], hosts.addresses["pb"]
            for host, domain, text, other in (("pa", "a.test", FLOCK_A, b), ("pb", "b.test", FLOCK_B, a)):
                pool.layout(host).root.mkdir(parents=True)
                common = FLOCK_COMMON.format(local_dir=pool.layout(host).root, cm=hosts.addresses[host],
                                             host=host, domain=domain)
                (root / f"{host}.conf").write_text(common + text.format(other=other))
            up = pool.htcpool("pa", "up")
            assert up.returncode == 0, up.stdout + up.stderr + pool.picture()
            copy_keys(pool, "pa", "pb", ("ca.key", "ca.pem"))  # one CA; B makes its own signing key
            up = pool.htcpool("pb", "up")
            assert up.returncode == 0, up.stdout + up.stderr + pool.picture()
            yield pool
        finally:
            try:
                pool.down()
            finally:
                hosts.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _exchange_token(pool: ThreePool, issuer: str, identity: str, holder: str) -> None:
    """``htcpool token_create -identity IDENTITY`` on ``issuer``, copied into ``holder``'s tokens.d."""
    made = pool.htcpool(issuer, "token_create", "-identity", identity)
    assert made.returncode == 0 and made.stdout.strip(), made.stdout + made.stderr
    directory = pool.layout(holder).root / "tokens.d"
    directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(directory / f"{issuer}.token", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(made.stdout.strip() + "\n")


def test_jobs_flock_from_one_host_to_a_pool_on_another(users: tuple[str, str], two_pools: ThreePool) -> None:
    """A's job cannot run at home (A has no startd); A's schedd flocks to B's collector on the
    other host, B's negotiator asks it for the job over TLS, and the job runs on B's startd and
    completes at A. B's accountant knows the user as a remote one."""
    pool = two_pools
    alice, _ = users
    assert pool.layout("pb").read_address("collector") == f"https://{pool.hosts.addresses['pb']}:9618"
    _exchange_token(pool, "pb", "condor@a.test", "pa")  # A's schedd, at B's collector and startd
    _exchange_token(pool, "pa", "condor@b.test", "pb")  # B's negotiator and startd, at A's schedd
    cluster = pool.cluster_of(alice, FLOCKED_JOB, "pa")
    done = pool.wait_for(lambda: (ad := pool.job(cluster, "pa")) is not None and ad.get("JobStatus") == 4 and ad,
                         90, "the flocked job completed at A")
    ran_on = str(done.get("LastRemoteHost") or done.get("RemoteHost") or "")
    assert ran_on.endswith("@pb.flock.example"), ran_on
    client = PoolClient(pool.layout("pb"))
    try:
        rows = {str(r.get("Name")): r for r in client.send("negotiator", UserprioQuery()).rows}
    finally:
        client.close()
    assert float(rows[f"{alice}@a.test"]["PriorityFactor"]) == 5000.0, sorted(rows)
