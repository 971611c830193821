"""``absTime()`` and ``relTime()``: making time values from numbers and from text.

HTCondor turns ``absTime("…")`` and ``relTime("…")`` with one literal string
argument into a constant when it parses the expression. Here the functions are
lazy and do the same when their only argument is a string literal:

* ``absTime("2003-01-25T09:00:00-06:00")``: the digits are read as ``yyyy``,
  then up to five two-digit fields (month, day, hour, minute, second) separated by
  anything that is not a digit; a trailing ``Z``, ``+hhmm`` or ``+hh:mm`` is the
  zone, otherwise the local zone. Fields out of range carry over as in ``mktime``.
* ``relTime("1+02:03:04.5")``: read from the right as ``[-][days(+|d)][hh(:|h)]
  [mm(:|m)]ss[.fff][s]``; the result is a Real number of seconds, as in HTCondor.

Text that does not parse is a syntax error in HTCondor; here it is ERROR. A string
that is not a literal (``absTime(strcat(…))``) follows HTCondor's run-time path:
``absTime`` returns the string unchanged and ``relTime`` gives ``relTime(0)``.

Numbers pass through C's 32-bit ``int`` on the way (``absTime(1e10)`` is the
earliest 32-bit time), as HTCondor's code does.
"""

from __future__ import annotations

import math
from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.calendar import timegm
from htcpool.classad.builtins.types import c_int32
from htcpool.classad.nodes import EvalFailure, EvalState, Literal, Node
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, RelTime

_SPACE = " \t\n\v\f\r"


def double_to_int32(x: float) -> int:
    """C's ``(int)`` of a double on x86: out of range and NaN give INT_MIN."""
    if math.isnan(x) or x >= 2.0**31 or x <= -(2.0**31) - 1:
        return -(1 << 31)
    return int(x)


def double_to_time(x: float) -> int:
    """C's ``(time_t)`` of a double on x86-64."""
    if math.isnan(x) or x >= 2.0**63 or x < -(2.0**63):
        return -(1 << 63)
    return int(x)


def parse_abstime(text: str, local_zone: int) -> AbsTime | None:
    offset: int | None = None
    i = len(text) - 1
    while i >= 0 and text[i] in _SPACE:
        i -= 1
    n = len(text)
    if i > 0 and text[i] in "zZ":
        offset = 0
        text = text[:i] + text[i + 1 :]
    elif n > 5 and text[n - 5] in "+-":
        text, offset = _zone(text)
    elif n > 6 and text[n - 6] in "+-" and text[n - 3] == ":":
        text, offset = _zone(text[: n - 3] + text[n - 2 :])
    fields = [0, 1, 0, 0, 0, 0]  # year, month, day, hour, minute, second (month from 1)
    pos, n = _next_digit(text, 0), len(text)
    if pos > n - 4:
        return None
    fields[0] = _atoi(text[pos : pos + 4])
    pos += 4
    fields[2] = 0
    for k in range(1, 6):
        pos = _next_digit(text, pos)
        if pos <= n - 2:
            fields[k] = _atoi(text[pos : pos + 2])
            pos += 2
    pos = _next_digit(text, pos)
    if pos <= n - 1 and text[pos].isdigit():
        return None
    year, month, day, hour, minute, sec = fields
    secs = timegm(year, month - 1, day, hour, minute, sec)
    if secs - local_zone == -1:  # mktime's failure value
        return None
    zone = local_zone if offset is None else offset
    return AbsTime(secs - zone, zone)


def _zone(text: str) -> tuple[str, int | None]:
    tail = text[-5:]
    if tail[0] in "+-" and all(c in "0123456789" for c in tail[1:]):
        hours, minutes = int(tail[1:3]), int(tail[3:5])
        sign = -1 if tail[0] == "-" else 1
        return text[:-5], sign * (hours * 3600 + minutes * 60)
    return text, None


def _next_digit(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] not in "0123456789":
        pos += 1
    return pos


def _atoi(text: str) -> int:
    digits = ""
    for c in text.lstrip(_SPACE):
        if c not in "0123456789":
            break
        digits += c
    return int(digits) if digits else 0


def parse_reltime(text: str) -> float | None:
    i = len(text) - 1

    def skip_space() -> None:
        nonlocal i
        while i >= 0 and text[i] in _SPACE:
            i -= 1

    def digits_back() -> str:
        nonlocal i
        start = i
        while i >= 0 and text[i] in "0123456789":
            i -= 1
        return text[i + 1 : start + 1]

    secs = 0.0
    skip_space()
    if i >= 0 and (text[i] in "sS" or text[i] in "0123456789"):
        if text[i] in "sS":
            i -= 1
        skip_space()
        number = digits_back()
        if i >= 0 and text[i] == ".":
            i -= 1
            number = digits_back() + "." + number
        secs = float(number) if number not in ("", ".") else 0.0
    parts = []
    for marks in ("mM:", "hH:", "dD+"):
        skip_space()
        value = 0
        if i >= 0 and text[i] in marks:
            i -= 1
            skip_space()
            digits = digits_back()
            value = int(digits) if digits else 0
        parts.append(value)
    mins, hours, days = parts
    skip_space()
    negative = i >= 0 and text[i] == "-"
    if negative:
        i -= 1
    skip_space()
    if i >= 0:
        return None
    total = days * 86400 + hours * 3600 + mins * 60 + secs
    return -total if negative else total


def _string_literal(args: tuple[Node, ...]) -> str | None:
    if len(args) == 1 and type(args[0]) is Literal and type(args[0].value) is str:
        return args[0].value
    return None


def _offset_arg(v: Any) -> int | None:
    t = type(v)
    if t is int:
        return c_int32(v)
    if t is float:
        return double_to_int32(v)
    if t is RelTime:
        return c_int32(double_to_time(v.secs))
    return None


@builtin("absTime", 0, 2, lazy=True)
def _abs_time(s: EvalState, *args: Node) -> Any:
    zone = s.ctx.local_zone
    if not args:
        return AbsTime(s.ctx.time_int("absTime()"), zone)
    text = _string_literal(args)
    if text is not None:
        parsed = parse_abstime(text, zone)
        return ERROR if parsed is None else parsed
    v = args[0].compiled()(s)
    explicit: int | None = None
    if len(args) == 2:
        explicit = _offset_arg(args[1].compiled()(s))
        if explicit is None:
            return ERROR
    offset = zone if explicit is None else explicit
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is int:
        if offset == -1:
            # HTCondor mistakes an offset of -1 for a failed zone lookup and fails the evaluation.
            raise EvalFailure("absTime() offset of -1")
        return AbsTime(c_int32(v), offset)
    if t is float:
        return AbsTime(double_to_int32(v), offset)
    if t is RelTime:
        return AbsTime(double_to_time(v.secs), offset)
    if t is AbsTime or t is str:
        return v
    return ERROR


@builtin("relTime", 1, 2, lazy=True)
def _rel_time(s: EvalState, *args: Node) -> Any:
    text = _string_literal(args)
    if text is not None:
        parsed = parse_reltime(text)
        return ERROR if parsed is None else parsed
    v = args[0].compiled()(s)
    if len(args) == 2:
        args[1].compiled()(s)
        return ERROR
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is int:
        return RelTime(float(c_int32(v)))
    if t is float:
        return RelTime(v)
    if t is AbsTime:
        return RelTime(float(v.secs))
    if t is RelTime:
        return v
    if t is str:
        return RelTime(0.0)
    return ERROR
