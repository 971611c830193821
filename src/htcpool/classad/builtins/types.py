"""Type predicates and conversions: ``isUndefined`` … ``isReltime``, ``int``, ``real``, ``string``, ``bool``."""

from __future__ import annotations

import math
import re
from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.nodes import EvalState
from htcpool.classad.values import (
    ERROR,
    INT64_MAX,
    INT64_MIN,
    UNDEFINED,
    AbsTime,
    ListValue,
    RelTime,
)


def _is(pred: Any) -> Any:
    return lambda s, v: pred(v)


builtin("isUndefined", 1)(_is(lambda v: v is UNDEFINED))
builtin("isError", 1)(_is(lambda v: v is ERROR))
builtin("isString", 1)(_is(lambda v: type(v) is str))
builtin("isInteger", 1)(_is(lambda v: type(v) is int))
builtin("isReal", 1)(_is(lambda v: type(v) is float))
builtin("isList", 1)(_is(lambda v: type(v) is ListValue))
builtin("isBoolean", 1)(_is(lambda v: type(v) is bool))
builtin("isAbstime", 1)(_is(lambda v: type(v) is AbsTime))
builtin("isReltime", 1)(_is(lambda v: type(v) is RelTime))


@builtin("isClassAd", 1)
def _is_classad(s: EvalState, v: Any) -> bool:
    from htcpool.classad.classad import ClassAd

    return type(v) is ClassAd


_INT_PREFIX = re.compile(r"\s*[+-]?\d+")
_REAL_PREFIX = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I)


def c_strtoll(text: str) -> int | None:
    """The integer prefix of ``text`` as C's strtoll reads it (clamped), or None if there is none."""
    m = _INT_PREFIX.match(text)
    if not m:
        return None
    n = int(m.group())
    return max(INT64_MIN, min(INT64_MAX, n))


def c_strtod(text: str) -> float | None:
    """The real prefix of ``text`` as C's strtod reads it, or None if there is none."""
    m = _REAL_PREFIX.match(text)
    if not m:
        return None
    return float(m.group())


def real_to_int(x: float) -> int:
    """C's conversion of a double to a 64-bit integer, as the x86 instruction does it."""
    if math.isnan(x) or math.isinf(x) or x >= 2.0**63 or x < -(2.0**63):
        return INT64_MIN
    return int(x)


def to_int(v: Any) -> Any:
    t = type(v)
    if t is int:
        return v
    if t is bool:
        return int(v)
    if t is float:
        return real_to_int(v)
    if t is str:
        n = c_strtoll(v)
        if n is None:
            return ERROR
        return n
    if t is AbsTime:
        return v.secs
    if t is RelTime:
        return real_to_int(v.secs)
    return ERROR


def to_real(v: Any) -> Any:
    t = type(v)
    if t is float:
        return v
    if t is int or t is bool:
        return float(v)
    if t is str:
        x = c_strtod(v)
        if x is None:
            return ERROR
        return x
    if t is AbsTime:
        return float(v.secs)
    if t is RelTime:
        return float(v.secs)
    return ERROR


def to_string(v: Any) -> Any:
    """``string()``: a string as is, anything else as its unparsed text."""
    from htcpool.classad.unparse import unparse

    t = type(v)
    if t is str:
        return v
    if v is UNDEFINED or v is ERROR:
        return ERROR
    return unparse(v)


@builtin("int", 1)
def _int(s: EvalState, v: Any) -> Any:
    return to_int(v)


@builtin("real", 1)
def _real(s: EvalState, v: Any) -> Any:
    if type(v) is str:
        low = v.strip().lower()
        if low in ("inf", "+inf"):
            return math.inf
        if low == "-inf":
            return -math.inf
        if low in ("nan", "+nan", "-nan"):
            return math.nan
    return to_real(v)


@builtin("string", 1)
def _string(s: EvalState, v: Any) -> Any:
    return to_string(v)


@builtin("bool", 1)
def _bool(s: EvalState, v: Any) -> Any:
    t = type(v)
    if t is bool:
        return v
    if t is int:
        return v != 0
    if t is float:
        return v != 0.0
    if t is str:
        low = v.lower()
        if low == "true":
            return True
        if low == "false":
            return False
        return ERROR
    return ERROR
