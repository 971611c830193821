"""Regular expressions run under a time limit (docs/reliability.md): a pattern that backtracks
catastrophically gives ERROR once the limit passes; ordinary patterns keep PCRE's answers."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from htcpool.classad import ClassAd
from htcpool.classad.context import (
    DEFAULT_EVALUATION_BUDGET,
    DEFAULT_REGEX_TIMEOUT,
    set_evaluation_limits,
)
from htcpool.classad.expr import ExprTree
from htcpool.classad.values import ERROR

#: exponential in the length of the run of a's before the final character
EVIL = '"(a|aa)+$"'
VICTIM = '"' + "a" * 64 + '!"'


@pytest.fixture()
def short_limit() -> Iterator[float]:
    set_evaluation_limits(regex_timeout=0.05)
    yield 0.05
    set_evaluation_limits(budget=DEFAULT_EVALUATION_BUDGET, regex_timeout=DEFAULT_REGEX_TIMEOUT)


def evaluate(text: str) -> object:
    return ExprTree(text).eval()


@pytest.mark.parametrize("call", [
    f"regexp({EVIL}, {VICTIM})",
    f"regexpMember({EVIL}, {{\"x\", {VICTIM}}})",
    f"regexps({EVIL}, {VICTIM}, \"z\")",
    f"replace({EVIL}, {VICTIM}, \"z\")",
    f"replaceall({EVIL}, {VICTIM}, \"z\")",
    f"stringList_regexpMember({EVIL}, {VICTIM})",
])
def test_catastrophic_pattern_gives_error_within_the_limit(short_limit: float, call: str) -> None:
    start = time.perf_counter()
    value = evaluate(call)
    seconds = time.perf_counter() - start
    assert value is ERROR, f"{call} gave {value!r}"
    assert seconds < 3.0, f"{call} took {seconds:.2f} s"  # the limit, plus a loaded machine's slack


def test_catastrophic_pattern_in_requirements_does_not_match(short_limit: float) -> None:
    job = ClassAd(f"[Requirements = regexp({EVIL}, TARGET.Name)]")
    machine = ClassAd(f"[Name = {VICTIM}; Requirements = true]")
    start = time.perf_counter()
    assert job.symmetricMatch(machine) is False
    assert time.perf_counter() - start < 3.0


@pytest.mark.parametrize(("call", "want"), [
    ('regexp("^a.c$", "abc")', True),
    ('regexp("A", "xa", "i")', True),
    ('regexp("(?<n>b)", "abc")', True),
    ('regexp("b\\\\z", "ab\\n")', False),
    ('regexp("b\\\\Z", "ab\\n")', True),
    ('regexp("[[:digit:]]+", "x42")', True),
    ('regexps("(b+)", "abbbc", "<\\\\1>")', "<bbb>"),
    ('replace("b+", "abbbc", "X")', "aXc"),
    ('replace("x*", "abc", "-")', "-abc"),
    ('replaceall("x*", "abc", "-")', ERROR),  # HTCondor's loop fails at the end of the target
    ('replaceall("b", "abcb", "")', "ac"),
    ('replaceall("$", "ab", "!", "g")', ERROR),
    ('regexps("(a)|(b)", "b", "\\\\2")', "b"),
    ('regexps("(a)|(b)", "a", "\\\\2")', ERROR),
    ('regexp("(", "x")', ERROR),
    ('regexpMember("(", {"x"})', False),
])
def test_pcre_answers_are_kept(call: str, want: object) -> None:
    got = evaluate(call)
    if want is ERROR:
        assert got is ERROR, f"{call} gave {got!r}"
    else:
        assert got == want and type(got) is type(want), f"{call} gave {got!r}"
