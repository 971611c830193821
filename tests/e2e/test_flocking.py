"""Flocking between two pools on one computer (examples/flocking).

Pool B has a startd; pool A has none, so A's jobs cannot run at home. A's schedd flocks to B
(``FLOCK_TO`` = B's collector): once its submitter has waited a ``SCHEDD_INTERVAL`` unserved, its
Submitter ad goes to B's collector, B's negotiator asks A's schedd for the jobs, and they run on
B's startd and complete at A, with A's user log and history. In B's accountant the user is a
remote user (``tester@a.test`` against ``ACCOUNTANT_LOCAL_DOMAIN = b.test``): the priority
factor is ``REMOTE_PRIO_FACTOR``. The pools share a signing key and trust domain, so that each
pool's daemons accept the other's (docs/flocking.md, "Credentials").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from htcpool.protocol import HistoryQuery, QueryAds, UserprioQuery
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
    shared = f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {tmp_path / 'keys' / 'POOL'}\n"
    pool_b = make_pool((EXAMPLES / "pool-b.config").read_text() + shared)
    b_collector = pool_b.layout.read_address("collector")
    assert b_collector is not None
    flock_to = f"FLOCK_TO = {b_collector.partition('://')[2]}\n"
    pool_a = make_pool((EXAMPLES / "pool-a.config").read_text() + shared + flock_to)
    assert not pool_a.slots()  # A runs no startd: its jobs can only run elsewhere

    cluster = pool_a.submit(JOBS)

    def in_b() -> list[str]:
        return [f"{a['Name']} {a.get('ScheddName')} idle={a.get('IdleJobs')}"
                for a in pool_b.c.send("collector", QueryAds("Submitter")).ads]
    seen = pool_b.wait_for(in_b, 30, "A's submitter advertised in B's collector", show=in_b)
    assert any(s.startswith("tester@a.test ") for s in seen), seen

    def completed() -> list[int]:
        return [int(a["JobStatus"]) for a in pool_a.c.send("schedd", HistoryQuery(f"ClusterId == {cluster}")).ads]
    done = pool_a.wait_for(lambda: (lambda d: d if len(d) == 2 else None)(completed()), 40,
                           "both jobs completed in A's history", show=lambda: (completed(), pool_a.jobs()))
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
