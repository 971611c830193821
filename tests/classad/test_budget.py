"""Bounded evaluation (docs/reliability.md): an ad whose attributes double at each reference
ends in ERROR after a fixed amount of work, wherever it is evaluated."""

from __future__ import annotations

import time

import pytest

from htcpool.classad import ClassAd
from htcpool.classad.context import (
    DEFAULT_EVALUATION_BUDGET,
    DEFAULT_REGEX_TIMEOUT,
    REQUEST_BUDGET_FACTOR,
    EvalContext,
    WorkPool,
    evaluation_budget,
    fixed_clock,
    request_pool,
    set_evaluation_limits,
)
from htcpool.classad.values import ERROR
from htcpool.collector.store import AdStore
from htcpool.config import Config
from htcpool.runtime.eval_limits import read_evaluation_limits

#: generous for a loaded test machine; unbounded, A60 would take 2**60 steps
SECONDS = 3.0


def doubling(n: int = 60, prefix: str = "A") -> list[str]:
    return [f"{prefix}0 = 1"] + [f"{prefix}{i} = {prefix}{i - 1} + {prefix}{i - 1}" for i in range(1, n + 1)]


def doubling_ad(extra: str = "") -> ClassAd:
    return ClassAd("[" + "; ".join(doubling()) + extra + "]")


def timed(fn: object) -> tuple[object, float]:
    start = time.perf_counter()
    value = fn()  # type: ignore[operator]
    return value, time.perf_counter() - start


def test_a_small_doubling_still_evaluates() -> None:
    ad = doubling_ad()
    assert ad.eval("A10") == 1024  # 2047 references, well under the budget


def test_doubling_to_sixty_ends_in_error_quickly() -> None:
    ad = doubling_ad()
    value, seconds = timed(lambda: ad.eval("A60"))
    assert value is ERROR
    assert seconds < SECONDS, f"A60 took {seconds:.2f} s"


def test_error_cannot_be_absorbed_into_more_work() -> None:
    # isError() swallowing the ERROR must not restart the work: the budget stays spent
    ad = doubling_ad("; B = isError(A60) ? A60 + A60 : 0; C = ifThenElse(isError(A59), A59 * A59, 1)")
    for attr in ("B", "C"):
        value, seconds = timed(lambda attr=attr: ad.eval(attr))
        assert value is ERROR
        assert seconds < SECONDS, f"{attr} took {seconds:.2f} s"


def test_the_budget_is_a_count_of_references() -> None:
    ad = ClassAd("[a = b + 1; b = c + 1; c = d + 1; d = 1 + 0]")
    assert ad.eval("a", EvalContext(budget=10)) == 4
    assert ad.eval("a", EvalContext(budget=3)) is ERROR  # a, b, c fit; d does not
    assert ad.eval("a", EvalContext(budget=4)) == 4


def test_each_evaluation_gets_a_fresh_budget() -> None:
    ad = doubling_ad()
    context = EvalContext(budget=5000)
    assert ad.eval("A60", context) is ERROR
    assert ad.eval("A11", context) == 2048  # 4095 references: the failed evaluation left nothing spent


def test_subscripted_ads_share_the_budget() -> None:
    # ad["name"] evaluates in a state of its own; it must spend the same budget
    ad = ClassAd("[" + "; ".join(doubling(60, "x")) + "; Q = [" + "; ".join(doubling(60)) + "]; "
                 "R = Q[\"A60\"] + Q[\"A60\"] + Q[\"A60\"]]")
    value, seconds = timed(lambda: ad.eval("R"))
    assert value is ERROR
    assert seconds < SECONDS


def test_requirements_in_a_match_end_in_error() -> None:
    job = ClassAd("[" + "; ".join(doubling()) + "; Requirements = TARGET.Cpus > 0 && A60 > 0]")
    machine = ClassAd("[Cpus = 4; Requirements = true]")
    value, seconds = timed(lambda: job.symmetricMatch(machine))
    assert value is False  # ERROR is not a match
    assert seconds < SECONDS


def test_machine_side_attack_in_a_match() -> None:
    job = ClassAd("[Requirements = TARGET.Cpus > 0]")
    machine = ClassAd("[" + "; ".join(doubling()) + "; Cpus = A60; Requirements = true]")
    value, seconds = timed(lambda: job.symmetricMatch(machine))
    assert value is False
    assert seconds < SECONDS


def test_collector_query_constraint_ends_and_answers() -> None:
    store = AdStore()
    for i in range(3):
        store.update(ClassAd(f'[MyType = "Machine"; Name = "slot{i}@h"; Cpus = {i}]'), now=100.0)
    assert len(store.query("Machine", "Cpus >= 0", now=100.0)) == 3
    # the slot with one cpu matches before the nested ad is looked at; the others meet ERROR
    hostile = "Cpus == 1 || [" + "; ".join(doubling()) + "].A60 > 0"
    found, seconds = timed(lambda: store.query("Machine", hostile, now=100.0))
    assert [ad["Name"] for ad in found] == ["slot1@h"]
    assert seconds < 2 * SECONDS


def test_process_default_is_used_and_restored() -> None:
    ad = ClassAd("[a = b; b = c; c = d; d = 1 + 0]")
    try:
        set_evaluation_limits(budget=2)
        assert evaluation_budget() == 2
        assert ad.eval("a", EvalContext(clock=fixed_clock(0))) is ERROR
        assert ad.eval("a", EvalContext(budget=100)) == 1  # a context's own budget wins
    finally:
        set_evaluation_limits(budget=DEFAULT_EVALUATION_BUDGET, regex_timeout=DEFAULT_REGEX_TIMEOUT)
    assert ad.eval("a") == 1


@pytest.mark.parametrize("bad", [0, -5])
def test_a_budget_below_one_is_refused(bad: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        set_evaluation_limits(budget=bad)
    assert evaluation_budget() == DEFAULT_EVALUATION_BUDGET


@pytest.mark.parametrize(("text", "budget", "timeout", "named"), [
    ("", DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT, None),
    ("CLASSAD_EVALUATION_BUDGET = 500\nCLASSAD_REGEX_TIMEOUT = 0.5", 500, 0.5, None),
    ("CLASSAD_EVALUATION_BUDGET = -5", DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT,
     "CLASSAD_EVALUATION_BUDGET"),
    ("CLASSAD_EVALUATION_BUDGET = " + "9" * 400, DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT,
     "CLASSAD_EVALUATION_BUDGET"),
    ("CLASSAD_EVALUATION_BUDGET = lots", DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT,
     "CLASSAD_EVALUATION_BUDGET"),
    ("CLASSAD_REGEX_TIMEOUT = 0", DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT, "CLASSAD_REGEX_TIMEOUT"),
    ("CLASSAD_REGEX_TIMEOUT = 1e999", DEFAULT_EVALUATION_BUDGET, DEFAULT_REGEX_TIMEOUT,
     "CLASSAD_REGEX_TIMEOUT"),
])
def test_the_knobs(text: str, budget: int, timeout: float, named: str | None) -> None:
    got_budget, got_timeout, problems = read_evaluation_limits(Config.from_text(text))
    assert (got_budget, got_timeout) == (budget, timeout)
    if named is None:
        assert problems == []
    else:
        assert len(problems) == 1 and named in problems[0], problems
        assert len(problems[0]) <= 300  # a 400-digit value is not echoed whole


def test_a_work_pool_bounds_many_evaluations_together() -> None:
    ad = ClassAd("[a = b + 1; b = c + 1; c = d + 1; d = 1 + 0]")  # four references per evaluation
    pool = WorkPool(10)
    context = EvalContext(pool=pool)
    assert ad.eval("a", context) == 4
    assert pool.remaining == 6
    assert ad.eval("a", context) == 4
    assert ad.eval("a", context) is ERROR  # two left: not enough for a third
    assert pool.remaining == 0
    assert ad.eval("a", context) is ERROR
    assert ad.eval("a") == 4  # a context without the pool is not affected


def test_a_work_pool_in_matches() -> None:
    job = ClassAd("[x = y; y = 2 + 0; Requirements = TARGET.Cpus >= x]")
    machine = ClassAd("[Cpus = 4; Requirements = true]")
    context = EvalContext(pool=WorkPool(6))  # each match follows Requirements, x and y: three
    assert [job.symmetricMatch(machine, context) for _ in range(4)] == [True, True, False, False]


def test_a_hostile_query_is_bounded_as_a_whole() -> None:
    try:
        set_evaluation_limits(budget=500)
        assert request_pool().remaining == 500 * REQUEST_BUDGET_FACTOR
        store = AdStore()
        for i in range(400):
            store.update(ClassAd(f'[MyType = "Machine"; Name = "slot{i}@h"; Cpus = {i % 4}]'), now=1.0)
        hostile = "Cpus == 1 || [" + "; ".join(doubling()) + "].A60 > 0"
        found, seconds = timed(lambda: store.query("Machine", hostile, now=1.0))
        # 300 ads meet the hostile part; the query's pool (100 budgets) runs out after 100 of
        # them; from then on every evaluation of this query is ERROR at once, so the answer is
        # the slots with one cpu met before that
        assert 0 < len(found) < 100  # type: ignore[arg-type]
        assert {ad["Cpus"] for ad in found} == {1}  # type: ignore[attr-defined]
        assert seconds < 2 * SECONDS
        assert len(store.query("Machine", "Cpus >= 0", now=1.0)) == 400  # the next query is whole
    finally:
        set_evaluation_limits(budget=DEFAULT_EVALUATION_BUDGET)
