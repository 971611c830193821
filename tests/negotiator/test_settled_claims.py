"""Settled claimed slots (``SlotTable.settled_claim``): a claimed slot that no job can preempt (its
PREEMPTION_REQUIREMENTS a literal that is not true, its RANK a literal not above its CurrentRank)
joins one class per match class, without ranks of its own, and its Requirements are evaluated only
for a rejection's reason. Cycles decide exactly what they decide with the shortcut turned off."""

from __future__ import annotations

import random
from typing import Any

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
from htcpool.negotiator import slotclasses as slotclasses_module
from htcpool.negotiator.cycle import NegotiationCycle
from htcpool.negotiator.outcomes import CycleResult
from htcpool.negotiator.slotmemo import SlotMemo
from tests.negotiator.helpers import START, churned, claimed, job, slot, submitters

USERS = ("alice@d", "bob@d", "carol@d")
POLICIES = (
    NegotiatorPolicy(),  # HTCondor's default: PREEMPTION_REQUIREMENTS = False
    NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio * 1.2"),
    NegotiatorPolicy(preemption_requirements="True"),
    NegotiatorPolicy(preemption_requirements="0", preemption_rank="RemoteUserPrio"),
    NegotiatorPolicy(consider_preemption=False),
)


def _slot(rng: random.Random, i: int) -> ClassAd:
    name = f"slot{i}@m{i % 4}"
    extra: dict[str, Any] = {"Memory": rng.choice((512, 1024, 2048)), "SlotID": i}
    if rng.random() < 0.3:
        extra["Start"] = rng.choice(('=TARGET.Owner =!= "bob"', "=Memory > 600", True))
    if rng.random() < 0.4:  # literal ranks above, at and below CurrentRank, and expressions
        extra["Rank"] = rng.choice((0, 1, 2, -1, '=TARGET.Owner == "carol"', "=Memory / 1024"))
    if rng.random() < 0.6:
        user = rng.choice(USERS)
        current = rng.choice((0, 1, -1, "=Memory / 1024"))
        return claimed(name, user, AccountingGroup=user, CurrentRank=current, **extra)
    return slot(name, **extra)


def _change(rng: random.Random, ad: ClassAd, i: int) -> ClassAd:
    if rng.random() < 0.5:
        return _slot(rng, i)
    new = ad.copy()
    new["Memory"] = rng.choice((512, 1024, 2048, 4096))
    return new


def _jobs(rng: random.Random, cycle: int) -> dict[str, list[ClassAd]]:
    out: dict[str, list[ClassAd]] = {}
    for u, user in enumerate(USERS):
        owner = user.split("@")[0]
        out[user] = [job(100 * cycle + 10 * u + k, 0, Owner=owner, RequestMemory=rng.choice((256, 1024, 3000)))
                     for k in range(rng.randrange(1, 5))]
    return out


def _decided(result: CycleResult) -> tuple[object, ...]:
    matches = [(m.slot, m.job, m.submitter, m.reason, m.preempted_user) for m in result.matches]
    rejections = [(r.submitter, r.job, r.reason) for r in result.rejections]
    return matches, rejections, result.failures, {n: (s.share, s.matches) for n, s in result.shares.items()}


@pytest.mark.parametrize("policy", POLICIES, ids=range(len(POLICIES)))
def test_cycles_with_settled_claims_decide_as_cycles_without(policy: NegotiatorPolicy,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for seed in range(8):
        rng = random.Random(seed)
        pool = [_slot(rng, i) for i in range(24)]
        memo = SlotMemo()
        settled, plain = Accountant(policy.accountant), Accountant(policy.accountant)
        for cycle, jobs, now in churned(rng, pool, 6, _change, _jobs):
            memo.begin()
            fast = negotiate(now, pool, submitters(pool, jobs, policy), settled, policy, memo=memo)
            copies = [ad.copy() for ad in pool]
            with monkeypatch.context() as patched:  # the shortcut off: every claim ranked
                patched.setattr(slotclasses_module, "never_true", lambda node: False)
                patched.setattr(NegotiationCycle, "_decorations_unread", lambda self, slots, reads: False)
                slow = negotiate(now, copies, submitters(copies, jobs, policy), plain, policy)
            assert _decided(fast.result) == _decided(slow.result), (seed, cycle)
            assert fast.stats.candidate_slots == slow.stats.candidate_slots


def _settled_slots(policy: NegotiatorPolicy, pool: list[ClassAd]) -> list[str]:
    jobs = {"alice@d": [job(1, 0, Owner="alice")]}
    cyc = NegotiationCycle(START, Accountant(policy.accountant), policy, None, lambda: 0.0)
    tallied = NegotiationCycle(START, Accountant(policy.accountant), policy, None, lambda: 0.0)
    tallied.prepare(pool, submitters(pool, jobs, policy))
    cyc._decorations_unread = lambda slots, reads: False  # type: ignore[method-assign]  # every slot placed
    cyc.prepare(pool, submitters(pool, jobs, policy))
    t = cyc.table
    names = sorted(t.names[i] for f in t.full_classes.values() if f.settled for i in f.slots)
    # as the collector gave them, the settled claims are only counted in their classes, as many
    assert sum(f.tallied + len(f.slots) for f in tallied.table.full_classes.values() if f.settled) == len(names)
    return names


def test_only_claims_no_job_can_preempt_are_settled() -> None:
    pool = [
        claimed("plain@m", "bob@d"),  # Rank 0, CurrentRank 0: settled under the default
        claimed("above@m", "bob@d", Rank=2, CurrentRank=1),  # rank preemption possible
        claimed("below@m", "bob@d", Rank=1, CurrentRank=2),
        claimed("expr@m", "bob@d", Rank='=TARGET.Owner == "alice"'),  # RANK reads the job
        claimed("negative@m", "bob@d", CurrentRank=-1),  # Rank 0 beats CurrentRank -1
        claimed("moving@m", "bob@d", CurrentRank="=Memory / 512"),  # evaluated: 2, above Rank 0
        slot("free@m"),
    ]
    assert _settled_slots(NegotiatorPolicy(), pool) == ["below@m", "moving@m", "plain@m"]
    assert _settled_slots(NegotiatorPolicy(preemption_requirements="0"), pool) == [
        "below@m", "moving@m", "plain@m"]
    assert _settled_slots(NegotiatorPolicy(preemption_requirements="True"), pool) == []
    assert _settled_slots(NegotiatorPolicy(preemption_requirements="RemoteUserPrio > 1"), pool) == []
    assert _settled_slots(NegotiatorPolicy(allow_pslot_preemption=True), pool) == []


def test_a_settled_claim_still_gives_the_policy_reason() -> None:
    pool = [claimed("busy@m", "bob@d", Memory=4096)]
    jobs = {"alice@d": [job(1, 0, Owner="alice", RequestMemory=2048), job(2, 0, Owner="alice", RequestMemory=8192)]}
    policy = NegotiatorPolicy()
    out = negotiate(START, pool, submitters(pool, jobs, policy), Accountant(policy.accountant), policy)
    reasons = {r.job: r.reason for r in out.result.rejections}
    assert not out.result.matches
    assert reasons == {(1, 0): "PREEMPTION_REQUIREMENTS == False", (2, 0): "no match found"}


def test_an_expression_for_current_rank_is_what_the_slot_says() -> None:
    ad = claimed("s@m", "bob@d", CurrentRank=ExprTree("Memory / 512"))
    assert _settled_slots(NegotiatorPolicy(), [ad]) == ["s@m"]
