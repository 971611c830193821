"""Claimed slots matched without their decorated copy (``NegotiationCycle._decorations_unread``):
when no expression of a cycle can read what step 4 puts into a claimed slot's copy
(``RemoteUserPrio``, ``RemoteUserResourcesInUse``, ``RemoteUserFloor``, the ``RemoteGroup…``
ones) nor a request's live usage, the copy can change nothing, so none is made. Cycles decide
exactly what they decide with the shortcut turned off, and the accountant ends in the same state;
the shortcut is taken under HTCondor's defaults and never when something reads those names."""

from __future__ import annotations

import random
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
from htcpool.negotiator.cycle import NegotiationCycle
from htcpool.negotiator.settings import AccountantPolicy, GroupPolicy, GroupSettings
from htcpool.negotiator.slotmemo import SlotMemo
from tests.negotiator.helpers import START, churned, claimed, job, slot, submitters
from tests.negotiator.test_settled_claims import USERS, _decided

GROUPS = GroupPolicy(groups=(GroupSettings("group_a", 8.0), GroupSettings("group_b", 8.0, accept_surplus=True)))
POLICIES = {
    "default": NegotiatorPolicy(),
    "preemption by priority": NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio * 1.2"),
    "preemption always": NegotiatorPolicy(preemption_requirements="True"),
    "preemption rank reads the user": NegotiatorPolicy(preemption_requirements="True",
                                                       preemption_rank="RemoteUserPrio"),
    "post job rank reads the usage": NegotiatorPolicy(post_job_rank="-RemoteUserResourcesInUse"),
    "discount suspended": NegotiatorPolicy(accountant=AccountantPolicy(discount_suspended_resources=True)),
    "groups": NegotiatorPolicy(groups=GROUPS),
    "no preemption": NegotiatorPolicy(consider_preemption=False),
}
#: slot START expressions, some reading the decorated names (the shortcut is then off)
STARTS = ('=TARGET.Owner =!= "bob"', "=Memory > 600", True, "=RemoteUserPrio =?= undefined",
          '=RemoteGroup =!= "group_b"', "=RemoteUserResourcesInUse < 3")


def _slot(rng: random.Random, i: int, reading: bool) -> ClassAd:
    name = f"slot{i}@m{i % 4}"
    extra: dict[str, Any] = {"Memory": rng.choice((512, 1024, 2048)), "SlotID": i}
    if rng.random() < 0.3:
        extra["Start"] = rng.choice(STARTS if reading else STARTS[:3])
    if rng.random() < 0.3:
        extra["Rank"] = rng.choice((0, 1, -1, '=TARGET.Owner == "carol"'))
    if rng.random() < 0.65:
        user = rng.choice(USERS)
        group = rng.choice(("group_a", "group_b"))
        owner = user.split("@")[0]
        if rng.random() < 0.15:  # a preemption pending: always decorated
            extra.update(PreemptingRank=1, PreemptingUser=rng.choice(USERS))
        if rng.random() < 0.15:  # a user no other slot charges: only its copy would give it a record
            extra["Activity"] = "Suspended"
            owner = f"sleeper{i}"
        return claimed(name, user, AccountingGroup=f"{group}.{owner}@d", **extra)
    return slot(name, **extra)


def _jobs(rng: random.Random, cycle: int, reading: bool) -> dict[str, list[ClassAd]]:
    out: dict[str, list[ClassAd]] = {}
    for u, user in enumerate(USERS):
        owner = user.split("@")[0]
        group = ("group_a", "group_b", "group_a")[u]
        extra: dict[str, Any] = {}
        if reading and rng.random() < 0.3:
            extra["Rank"] = "=-TARGET.RemoteUserPrio"
        if reading and rng.random() < 0.3:
            extra["Requirements"] = "=TARGET.Memory >= RequestMemory && TARGET.RemoteUserPrio =?= undefined"
        out[f"{group}.{owner}@d"] = [
            job(100 * cycle + 10 * u + k, 0, Owner=owner, AccountingGroup=f"{group}.{owner}@d",
                RequestMemory=rng.choice((256, 1024, 3000)), **extra)
            for k in range(rng.randrange(1, 5))]
    return out


def _records(acct: Accountant) -> list[tuple[object, ...]]:
    return [(n, r.priority, r.priority_factor, r.resources_used, r.weighted_resources_used)
            for n, r in acct.records.items()]


@pytest.mark.parametrize("reading", [False, True], ids=["unread", "read"])
@pytest.mark.parametrize("name", list(POLICIES))
def test_cycles_without_copies_decide_as_cycles_with_them(name: str, reading: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    policy = POLICIES[name]
    taken = 0
    for seed in range(6):
        rng = random.Random(seed)
        pool = [_slot(rng, i, reading) for i in range(24)]
        memo = SlotMemo()
        fast_acct, slow_acct = Accountant(policy.accountant), Accountant(policy.accountant)
        for cycle, jobs, now in churned(rng, pool, 6, lambda r, ad, i: _slot(r, i, reading),
                                        lambda r, c: _jobs(r, c, reading)):
            memo.begin()
            fast = negotiate(now, pool, submitters(pool, jobs, policy), fast_acct, policy, memo=memo)
            copies = [ad.copy() for ad in pool]
            with monkeypatch.context() as patched:  # the shortcut off: every claimed slot copied
                patched.setattr(NegotiationCycle, "_decorations_unread", lambda self, slots, reads: False)
                slow = negotiate(now, copies, submitters(copies, jobs, policy), slow_acct, policy)
            assert _decided(fast.result) == _decided(slow.result), (seed, cycle)
            assert fast.stats.candidate_slots == slow.stats.candidate_slots
            assert _records(fast_acct) == _records(slow_acct), (seed, cycle)
            taken += _shortcut_taken(policy, pool, jobs)
    if name == "default" and not reading:
        assert taken > 0


def _shortcut_taken(policy: NegotiatorPolicy, pool: list[ClassAd], jobs: dict[str, list[ClassAd]]) -> bool:
    cyc = NegotiationCycle(START, Accountant(policy.accountant), policy, None, lambda: 0.0)
    cyc.prepare(pool, submitters(pool, jobs, policy))
    # a settled claim taken as the collector gave it is only counted in its class (``tallied``)
    return any(f.tallied for f in cyc.table.full_classes.values()) or \
        any(ad is base and ad.get("State") == "Claimed" for ad, base in zip(cyc.table.ads, pool, strict=False))


@pytest.mark.parametrize(("policy", "start", "job_rank", "taken"), [
    (NegotiatorPolicy(), True, None, True),
    (NegotiatorPolicy(), "RemoteUserPrio > 1", None, False),  # a slot reads its user's priority
    (NegotiatorPolicy(), "RemoteUserResourcesInUse < 10", None, False),
    (NegotiatorPolicy(), True, "-TARGET.RemoteUserPrio", False),  # a job's Rank reads it
    (NegotiatorPolicy(), True, "SubmitterUserResourcesInUse", False),  # a request's live usage
    (NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio"), True, None, False),
    (NegotiatorPolicy(preemption_requirements="True"), True, None, False),  # every claim a candidate
    (NegotiatorPolicy(preemption_requirements="0"), True, None, True),
    (NegotiatorPolicy(preemption_rank="RemoteUserResourcesInUse"), True, None, False),  # a live usage read
    (NegotiatorPolicy(cross_slot_prios=True), True, None, False),
    (NegotiatorPolicy(allow_pslot_preemption=True), True, None, False),
])
def test_the_shortcut_is_taken_only_when_nothing_reads_the_copy(policy: NegotiatorPolicy, start: object,
                                                                job_rank: str | None, taken: bool) -> None:
    pool = [claimed("busy@m", "bob@d", Start=f"={start}" if isinstance(start, str) else start), slot("free@m")]
    extra = {"Rank": f"={job_rank}"} if job_rank else {}
    jobs = {"alice@d": [job(1, 0, Owner="alice", **extra)]}
    assert _shortcut_taken(policy, pool, jobs) is taken


def test_only_settled_claims_go_without_their_copy() -> None:
    """A claim whose RANK beats its CurrentRank can be preempted by rank, and PREEMPTION_RANK
    (HTCondor's default reads ``RemoteUserPrio``) is then evaluated with its copy."""
    policy = NegotiatorPolicy()
    jobs = {"alice@d": [job(1, 0, Owner="alice")]}
    assert not _shortcut_taken(policy, [claimed("above@m", "bob@d", Rank=2, CurrentRank=1)], jobs)
    assert not _shortcut_taken(policy, [claimed("pending@m", "bob@d", PreemptingRank=1, PreemptingUser="carol@d")],
                               jobs)
    assert _shortcut_taken(policy, [claimed("below@m", "bob@d", Rank=1, CurrentRank=2)], jobs)
