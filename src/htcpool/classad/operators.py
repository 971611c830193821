"""The semantics of every ClassAd operator, in one place.

Each operator is a function of already-evaluated operand values (the lazy ones,
``&&``, ``||`` and ``?:``, receive their first operand and decide whether the
second is needed; see ``nodes.py``). The rules follow HTCondor's library:

* Strict operators (all but ``&&``, ``||``, ``?:``, ``=?=``/``is`` and
  ``=!=``/``isnt``) give ERROR if an operand is ERROR (left operand first),
  else UNDEFINED if an operand is UNDEFINED.
* Booleans take part in arithmetic and ordering as the integers 0 and 1;
  integers are promoted to reals when the other operand is real.
* Integer arithmetic wraps in 64 bits; division truncates toward zero and the
  remainder takes the sign of the dividend; dividing by zero is ERROR.
* Real arithmetic giving +infinity is ERROR; ``%`` on reals is always ERROR.
* Comparing a string with a non-string, or anything with a list or an ad, is
  ERROR; ``==`` on strings ignores ASCII case, ``=?=`` does not.
* ``=?=`` is true only for the same type and value (no promotion).
* Bitwise operators take integers only; shift counts use their low six bits,
  as the x86 shift instructions do.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from htcpool.classad.values import (
    ERROR,
    INT64_MAX,
    INT64_MIN,
    UNDEFINED,
    AbsTime,
    ListValue,
    RelTime,
    wrap_int,
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(s: str) -> str:
    """Lower-case ASCII letters only, as C's ``strcasecmp`` does in the C locale."""
    return s.translate(_ASCII_LOWER)


def bool_equiv(v: Any) -> bool | None:
    """The truth of a value as ``&&``, ``||``, ``?:`` and ``ifThenElse`` see it, or None."""
    t = type(v)
    if t is bool:
        return v
    if t is int:
        return v != 0
    if t is float:
        return v != 0.0
    return None


# ---------------------------------------------------------------- arithmetic

_NUMERIC = (int, float, bool)
_ARITH_OK = (int, float, bool, AbsTime, RelTime)


def _time_arith(op: str, a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if op == "+":
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs + _c_int(b.secs), a.offset)
        if ta is RelTime and tb is AbsTime:
            return AbsTime(b.secs + _c_int(a.secs), b.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs + b.secs)
    elif op == "-":
        if ta is AbsTime and tb is AbsTime:
            return RelTime(float(a.secs - b.secs))
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs - _c_int(b.secs), a.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs - b.secs)
    elif op in ("*", "/"):
        if ta is RelTime and tb in (int, float):
            if op == "*":
                return RelTime(a.secs * b)
            return RelTime(_real_div(a.secs, float(b)))
        if op == "*" and ta in (int, float) and tb is RelTime:
            return RelTime(a * b.secs)
    return ERROR


def _c_int(x: float) -> int:
    """C's truncating conversion of a double to a 32-bit int."""
    if math.isnan(x) or math.isinf(x):
        return -(1 << 31)  # what the x86 conversion instruction yields
    n = int(x)
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= (1 << 31) else n


def _real_div(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _int_div(a: int, b: int) -> Any:
    if b == 0:
        return ERROR
    if a == INT64_MIN and b == -1:
        return INT64_MAX
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_mod(a: int, b: int) -> Any:
    if b == 0:
        return ERROR
    if a == INT64_MIN and b == -1:
        return 0
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _real_result(x: float) -> Any:
    return ERROR if x == math.inf else x


def arith(op: str, a: Any, b: Any) -> Any:
    """Binary ``+ - * / %`` on evaluated operands."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if op == "+":
            return wrap_int(a + b)
        if op == "-":
            return wrap_int(a - b)
        if op == "*":
            return wrap_int(a * b)
        if op == "/":
            return _int_div(a, b)
        return _int_mod(a, b)
    if ta not in _ARITH_OK or tb not in _ARITH_OK:
        return ERROR
    if ta is AbsTime or tb is AbsTime or ta is RelTime or tb is RelTime:
        return _time_arith(op, a, b)
    if ta is bool:
        a = int(a)
        ta = int
    if tb is bool:
        b = int(b)
        tb = int
    if ta is int and tb is int:
        return arith(op, a, b)
    x, y = float(a), float(b)
    if op == "+":
        return _real_result(x + y)
    if op == "-":
        return _real_result(x - y)
    if op == "*":
        return _real_result(x * y)
    if op == "/":
        return _real_result(_real_div(x, y))
    return ERROR


def unary_minus(a: Any) -> Any:
    t = type(a)
    if t is int:
        return wrap_int(-a)
    if t is float:
        return -a
    if t is RelTime:
        return RelTime(-a.secs)
    if a is ERROR or a is UNDEFINED:
        return a
    return ERROR


def unary_plus(a: Any) -> Any:
    t = type(a)
    if t in (int, float, RelTime) or a is ERROR or a is UNDEFINED:
        return a
    return ERROR


def logical_not(a: Any) -> Any:
    if a is ERROR or a is UNDEFINED:
        return a
    b = bool_equiv(a)
    if b is None:
        return ERROR
    return not b


def bitwise_not(a: Any) -> Any:
    if a is ERROR or a is UNDEFINED:
        return a
    if type(a) is int:
        return ~a
    return ERROR


# ---------------------------------------------------------------- comparison

_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _num(v: Any) -> Any:
    return int(v) if type(v) is bool else v


def compare(op: str, a: Any, b: Any) -> Any:
    """``< <= > >= == !=`` on evaluated operands."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return _CMP[op](a, b)
    if ta is str and tb is str:
        la, lb = ascii_lower(a), ascii_lower(b)
        if not (la.isascii() and lb.isascii()) and op not in _EQUALITY:
            return _CMP[op](_strcasecmp_bytes(la), _strcasecmp_bytes(lb))
        return _CMP[op](la, lb)
    if ta is ListValue or tb is ListValue or ta not in _SCALARS or tb not in _SCALARS:
        return ERROR
    if ta is str or tb is str:
        return ERROR
    if ta is AbsTime or tb is AbsTime:
        if ta is AbsTime and tb is AbsTime:
            return _CMP[op](a.secs, b.secs)
        return ERROR
    if ta is RelTime or tb is RelTime:
        if ta is RelTime and tb is RelTime:
            return _CMP[op](a.secs, b.secs)
        return ERROR
    x, y = _num(a), _num(b)
    if type(x) is float or type(y) is float:
        return _CMP[op](float(x), float(y))
    return _CMP[op](x, y)


_SCALARS = (int, float, bool, str, AbsTime, RelTime)


_EQUALITY = frozenset({"==", "!="})


def _strcasecmp_bytes(folded: str) -> bytes:
    """The bytes ``strcasecmp`` orders a string by (its ASCII letters already folded).

    Code points order as UTF-8 bytes do, except the bytes that are not UTF-8 (held as
    surrogate escapes): those are the bytes 0x80 to 0xFF, below every multi-byte
    character. So ordering strings that are not both ASCII compares their bytes;
    equality is the same either way.
    """
    return folded.encode("utf-8", "surrogateescape")


def identical(a: Any, b: Any) -> Any:
    """``=?=`` / ``is``: same type and same value, with no promotion; never UNDEFINED."""
    ta, tb = type(a), type(b)
    if a is UNDEFINED or a is ERROR or b is UNDEFINED or b is ERROR:
        return a is b
    if ta is not tb:
        return False
    if ta is str or ta is int or ta is bool or ta is float:
        return a == b
    if ta is AbsTime:
        return a.secs == b.secs and a.offset == b.offset
    if ta is RelTime:
        return a.secs == b.secs
    return ERROR


def not_identical(a: Any, b: Any) -> Any:
    r = identical(a, b)
    return r if r is ERROR else not r


# ---------------------------------------------------------------- bitwise

_SIGN = 1 << 63


def bitwise(op: str, a: Any, b: Any) -> Any:
    """``& | ^ << >> >>>`` on evaluated operands."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    if type(a) is not int or type(b) is not int:
        return ERROR
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "<<":
        return wrap_int(a << (b & 63))
    if op == ">>":
        if a >= 0:
            return a >> (b & 63)
        return a >> min(64, b) if b > 0 else a
    # >>>: logical shift right
    if a >= 0:
        return a >> (b & 63)
    v = (a >> 1) & (INT64_MAX)
    return wrap_int(v >> ((b - 1) & 63))


# ---------------------------------------------------------------- logical (lazy)


def and_rest(left: Any, right: Any) -> Any:
    """``left && right`` once it is known ``left`` is not (boolean-equivalent) false."""
    lb = bool_equiv(left)
    if lb is None and left is not UNDEFINED and left is not ERROR:
        return ERROR
    rb = bool_equiv(right)
    if rb is None and right is not UNDEFINED and right is not ERROR:
        return ERROR
    if left is ERROR:
        return ERROR
    if lb is True:
        return rb if rb is not None else right
    # left is UNDEFINED
    if rb is None:
        return right
    return False if rb is False else UNDEFINED


def or_rest(left: Any, right: Any) -> Any:
    """``left || right`` once it is known ``left`` is not (boolean-equivalent) true."""
    lb = bool_equiv(left)
    if lb is None and left is not UNDEFINED and left is not ERROR:
        return ERROR
    rb = bool_equiv(right)
    if rb is None and right is not UNDEFINED and right is not ERROR:
        return ERROR
    if left is ERROR:
        return ERROR
    if lb is False:
        return rb if rb is not None else right
    # left is UNDEFINED
    if rb is None:
        return right
    return True if rb is True else UNDEFINED


BINARY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: arith("+", a, b),
    "-": lambda a, b: arith("-", a, b),
    "*": lambda a, b: arith("*", a, b),
    "/": lambda a, b: arith("/", a, b),
    "%": lambda a, b: arith("%", a, b),
    "<": lambda a, b: compare("<", a, b),
    "<=": lambda a, b: compare("<=", a, b),
    ">": lambda a, b: compare(">", a, b),
    ">=": lambda a, b: compare(">=", a, b),
    "==": lambda a, b: compare("==", a, b),
    "!=": lambda a, b: compare("!=", a, b),
    "=?=": identical,
    "=!=": not_identical,
    "&": lambda a, b: bitwise("&", a, b),
    "|": lambda a, b: bitwise("|", a, b),
    "^": lambda a, b: bitwise("^", a, b),
    "<<": lambda a, b: bitwise("<<", a, b),
    ">>": lambda a, b: bitwise(">>", a, b),
    ">>>": lambda a, b: bitwise(">>>", a, b),
}

UNARY_OPS: dict[str, Callable[[Any], Any]] = {
    "-": unary_minus,
    "+": unary_plus,
    "!": logical_not,
    "~": bitwise_not,
}
