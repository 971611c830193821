"""Numeric functions: ``floor``, ``ceiling`` (and ``ceil``), ``round``, ``pow``, ``quantize``, ``random``.

They follow HTCondor's C code: an integer argument passes through unchanged, anything
else is converted with ``real()`` (so strings count, and UNDEFINED stays UNDEFINED)
and the C result is cast back to a 64-bit integer, out-of-range values becoming
INT64_MIN. ``round`` rounds half to even (C's ``rint``). ``random`` draws from the
context's seeded generator; ``random(n)`` for an integer ``n <= 0`` fails the whole
evaluation, as it does in HTCondor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import c_int32, real_to_int, to_real
from htcpool.classad.nodes import EvalFailure, EvalState, list_values
from htcpool.classad.values import ERROR, ListValue, wrap_int


def _rounding(name: str, fn: Callable[[float], float]) -> None:
    def impl(s: EvalState, v: Any) -> Any:
        if type(v) is int:
            return v
        x = to_real(v)
        if type(x) is not float:
            return x
        if math.isnan(x) or math.isinf(x):
            return real_to_int(x)
        return real_to_int(fn(x))

    builtin(name, 1)(impl)


_rounding("floor", math.floor)
_rounding("ceiling", math.ceil)
_rounding("ceil", math.ceil)
_rounding("round", round)  # Python's round() of a float rounds half to even, as rint() does


def _c_pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        if x < 0 and y == math.floor(y) and int(y) % 2 == 1:
            return -math.inf
        return math.inf
    except ValueError:
        if x == 0.0:
            # pow(+-0, negative): +-inf
            odd = y == math.floor(y) and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


@builtin("pow", 2)
def _pow(s: EvalState, base: Any, exponent: Any) -> Any:
    if type(base) is int and type(exponent) is int and exponent >= 0:
        return real_to_int(_c_pow(float(base), float(exponent)) + 0.5)
    x, y = to_real(base), to_real(exponent)
    if type(x) is not float or type(y) is not float:
        return ERROR
    return _c_pow(x, y)


@builtin("quantize", 2)
def _quantize(s: EvalState, a: Any, b: Any) -> Any:
    x = to_real(a)
    if type(x) is not float:
        return ERROR
    if type(b) is ListValue:
        chosen: Any = 0.0
        for item in list_values(s, b):
            chosen = item
            step = to_real(item)
            if type(step) is not float:
                return ERROR
            if step >= x:
                return item
        b = chosen
        step = to_real(b)
    else:
        step = to_real(b)
        if type(step) is not float:
            return ERROR
    if type(b) is int:
        if b == 0:
            return a
        if type(a) is int:
            return wrap_int(_c_div(a + b - 1, b) * b)
        return _ceil(x / b) * b
    if -1e-8 <= step <= 1e-8:
        return a
    return _ceil(x / step) * step


def _c_div(a: int, b: int) -> int:
    a, b = wrap_int(a), b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _ceil(x: float) -> float:
    """C's ``ceil``: a result of zero keeps the sign of ``x`` (``ceil(-0.2)`` is ``-0.0``)."""
    if math.isnan(x) or math.isinf(x):
        return x
    up = float(math.ceil(x))
    return math.copysign(up, x) if up == 0.0 else up


@builtin("random", 0, 1)
def _random(s: EvalState, limit: Any = 1.0) -> Any:
    rng = s.ctx.rng
    if type(limit) is int:
        top = c_int32(limit)
        if top <= 0:
            # HTCondor's evaluation fails outright here (a division by zero for 0).
            raise EvalFailure("random() needs a positive integer limit")
        return rng.getrandbits(31) % top
    if type(limit) is float:
        return limit * rng.random()
    return ERROR
