"""The slot facts kept across cycles (``negotiator.slotmemo``): a cycle given the very same ad
objects again, with the memo, decides exactly what a cycle over fresh copies decides without it,
over random sequences of changes to the pool, and what it keeps of a slot's state and weight
(``negotiator.slotstate``) only when the clock cannot change it."""

from __future__ import annotations

import operator
import random
from typing import Any

import pytest

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
from htcpool.negotiator.accountant import SlotWeigher
from htcpool.negotiator.outcomes import CycleResult
from htcpool.negotiator.settings import AccountantPolicy
from htcpool.negotiator.slotmemo import UNKNOWN, SlotFacts, SlotMemo
from htcpool.negotiator.slotstate import charged_customer, read_state, slot_state
from tests.negotiator.helpers import START, churned, claimed, job, slot, submitters

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


def test_the_same_ads_asked_for_again_in_a_cycle_give_the_same_facts() -> None:
    memo = SlotMemo()
    a, b = slot("s1@m", Memory=1024), slot("s2@m", Memory=2048)
    memo.begin()
    first = memo.facts_of([a, b])
    again = memo.facts_of([a, b])
    assert again == first and all(map(operator.is_, again, first)) and again is not first
    assert (memo.hits, memo.misses) == (2, 2)
    c = b.copy()
    c["Memory"] = 4096
    other = memo.facts_of([a, c])  # one ad differs: asked for one by one
    assert other[0] is first[0] and other[1].ad is c and memo.misses == 3
    assert memo.facts_of([a]) == [first[0]]  # fewer ads
    memo.begin()
    kept = memo.facts_of([a, b])  # the next cycle: from the previous one's facts
    assert kept[0] is first[0] and memo.facts_of([b, a]) == [kept[1], kept[0]]


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


#: attributes a cycle's passes read of a slot's state (``slotstate``) and weight, as expressions of
#: the clock: their value changes every minute, so what they give must never be kept
CLOCKED = {
    "State": 'ifThenElse(time() % 120 < 60, "Claimed", "Unclaimed")',
    "Activity": 'ifThenElse(time() % 120 < 60, "Busy", "Idle")',
    "RetirementTimeRemaining": "ifThenElse(time() % 120 < 60, 300, 0)",
    "CurrentRank": "ifThenElse(time() % 120 < 60, 0, 5)",
    "SlotWeight": "ifThenElse(time() % 120 < 60, 1, 4)",
    "GhostMultiplier": "ifThenElse(time() % 120 < 60, 1, 3)",
    "RemoteUser": 'ifThenElse(time() % 120 < 60, "alice@d", "bob@d")',
}
POLICIES = {
    "default": POLICY,
    "early": NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio * 1.2",
                              consider_early_preemption=True),
    "suspended": NegotiatorPolicy(accountant=AccountantPolicy(discount_suspended_resources=True)),
}


@pytest.mark.parametrize("name", list(POLICIES))
def test_slot_states_and_weights_read_from_the_clock_are_never_kept(name: str) -> None:
    """The same ad objects cycle after cycle, a minute apart, some with one of ``CLOCKED`` (and some
    suspended): the cycle with the memo keeps what it read of the literal ones only, and decides,
    charges and sizes the pool as cycles over fresh copies."""
    policy = POLICIES[name]
    for seed in range(10):
        rng = random.Random(seed)
        pool = [_slot(rng, i) for i in range(24)]
        for i in rng.sample(range(24), 10):
            attr = rng.choice(sorted(CLOCKED))
            pool[i][attr] = ExprTree(CLOCKED[attr])
            if attr == "State":
                pool[i]["RemoteUser"] = rng.choice(USERS)
        for i in rng.sample(range(24), 3):
            pool[i]["Activity"] = "Suspended"
        memo = SlotMemo()
        remembered, fresh = Accountant(policy.accountant), Accountant(policy.accountant)
        for cycle in range(6):
            now = START + 60 * cycle
            jobs = _jobs(rng, cycle)
            memo.begin()
            with_memo = negotiate(now, pool, submitters(pool, jobs, policy), remembered, policy, memo=memo)
            copies = [ad.copy() for ad in pool]
            without = negotiate(now, copies, submitters(copies, jobs, policy), fresh, policy)
            assert _summary(with_memo.result) == _summary(without.result), (seed, cycle)
            assert (with_memo.stats.trimmed_slots, with_memo.stats.candidate_slots) == \
                (without.stats.trimmed_slots, without.stats.candidate_slots), (seed, cycle)
            assert with_memo.shares == without.shares, (seed, cycle)
            assert _records(remembered) == _records(fresh), (seed, cycle)
        assert memo.hits > 0


def _records(acct: Accountant) -> list[tuple[object, ...]]:
    return [(n, r.resources_used, r.weighted_resources_used, r.hier_weighted_resources_used)
            for n, r in sorted(acct.records.items())]


def test_a_slot_state_is_kept_only_when_it_follows_from_literals() -> None:
    context = EvalContext(clock=fixed_clock(START))
    plain = claimed("s1@m", "alice@d", AccountingGroup="group_a.alice@d", CurrentRank=2.0, Rank=1)
    kept = SlotFacts(plain)
    state = slot_state(kept, context)
    assert kept.state is state and state == read_state(plain, context)
    assert (state.claimed, state.customer, state.preempt_user, state.current_rank, state.settled) == \
        (True, "group_a.alice@d", "group_a.alice@d", 2.0, True)
    assert charged_customer(state, False) == "group_a.alice@d"
    clocked = plain.copy()
    clocked["RetirementTimeRemaining"] = ExprTree("time() % 2 * 10")
    facts = SlotFacts(clocked)
    assert slot_state(facts, context).retiring is False and facts.state is UNKNOWN
    assert slot_state(facts, EvalContext(clock=fixed_clock(START + 1))).retiring is True
    suspended = claimed("s2@m", "bob@d", Activity="Suspended")
    assert charged_customer(read_state(suspended, context), True) is None
    assert charged_customer(read_state(suspended, context), False) == "bob@d"


@pytest.mark.parametrize(("attrs", "pure"), [
    ({}, True),
    ({"SlotWeight": 2}, True),
    ({"SlotWeight": ExprTree("Cpus")}, True),
    ({"SlotWeight": ExprTree("Cpus * 2")}, False),
    ({"SlotWeight": ExprTree("Missing")}, False),
    ({"SlotWeight": "two"}, True),  # not a number: SLOT_WEIGHT's Cpus, a literal
])
def test_a_weight_is_literal_only_when_the_weigher_evaluates_nothing(attrs: dict[str, Any], pure: bool) -> None:
    ad = slot("s1@m", Cpus=3, **attrs)
    weigh = SlotWeigher(AccountantPolicy(), EvalContext(clock=fixed_clock(START)))
    assert weigh.literal_only(ad) is pure
    no_cpus = slot("s2@m")
    del no_cpus["Cpus"]
    assert weigh.literal_only(no_cpus) is False  # SLOT_WEIGHT is evaluated (undefined: weight 1)
    assert SlotWeigher(AccountantPolicy(use_slot_weights=False), weigh.context).literal_only(ad) is True


def test_value_keys_follow_the_names_whether_or_not_they_are_the_memos() -> None:
    """A cycle's names come from ``SlotMemo.names`` (one object per content, found by identity);
    an equal tuple made elsewhere finds the same keys, another tuple its own, and past
    ``MAX_NAME_TUPLES`` tuples the oldest are worked out again, never mixed up."""
    from htcpool.negotiator.exprinfo import value_key
    from htcpool.negotiator.slotmemo import MAX_NAME_TUPLES

    memo = SlotMemo()
    ad = claimed("s@m", "bob@d", Cpus=2, Memory=1024)
    facts = memo.facts_of([ad])[0]
    names = memo.names(("cpus", "memory"))
    assert memo.names(("cpus", "memory")) is names
    keys = facts.value_keys(names)
    assert facts.value_keys(names) is keys and facts.value_keys(("cpus", "memory")) is keys
    every = [tuple(sorted(("cpus", "memory", "name", "state", "activity")[: k + 1])) for k in range(5)]
    for round_ in range(2):
        for wanted in every[: MAX_NAME_TUPLES + 1]:
            got = facts.value_keys(memo.names(wanted) if round_ else wanted)
            assert got == tuple(value_key(ad._exprs.get(n)) for n in wanted), (wanted, got)
    assert facts.value_keys(names) == keys
