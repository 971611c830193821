"""The slot facts kept across cycles (``negotiator.slotmemo``): a cycle given the very same ad
objects again, with the memo, decides exactly what a cycle over fresh copies decides without it,
over random sequences of changes to the pool."""

from __future__ import annotations

import random
from typing import Any

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
from htcpool.negotiator.outcomes import CycleResult
from htcpool.negotiator.slotmemo import SlotFacts, SlotMemo
from tests.negotiator.helpers import churned, claimed, job, slot, submitters

USERS = ("alice@d", "bob@d", "carol@d")
POLICY = NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio * 1.2")


def _slot(rng: random.Random, i: int) -> ClassAd:
    name = f"slot{i}@m{i % 4}"
    extra: dict[str, Any] = {"Memory": rng.choice((512, 1024, 2048)), "SlotID": i,
                             "Cpus": rng.choice((1, 2))}
    if rng.random() < 0.3:
        extra["Start"] = rng.choice(('=TARGET.Owner =!= "bob"', "=Memory > 600", True, False))
    if rng.random() < 0.2:
        extra["Rank"] = rng.choice(('=TARGET.Owner == "carol"', 1, "=Memory / 1024"))
    if rng.random() < 0.4:
        user = rng.choice(USERS)
        return claimed(name, user, AccountingGroup=user, CurrentRank=rng.choice((0, 1)),
                       TotalJobRunTime=rng.randrange(100), **extra)
    return slot(name, **extra)


def _change(rng: random.Random, ad: ClassAd, i: int) -> ClassAd:
    """A new version of a slot ad: a literal moved, an expression replaced, a claim begun or
    ended, or a new ad altogether."""
    kind = rng.randrange(5)
    if kind == 0:
        return _slot(rng, i)
    new = ad.copy()
    if kind == 1:
        new["Memory"] = rng.choice((512, 1024, 2048, 4096))
    elif kind == 2:
        new["Start"] = ExprTree(rng.choice(('TARGET.Owner =!= "alice"', "Cpus >= 1", "false")))
    elif kind == 3:
        new["CurrentRank"] = ExprTree("Memory / 512") if rng.random() < 0.5 else rng.randrange(3)
    else:
        new["TotalJobRunTime"] = rng.randrange(1000)
    return new


def _jobs(rng: random.Random, cycle: int) -> dict[str, list[ClassAd]]:
    out: dict[str, list[ClassAd]] = {}
    for u, user in enumerate(USERS):
        owner = user.split("@")[0]
        out[user] = [job(100 * cycle + 10 * u + k, 0, Owner=owner, RequestMemory=rng.choice((256, 1024)))
                     for k in range(rng.randrange(1, 5))]
    return out


def _summary(result: CycleResult) -> list[tuple[object, ...]]:
    return [(m.slot, m.job, m.submitter, m.reason, m.preempted_dslots) for m in result.matches]


def test_cycles_with_the_memo_decide_as_cycles_without_it() -> None:
    for seed in range(12):
        rng = random.Random(seed)
        pool = [_slot(rng, i) for i in range(24)]
        memo = SlotMemo()
        remembered, fresh = Accountant(POLICY.accountant), Accountant(POLICY.accountant)
        for cycle, jobs, now in churned(rng, pool, 8, _change, _jobs):
            memo.begin()
            subs = submitters(pool, jobs, POLICY)
            with_memo = negotiate(now, pool, subs, remembered, POLICY, memo=memo)
            copies = [ad.copy() for ad in pool]
            without = negotiate(now, copies, submitters(copies, jobs, POLICY), fresh, POLICY)
            assert _summary(with_memo.result) == _summary(without.result), (seed, cycle)
            assert with_memo.result.failures == without.result.failures
            assert with_memo.stats.candidate_slots == without.stats.candidate_slots
            assert with_memo.shares == without.shares
        assert memo.hits > 0 and memo.misses > 0


def test_a_changed_ad_is_a_new_object_with_facts_of_its_own() -> None:
    memo = SlotMemo()
    a = slot("s1@m", Memory=1024)
    memo.begin()
    first = memo.facts(a)
    assert first.value_keys(("memory",)) == ((int, 1024),)
    memo.begin()
    assert memo.facts(a) is first and memo.hits == 1
    b = a.copy()
    b["Memory"] = 2048
    memo.begin()
    assert memo.facts(b).value_keys(("memory",)) == ((int, 2048),)
    memo.begin()
    memo.begin()  # a cycle without the ad: its facts are gone with it
    assert memo.facts(b) is not first and memo.misses == 3


def test_the_shape_of_a_decorated_copy_is_remembered_only_for_literal_additions() -> None:
    base = claimed("s1@m", "alice@d")
    facts = SlotFacts(base)
    plain = base.copy()
    plain["RemoteUserPrio"] = 0.5
    shape = facts.decorated_shape(plain, ("remoteuserprio",))
    other = base.copy()
    other["RemoteUserPrio"] = 7.5
    assert facts.decorated_shape(other, ("remoteuserprio",)) == shape
    odd = base.copy()
    odd["RemoteUserPrio"] = ExprTree("1 + 1")
    assert facts.decorated_shape(odd, ("remoteuserprio",)) != shape
