"""Flocking between two pools on one computer (examples/flocking).

Pool B has a startd; pool A has none, so A's jobs cannot run at home. A's schedd flocks to B
(``FLOCK_TO`` = B's collector): once its submitter has waited a ``SCHEDD_INTERVAL`` unserved, its
Submitter ad goes to B's collector, B's negotiator asks A's schedd for the jobs, and they run on
B's startd and complete at A, with A's user log and history. In B's accountant the user is a
remote user (``tester@a.test`` against ``ACCOUNTANT_LOCAL_DOMAIN = b.test``): the priority
factor is ``REMOTE_PRIO_FACTOR``. Each pool has its own signing key and trust domain; they
exchange tokens as docs/flocking.md, "Credentials", says. A's schedd first lacks B's token: B's
collector refuses its ads naming the issuer, and once the token is copied in, A flocks.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from htcpool.protocol import HistoryQuery, QueryAds, UserprioQuery
from htcpool.runtime.security.tokens import POOL_KEY, create_token, read_key
from tests.e2e.pool import LivePool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "flocking"

JOBS = """
executable = /bin/sleep
arguments = 1
request_cpus = 1
request_memory = 64
log = flocked.log
queue 2
"""


def test_jobs_without_a_slot_at_home_flock_to_the_other_pool_and_complete_at_home(
        make_pool: Callable[[str], LivePool], tmp_path: Path) -> None:
    pool_b = make_pool((EXAMPLES / "pool-b.config").read_text())
    b_collector = pool_b.layout.read_address("collector")
    assert b_collector is not None
    flock_to = f"FLOCK_TO = {b_collector.partition('://')[2]}\n"
    pool_a = make_pool((EXAMPLES / "pool-a.config").read_text() + flock_to)
    assert not pool_a.slots()  # A runs no startd: its jobs can only run elsewhere
    give_token(pool_a, "condor@b.test", pool_b)  # B's negotiator and startd, at A's schedd

    cluster = pool_a.submit(JOBS)

    def refusals() -> list[str]:
        return [line for line in pool_b.log_text("collector").splitlines()
                if "issued by 'a.test', not by this pool (TRUST_DOMAIN b.test)" in line]
    pool_b.wait_for(refusals, 30, "B's collector refusing A's token, naming its issuer",
                    show=lambda: pool_b.log_text("collector")[-2000:])
    give_token(pool_b, "condor@a.test", pool_a)  # A's schedd, at B's collector and startd

    def in_b() -> list[str]:
        return [f"{a['Name']} {a.get('ScheddName')} idle={a.get('IdleJobs')}"
                for a in pool_b.c.send("collector", QueryAds("Submitter")).ads]
    seen = pool_b.wait_for(in_b, 30, "A's submitter advertised in B's collector", show=in_b)
    assert any(s.startswith("tester@a.test ") for s in seen), seen

    def completed() -> list[int]:
        return [int(a["JobStatus"]) for a in pool_a.c.send("schedd", HistoryQuery(f"ClusterId == {cluster}")).ads]
    # generous: B's negotiator, A's schedd and B's startd all take turns on a loaded CI machine
    done = pool_a.wait_for(lambda: (lambda d: d if len(d) == 2 else None)(completed()), 90,
                           "both jobs completed in A's history",
                           show=lambda: (completed(), pool_a.jobs(), pool_b.log_text("negotiator")[-3000:],
                                         pool_a.log_text("schedd")[-3000:]))
    assert done == [4, 4]
    history = list(pool_a.c.send("schedd", HistoryQuery(f"ClusterId == {cluster}")).ads)
    b_machines = {str(s["Machine"]) for s in pool_b.slots()}  # A has no slot: they ran on B's
    ran_on = [str(h.get("LastRemoteHost") or h.get("RemoteHost") or "") for h in history]
    assert all(where.partition("@")[2] in b_machines for where in ran_on), (ran_on, b_machines)
    log = (pool_a.jobs_dir / "flocked.log").read_text()
    assert len(re.findall(r"^005 \(001\.00[01]\.000\)", log, re.M)) == 2, log  # terminated, at home

    rows = {str(r.get("Name")): r for r in pool_b.c.send("negotiator", UserprioQuery()).rows}
    assert "tester@a.test" in rows, sorted(rows)
    assert float(rows["tester@a.test"]["PriorityFactor"]) == 5000.0  # REMOTE_PRIO_FACTOR of B


def give_token(issuer: LivePool, identity: str, holder: LivePool) -> None:
    """What ``htcpool token_create -identity IDENTITY`` at ``issuer``, copied into the ``tokens.d``
    of ``holder`` (its SEC_TOKEN_SYSTEM_DIRECTORY), does."""
    key = read_key(issuer.layout.root / "passwords.d" / POOL_KEY)
    trust_domain = (issuer.layout.run / "trust_domain").read_text().strip()
    token = create_token(key, POOL_KEY, identity, trust_domain, time.time())
    directory = holder.layout.root / "tokens.d"
    directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(directory / f"{trust_domain}.token", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
