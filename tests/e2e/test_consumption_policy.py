"""A partitionable slot with a consumption policy on a live pool (the HTCondor manual's "Policy
Configuration for Execution Points", "condor_negotiator-Side Resource Consumption Policies";
``examples/consumption``): the negotiator matches the 8-core slot once per job in one cycle, each
match becomes its own claim at the schedd and its own dynamic slot at the startd, and the cores
are shared between two users by fair share, not taken by the first user through the slot's
leftovers.

Both users' jobs may match only from a moment after both submitters are advertised, so that the
first cycle that matches any sees both. The pie (the manual's "User Priorities and Negotiation"): with equal priorities each
user gets half of the 8 cores; with alice's priority factor three times bob's, her effective
priority is three times worse, so her share is 1/3 : 1 of bob's, 2 cores against 6."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from htcpool.protocol import UserprioCommand
from tests.e2e.pool import LivePool

DOMAIN = "e2e.test"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "consumption" / "consumption-policy.config"


def _pool(make_pool) -> LivePool:  # type: ignore[no-untyped-def]
    return make_pool(EXAMPLE.read_text() + f"UID_DOMAIN = {DOMAIN}\n")


def _submit_both(pool: LivePool, count: int = 8, lead: float = 8.0) -> None:
    """``count`` sleeping 1-core jobs each for alice and bob that no slot matches before ``lead``
    seconds from now, so that the first cycle to match any sees both submitters' ads."""
    opens = int(time.time() + lead)
    for owner in ("alice", "bob"):
        pool.submit(f"executable = /bin/sleep\narguments = 600\nrequest_memory = 16\n"
                    f"requirements = time() >= {opens}\nqueue {count}\n", owner=owner)
    pool.wait_for(lambda: all(pool.idle_jobs_advertised(o) == count for o in ("alice", "bob")), lead,
                  "both submitters advertised before their jobs may match")
    assert time.time() < opens, "the submitters were advertised too late for one cycle to see both"


def _running(pool: LivePool) -> Counter[str]:
    return Counter(str(ad.get("Owner")) for ad in pool.jobs("JobStatus == 2"))


def _dynamic_slots(pool: LivePool) -> Counter[str]:
    """The claimed dynamic slots by the user they run for."""
    return Counter(str(s.get("RemoteOwner", "")).split("@")[0] for s in pool.slots("DynamicSlot =?= true")
                   if s.get("State") == "Claimed")


def _settle(pool: LivePool, expected: Counter[str], what: str) -> None:
    pool.wait_for(lambda: _running(pool) == expected, 40, what, show=lambda: _running(pool))
    pool.holds_for(lambda: _running(pool) == expected, what, cycles=2, show=lambda: _running(pool))


def test_equal_users_share_the_consumption_policy_slot_half_and_half(make_pool) -> None:
    """Equal priorities: 4 and 4 from one cycle's 8 matches, each its own claim and dynamic slot;
    the p-slot is left with no core and every claim id it advertises is a fresh one."""
    pool = _pool(make_pool)
    _submit_both(pool)
    _settle(pool, Counter({"alice": 4, "bob": 4}), "the 8 cores split 4/4 by fair share")
    assert _dynamic_slots(pool) == Counter({"alice": 4, "bob": 4})
    hosts = {str(ad.get("RemoteHost")) for ad in pool.jobs("JobStatus == 2")}
    assert len(hosts) == 8, hosts
    pslot = pool.slots("PartitionableSlot =?= true")
    assert [(s.get("Cpus"), s.get("NumDynamicSlots"), s.get("NumClaims")) for s in pslot] == [(0, 8, 8)]
    assert " 8 matches" in pool.log_text("negotiator"), "one cycle made all 8 matches"


def test_priority_factors_three_to_one_give_two_and_six_cores(make_pool) -> None:
    """alice's priority factor is 3 times bob's: she gets 2 cores and bob 6, not 8 through the
    leftovers of her first claim."""
    pool = _pool(make_pool)
    pool.c.send("negotiator", UserprioCommand("setfactor", f"alice@{DOMAIN}", 3000.0))
    pool.c.send("negotiator", UserprioCommand("setfactor", f"bob@{DOMAIN}", 1000.0))
    _submit_both(pool)
    _settle(pool, Counter({"alice": 2, "bob": 6}), "the 8 cores split 2/6 by priority factors 3:1")
    assert _dynamic_slots(pool) == Counter({"alice": 2, "bob": 6})
