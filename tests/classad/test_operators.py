"""Every operator applied to every pair of operand types, and the examples of the manual.

``OPERANDS`` holds one or two values of each ClassAd type (boolean, integer, real,
string, undefined, error, list, ad, and the edge values of integers and reals). Each
binary operator is applied to every ordered pair and each unary operator to every
operand; the value htcpool computes is compared with the value HTCondor's library
computes in the same run. The tables of the manual ("HTCondor's ClassAd Mechanism",
Tables 4.1-4.4 for ``==``, ``=?=``, ``!=``, ``=!=``) are checked without the reference.
"""

from __future__ import annotations

import itertools

import pytest

from tests.classad.reference import expr_outcome, requires_reference
from tests.classad.strategies import BINARY, UNARY

OPERANDS = [
    "true", "false", "0", "1", "-7", "9223372036854775807", "-9223372036854775808",
    "0.0", "-0.0", "2.5", "-1.5", 'real("INF")', 'real("-INF")', 'real("NaN")',
    '"abc"', '"ABC"', '""', "undefined", "error", "{ 1,2 }", "{  }", "[ a = 1 ]",
]  # fmt: skip

UNARY_CASES = [f"{op}({a})" for op in UNARY for a in OPERANDS]


@requires_reference
@pytest.mark.parametrize("op", BINARY)
def test_binary_operator_on_every_type_pair(op: str) -> None:
    cases = [f"({a}) {op} ({b})" for a, b in itertools.product(OPERANDS, OPERANDS)]
    ours = [expr_outcome("ours", c) for c in cases]
    ref = [expr_outcome("ref", c) for c in cases]
    assert [c for c, o, r in zip(cases, ours, ref, strict=True) if o != r] == []


@requires_reference
def test_unary_operators_on_every_type() -> None:
    ours = [expr_outcome("ours", c) for c in UNARY_CASES]
    ref = [expr_outcome("ref", c) for c in UNARY_CASES]
    assert [c for c, o, r in zip(UNARY_CASES, ours, ref, strict=True) if o != r] == []


@requires_reference
def test_ternary_and_elvis_on_every_type() -> None:
    cases = [f"({a}) ? 1 : 2" for a in OPERANDS] + [f"({a}) ?: 2" for a in OPERANDS]
    assert [c for c in cases if expr_outcome("ours", c) != expr_outcome("ref", c)] == []


# The manual's Tables 4.1-4.4 ("HTCondor's ClassAd Mechanism").
MANUAL = [
    ("(10 == 10)", "true"), ("(10 == 5)", "false"), ('(10 == "ABC")', "error"),
    ('"ABC" == "abc"', "true"), ("(10 == UNDEFINED)", "undefined"), ("(UNDEFINED == UNDEFINED)", "undefined"),
    ("(10 =?= 10)", "true"), ("(10 =?= 5)", "false"), ('(10 =?= "ABC")', "false"),
    ('"ABC" =?= "abc"', "false"), ("(10 =?= UNDEFINED)", "false"), ("(UNDEFINED =?= UNDEFINED)", "true"),
    ("(10 != 10)", "false"), ("(10 != 5)", "true"), ('(10 != "ABC")', "error"),
    ('"ABC" != "abc"', "false"), ("(10 != UNDEFINED)", "undefined"), ("(UNDEFINED != UNDEFINED)", "undefined"),
    ("(10 =!= 10)", "false"), ("(10 =!= 5)", "true"), ('(10 =!= "ABC")', "true"),
    ('"ABC" =!= "abc"', "true"), ("(10 =!= UNDEFINED)", "true"), ("(UNDEFINED =!= UNDEFINED)", "false"),
    ("UNDEFINED && FALSE", "false"), ("UNDEFINED || FALSE", "undefined"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), MANUAL)
def test_manual_examples(text: str, expected: str) -> None:
    assert expr_outcome("ours", text)[2] == expected
