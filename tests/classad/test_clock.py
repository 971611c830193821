"""The ClassAd language has no clock of its own: the caller's ``EvalContext`` brings it.

An evaluation that reads the time without a clock cannot complete and says which
function asked; everything that does not read the time evaluates without one; and
partial evaluation (``flatten``) leaves a clock read as written when it has no clock.
"""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, ClassAdEvaluationError, EvalContext, ExprTree, fixed_clock
from htcpool.classad.context import DEFAULT_CONTEXT

NOW = 1_700_000_000
AT_NOW = EvalContext(clock=fixed_clock(NOW))


def test_a_context_has_no_clock_unless_given_one() -> None:
    assert EvalContext().clock is None
    assert DEFAULT_CONTEXT.clock is None
    assert EvalContext(strict=True).clock is None


@pytest.mark.parametrize(("text", "reader"), [
    ("time()", "time()"),
    ("time() - 60", "time()"),
    ("currentTime()", "currentTime()"),
    ("dayTime()", "dayTime()"),
    ("absTime()", "absTime()"),
    ("formatTime()", "formatTime()"),
    ("ifThenElse(true, time(), 0)", "time()"),
])
def test_reading_the_time_without_a_clock_fails_naming_the_reader(text: str, reader: str) -> None:
    with pytest.raises(ClassAdEvaluationError, match="no clock") as caught:
        ExprTree(text).evaluate()
    assert reader in str(caught.value)


def test_current_time_attribute_without_a_clock_fails() -> None:
    ad = ClassAd({"Age": ExprTree("CurrentTime - QDate"), "QDate": NOW - 100})
    with pytest.raises(ClassAdEvaluationError, match="CurrentTime"):
        ad.evaluate("Age")
    assert ad.evaluate("Age", AT_NOW) == 100


@pytest.mark.parametrize(("text", "value"), [
    ("time()", NOW),
    ("time() - 60", NOW - 60),
    ("getYear(absTime())", 2023),
    ('formatTime(time(), "%Y-%m-%d")', "2023-11-14"),
    ("ifThenElse(false, time(), 7)", 7),
])
def test_the_given_clock_is_the_time(text: str, value: object) -> None:
    assert ExprTree(text).eval(context=AT_NOW) == value


@pytest.mark.parametrize(("text", "value"), [
    ("1 + 2", 3),
    ('formatTime(0, "%Y")', "1970"),
    ("getYear(absTime(0))", 1970),
    ("ifThenElse(false, time(), 7)", 7),
    ('strcat("a", "b")', "ab"),
])
def test_evaluations_that_do_not_read_the_time_need_no_clock(text: str, value: object) -> None:
    assert ExprTree(text).eval() == value


def test_matching_reads_the_clock_of_its_context() -> None:
    job = ClassAd({"Requirements": ExprTree("TARGET.Since < time()")})
    slot = ClassAd({"Requirements": ExprTree("true"), "Since": NOW - 1})
    with pytest.raises(ClassAdEvaluationError, match="no clock"):
        slot.matches(job)
    assert slot.matches(job, AT_NOW)
    assert not slot.matches(job, EvalContext(clock=fixed_clock(NOW - 10)))


def test_flatten_keeps_a_clock_read_it_cannot_answer() -> None:
    ad = ClassAd({"QDate": NOW - 100})
    flat = ad.flatten(ExprTree("time() - QDate > 60"))
    assert isinstance(flat, ExprTree)
    assert repr(flat) == f"time() - {NOW - 100} > 60"
    assert ad.flatten(ExprTree("time() - QDate > 60"), AT_NOW) is True


def test_each_evaluation_reads_the_clock_again() -> None:
    readings = iter([10.0, 20.5])
    ticking = EvalContext(clock=lambda: next(readings))
    expr = ExprTree("time()")
    assert expr.eval(context=ticking) == 10
    assert expr.eval(context=ticking) == 20
