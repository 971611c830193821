"""A negotiation cycle, and a match evaluation, leave no reference loops behind: what they make
is freed by reference counting the moment they let go of it, not by Python's cycle collector,
whose passes over a cycle's hundreds of thousands of objects cost a simulation a tenth of its
time (docs/performance.md, "Garbage without loops")."""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Iterator

import pytest

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.match import evaluate_in_match
from htcpool.negotiator import Accountant, negotiate
from htcpool.negotiator.slotmemo import SlotMemo
from tests.negotiator.helpers import START, churned, submitters
from tests.negotiator.test_plain_claims import POLICIES, _jobs, _slot


@pytest.fixture
def loops() -> Iterator[Callable[[], list[str]]]:
    """The types of what became cyclic garbage since the fixture began (the collector held off)."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()

    def found() -> list[str]:
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            return sorted({type(o).__qualname__ for o in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.collect()  # and freed for good: let go of, they are loops again

    yield found
    if was:
        gc.enable()


@pytest.mark.parametrize("name", ["default", "preemption by priority", "groups"])
def test_cycles_leave_no_reference_loops(name: str, loops: Callable[[], list[str]]) -> None:
    policy = POLICIES[name]
    rng = random.Random(3)
    pool = [_slot(rng, i, True) for i in range(24)]
    memo, acct = SlotMemo(), Accountant(policy.accountant)
    groups = None  # the group tree goes from one cycle to the next, as the negotiator keeps it
    matched = 0
    loops()  # what was left before the cycles
    for cycle, jobs, now in churned(rng, pool, 4, lambda r, ad, i: _slot(r, i, True),
                                    lambda r, c: _jobs(r, c, True)):
        memo.begin()
        outcome = negotiate(now, pool, submitters(pool, jobs, policy), acct, policy, groups=groups, memo=memo)
        matched += len(outcome.result.matches)
        groups = outcome.groups
        del outcome
        assert loops() == [], (cycle, now - START)
    assert matched > 0


def test_a_match_evaluation_leaves_no_reference_loops(loops: Callable[[], list[str]]) -> None:
    slot = ClassAd({"Memory": 2048, "Requirements": ExprTree("TARGET.RequestMemory <= MY.Memory")})
    job = ClassAd({"RequestMemory": 1024})
    context = EvalContext()
    loops()
    assert evaluate_in_match(slot._exprs["requirements"], slot, job, context) is True
    assert loops() == []
