"""Preemption on a live pool: the machine's RANK, retirement, user priority with
PREEMPTION_REQUIREMENTS, and fair share between users (seeds: policy-configuration.rst,
"The RANK Expression" and "Claimed State"; user-priorities-and-negotiation.txt, 3.6.3
"Priorities in Negotiation and Preemption" and 3.6.6 "the Pie Spin and Pie Slice").

Submitters are told apart by ``Owner`` (``pool.submit(..., owner=...)``); their accounting
names are ``owner@e2e.test``. Every HTCondor user starts with priority factor 1000
(DEFAULT_PRIO_FACTOR), so a test gives one user a better priority by lowering its factor.
"""

from __future__ import annotations

import re
import time

from htcpool.protocol import UserprioCommand, UserprioQuery
from tests.e2e.pool import script

DOMAIN = "e2e.test"


def _static_slots(n: int) -> str:
    return f"""
UID_DOMAIN = {DOMAIN}
NUM_CPUS = {n}
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = {n}
SLOT_TYPE_1_PARTITIONABLE = false
"""


# A job that runs until it is evicted: it notes its start and its SIGTERM (the default KillSig)
# in files named after its first argument, in the jobs directory.
def _worker(pool) -> str:
    return script(pool.jobs_dir, "worker.sh",
                  'trap \'echo "$(date +%s.%N)" >> "$2/$1.term"; exit 0\' TERM\n'
                  'echo start >> "$2/$1.runs"\nsleep 300 &\nwait\n')


def _submit(pool, owner: str, count: int = 1) -> int:
    exe = _worker(pool)
    return pool.submit(f"executable = {exe}\narguments = {owner}.$(Process) {pool.jobs_dir}\n"
                       f"log = {owner}.log\nqueue {count}\n", owner=owner)


def _running(pool, cluster: int, count: int = 1) -> bool:
    return all(pool.status(cluster, p) == 2 for p in range(count))


def _remote_owners(pool) -> list[str]:
    return sorted(str(s.get("RemoteOwner", "")).split("@")[0] for s in pool.slots())


def _evictions(pool, owner: str) -> int:
    log = (pool.jobs_dir / f"{owner}.log").read_text()
    return len(re.findall(r"^004 ", log, re.M))


def _setfactor(pool, user: str, factor: float) -> None:
    pool.c.send("negotiator", UserprioCommand("setfactor", f"{user}@{DOMAIN}", factor))


def _priorities(pool) -> dict[str, dict]:
    return {str(r["Name"]).split("@")[0]: r for r in pool.c.send("negotiator", UserprioQuery()).rows}


def test_fair_share_follows_the_inverse_effective_priorities(make_pool) -> None:
    """The Pie Spin and Pie Slice (user-priorities-and-negotiation.txt 3.6.6, 3.6.4): each
    cycle a user's slice of the pool is proportional to 1/EUP, EUP = RUP x factor. With
    factors 1 and 3 (and RUPs at the 0.5 floor for the length of the test, under the
    default one-day PRIORITY_HALFLIFE) tester should get three slots for each of bob's.
    Tester starts with all four slots; CLAIM_WORKLIFE = 0 sends every slot back to the
    negotiator after each job, so the shares converge without preemption."""
    T=time.monotonic()
    pool = make_pool(_static_slots(4) + "CLAIM_WORKLIFE = 0\n")
    print("T", round(time.monotonic()-T,1), 'pool = make_pool(_static_slots')
    _setfactor(pool, "tester", 1)
    _setfactor(pool, "bob", 3)
    exe = script(pool.jobs_dir, "short.sh", "sleep 3\n")
    tester = pool.submit(f"executable = {exe}\nqueue 60\n", owner="tester")
    print("T", round(time.monotonic()-T,1), 'tester = pool.submit(f"executa')
    pool.wait_for(lambda: len(pool.jobs(f"ClusterId == {tester} && JobStatus == 2")) == 4, 30,
                  "tester on all four slots")
    bob = pool.submit(f"executable = {exe}\nqueue 60\n", owner="bob")
    print("T", round(time.monotonic()-T,1), 'bob = pool.submit(f"executable')
    pool.wait_for(lambda: pool.jobs(f"ClusterId == {bob} && JobStatus == 2"), 20, "bob's first job")
    print("T", round(time.monotonic()-T,1), 'pool.wait_for(lambda: pool.job')

    before = _priorities(pool)
    print("T", round(time.monotonic()-T,1), 'before = _priorities(pool)')
    samples: list[tuple[int, int]] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        running = pool.jobs("JobStatus == 2")
        samples.append((sum(1 for j in running if j["ClusterId"] == tester),
                        sum(1 for j in running if j["ClusterId"] == bob)))
        time.sleep(0.25)
    after = _priorities(pool)
    print("T", round(time.monotonic()-T,1), 'after = _priorities(pool)')

    expected = after["bob"]["Priority"] / after["tester"]["Priority"]  # 1/EUP ratio
    assert 2.5 < expected < 3.5, expected
    mean_tester = sum(t for t, _ in samples) / len(samples)
    mean_bob = sum(b for _, b in samples) / len(samples)
    assert mean_bob > 0 and expected / 1.6 < mean_tester / mean_bob < expected * 1.6, \
        (mean_tester, mean_bob, expected)
    usage = {u: after[u]["AccumulatedUsage"] - before[u]["AccumulatedUsage"] for u in ("tester", "bob")}
    assert usage["bob"] > 0 and expected / 1.6 < usage["tester"] / usage["bob"] < expected * 1.6, usage
    pool.act("remove", str(tester), user="tester")
    print("T", round(time.monotonic()-T,1), 'pool.act("remove", str(tester)')
    pool.act("remove", str(bob), user="bob")
    print("T", round(time.monotonic()-T,1), 'pool.act("remove", str(bob), u')

    print(samples)
