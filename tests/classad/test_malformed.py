"""Malformed and extreme input: a clear error or HTCondor's answer, never a crash or a hang.

Parse failures must be ``ClassAdParseError`` (with a line and column); evaluation that
cannot complete must be ``ClassAdEvaluationError``; nothing may raise RecursionError or
anything else. Where the reference is installed its verdict (parses or not) is compared.
"""

from __future__ import annotations

import time

import pytest

from htcpool.classad import ClassAd, ClassAdEvaluationError, ClassAdParseError, ExprTree
from tests.classad.reference import PARSE_ERROR, expr_outcome, requires_reference

TRUNCATED = [
    "1 +", "(1", "1)", "{1, 2", "[a = 1", "[a = ]", "[a 1]", "a.", "a[", "a[1", "f(1,", "1 ? 2",
    "1 ? 2 :", "1 ?:", '"abc', "'abc", '"\\', "!", "-", "x =", "[a = 1; b]", "{,}", "{1,,2}",
    "f(,)", "[] []", "1 2", "a b", ".", "a...b", "a. .b", "5.", "1e", "0x1F", "007", "@", "#", "$",
    '"\\0"', "[ = 1]", "[1 = 2]", "a = = b", "<<", "1 >>>> 2", "1 === 2",
]  # fmt: skip


@pytest.mark.parametrize("text", TRUNCATED)
def test_malformed_expressions_are_parse_errors(text: str) -> None:
    with pytest.raises(ClassAdParseError) as info:
        ExprTree(text)
    assert info.value.line >= 1 and info.value.column >= 1
    assert f"{info.value.line}:{info.value.column}:" in str(info.value)


@requires_reference
@pytest.mark.parametrize("text", TRUNCATED)
def test_malformed_expressions_are_refused_by_the_reference_too(text: str) -> None:
    assert expr_outcome("ref", text) == (PARSE_ERROR,)


def test_error_position_is_line_and_column() -> None:
    with pytest.raises(ClassAdParseError) as info:
        ClassAd("[\n  a = 1;\n  b = (2 +\n]")
    assert (info.value.line, info.value.column) == (4, 1)


@pytest.mark.parametrize(
    "text",
    ["(" * 10000 + "1" + ")" * 10000, "-" * 10000 + "1", "{" * 10000 + "}" * 10000,
     "[a=" * 10000 + "1" + "]" * 10000, "a?" * 10000 + "1" + ":2" * 10000, "f(" * 10000 + ")" * 10000],
)  # fmt: skip
def test_ten_thousand_levels_are_refused_cleanly(text: str) -> None:
    with pytest.raises(ClassAdParseError, match="nested too deeply"):
        ExprTree(text)


def test_long_flat_chains_parse_and_fail_to_evaluate_like_htcondor() -> None:
    e = ExprTree(" && ".join(["true"] * 10000))
    with pytest.raises(ClassAdEvaluationError):
        e.eval()
    assert ExprTree(" && ".join(["true"] * 400)).eval() is True


def test_huge_list() -> None:
    start = time.perf_counter()
    text = "{" + ", ".join(str(i) for i in range(100000)) + "}"
    e = ExprTree(text)
    assert len(e.eval()) == 100000
    assert ExprTree(text + "[99999]").eval() == 99999
    assert time.perf_counter() - start < 20


def test_huge_ad() -> None:
    ad = ClassAd("[" + "; ".join(f"a{i} = {i}" for i in range(100000)) + "]")
    assert len(ad) == 100000 and ad.eval("a99999") == 99999


@pytest.mark.parametrize(
    ("ad", "attr"),
    [("[a = b; b = a]", "a"), ("[a = a]", "a"), ("[a = a + 1]", "a"), ("[a = self.a]", "a"),
     ("[a = {a}[0]]", "a"), ("[a = [x = parent.a].x]", "a"), ("[a = b.c; b = [c = a]]", "a")],
)  # fmt: skip
def test_cycles_are_undefined(ad: str, attr: str) -> None:
    from htcpool.classad import Value

    assert ExprTree(attr).eval(ClassAd(ad)) is Value.Undefined


@requires_reference
@pytest.mark.parametrize("n", [1, 2, 5, 50])
def test_cycles_of_any_length_match_the_reference(n: int) -> None:
    ad = "[" + "; ".join(f"a{i} = a{(i + 1) % n} + 1" for i in range(n)) + "]"
    assert expr_outcome("ours", "a0", ad) == expr_outcome("ref", "a0", ad)
