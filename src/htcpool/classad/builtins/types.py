"""Type predicates and conversions: ``isUndefined`` … ``isReltime``, ``int``, ``real``, ``string``, ``bool``.

The conversions follow HTCondor's ``convertValueTo*Value`` helpers, which other
families reuse (``strcat`` converts with ``to_string``, ``floor`` with ``to_real``):

* ``string()``, ``int()`` and ``real()`` give UNDEFINED and ERROR back unchanged, but
  the helpers ``to_int`` and ``to_real`` that other functions use turn both into ERROR;
* strings are read the way C's ``strtod`` reads them (hexadecimal, ``inf`` and
  ``nan`` included); text with no number in front is ERROR; ``int()`` of a string
  goes through the real value, so ``int("1e3")`` is 1000 and ``int("0x10")`` is 16;
* reals convert to integers as the x86 instruction does (out of range is INT64_MIN);
* lists and ads convert only to strings (their unparsed text).

ClassAd strings are byte strings in HTCondor. Here they are Python strings; the
helpers ``utf8`` and ``from_utf8`` give the byte view (with ``surrogateescape`` for
bytes that are not valid UTF-8) to functions that count or cut bytes.
"""

from __future__ import annotations

import math
import re
from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.nodes import EvalState
from htcpool.classad.values import (
    ERROR,
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
    return is_classad(v)


def is_classad(v: Any) -> bool:
    from htcpool.classad.classad import ClassAd

    return type(v) is ClassAd


def utf8(text: str) -> bytes:
    """The bytes HTCondor would hold for ``text``."""
    return text.encode("utf-8", "surrogateescape")


def from_utf8(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def c_int32(n: int) -> int:
    """An integer truncated to C's 32-bit ``int``, as ``IsIntegerValue(int&)`` does."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= (1 << 31) else n


_REAL_PREFIX = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
    re.I,
)


def c_strtod(text: str) -> float | None:
    """The real prefix of ``text`` as C's strtod reads it, or None if there is none."""
    m = _REAL_PREFIX.match(text)
    if not m:
        return None
    body = m.group().strip(" \t\n\v\f\r")
    sign = -1.0 if body.startswith("-") else 1.0
    bare = body.lstrip("+-")
    low = bare.lower()
    if low.startswith("inf"):
        return sign * math.inf
    if low.startswith("nan"):
        return math.copysign(math.nan, sign)
    if low.startswith("0x"):
        digits = bare[2:]
        if "p" not in digits.lower():
            digits += "p0"
        if digits.startswith("."):
            digits = "0" + digits
        try:
            return sign * float.fromhex(digits)
        except (ValueError, OverflowError):
            return sign * math.inf
    try:
        return sign * float(bare)
    except OverflowError:  # pragma: no cover - float() gives inf instead
        return sign * math.inf


def real_to_int(x: float) -> int:
    """C's conversion of a double to a 64-bit integer, as the x86 instruction does it."""
    if math.isnan(x) or math.isinf(x) or x >= 2.0**63 or x < -(2.0**63):
        return INT64_MIN
    return int(x)


def reltime_whole(secs: float) -> int:
    """A relative time's whole seconds as HTCondor converts them to a number: C's cast to a
    32-bit int, which truncates and gives INT_MIN for NaN and values out of range."""
    if math.isnan(secs) or not -(2.0**31) < secs < 2.0**31:
        return -(2**31)
    return int(secs)


def to_int(v: Any) -> Any:
    t = type(v)
    if t is int:
        return v
    if t is bool:
        return int(v)
    if t is float:
        return real_to_int(v)
    if t is str:
        x = c_strtod(v)
        return ERROR if x is None else real_to_int(x)
    if t is AbsTime:
        return v.secs
    if t is RelTime:
        return reltime_whole(v.secs)
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
        return float(reltime_whole(v.secs))
    return ERROR


def to_string(v: Any) -> Any:
    """``string()``: a string as is, UNDEFINED and ERROR as themselves, anything else as its text."""
    from htcpool.classad.unparse import format_abstime, format_reltime, unparse

    t = type(v)
    if t is str:
        return v
    if v is UNDEFINED or v is ERROR:
        return v
    if t is AbsTime:
        return format_abstime(v)
    if t is RelTime:
        return format_reltime(v.secs)
    return unparse(v)


@builtin("int", 1)
def _int(s: EvalState, v: Any) -> Any:
    return UNDEFINED if v is UNDEFINED else to_int(v)


@builtin("real", 1)
def _real(s: EvalState, v: Any) -> Any:
    return UNDEFINED if v is UNDEFINED else to_real(v)


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
    if t is RelTime:
        return reltime_whole(v.secs) != 0
    if t is str:
        low = v.lower()
        if low == "true":
            return True
        if low == "false":
            return False
        return UNDEFINED
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR
