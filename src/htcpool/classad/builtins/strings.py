"""String functions: ``strcat``, ``join``, ``substr``, ``strcmp``, ``stricmp``, ``toUpper``, ``toLower``.

Arguments that are not strings are converted with ``string()`` first; the first
UNDEFINED or ERROR met (in argument order) is the result. HTCondor's strings are
bytes, so ``substr`` counts and cuts bytes of the UTF-8 text, and case changes and
comparisons touch ASCII letters only (the C locale).
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import c_int32, from_utf8, to_string, utf8
from htcpool.classad.nodes import EvalState, Node, list_values
from htcpool.classad.operators import ascii_lower
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _join_values(values: list[Any]) -> Any:
    """``join``: convert every value to a string and join them with the first.

    UNDEFINED values are left out (an UNDEFINED separator is the empty string). As in
    HTCondor, the separator goes only between a non-empty result so far and the next item.
    """
    parts: list[str] = []
    for i, v in enumerate(values):
        if v is UNDEFINED:
            if i == 0:
                parts.append("")
            continue
        text = to_string(v)
        if type(text) is not str:
            return text
        parts.append(text)
    out = ""
    for part in parts[1:]:
        if out:
            out += parts[0]
        out += part
    return out


@builtin("strcat", 0, None, lazy=True)
def _strcat(s: EvalState, *args: Node) -> Any:
    """The arguments in order, stopping at the first UNDEFINED or ERROR (HTCondor does not
    evaluate the rest: ``strcat(undefined, .a)`` is UNDEFINED even with no root ad)."""
    parts: list[str] = []
    for a in args:
        text = to_string(a.compiled()(s))
        if type(text) is not str:
            return text
        parts.append(text)
    return "".join(parts)


@builtin("join", 0, None, lazy=True)
def _join(s: EvalState, *args: Node) -> Any:
    values = [a.compiled()(s) for a in args]
    if 0 < len(values) <= 2 and type(values[-1]) is ListValue:
        items = list_values(s, values[-1])
        head = values[0] if len(values) == 2 else ""
        values = [head, *items]
    if not values:
        return ""
    items = values[1:]
    if all(v is UNDEFINED for v in items) and UNDEFINED in (values[0], *items) and ERROR not in values:
        return UNDEFINED
    return _join_values(values)


@builtin("substr", 2, 3)
def _substr(s: EvalState, text: Any, offset: Any, length: Any = None) -> Any:
    if text is UNDEFINED or offset is UNDEFINED or length is UNDEFINED:
        return UNDEFINED
    if type(text) is not str or type(offset) is not int:
        return ERROR
    if length is not None and type(length) is not int:
        return ERROR
    data = utf8(text)
    size = len(data)
    start = c_int32(offset)
    n = 0 if length is None else c_int32(length)
    if start < 0:
        start = max(size + start, 0)  # from the end, never before the start
    elif start >= size:
        start = size
    if n <= 0:
        n = max(0, size - start + n)
    elif n > size - start:
        n = size - start
    if length is not None and c_int32(length) == 0:
        return ""
    return from_utf8(data[start : start + n])


def _compare(a: Any, b: Any, fold: bool) -> Any:
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    x, y = to_string(a), to_string(b)
    if type(x) is not str or type(y) is not str:
        return ERROR
    bx, by = utf8(x), utf8(y)
    if fold:
        bx, by = bx.lower(), by.lower()
    return (bx > by) - (bx < by)


@builtin("strcmp", 2)
def _strcmp(s: EvalState, a: Any, b: Any) -> Any:
    return _compare(a, b, False)


@builtin("stricmp", 2)
def _stricmp(s: EvalState, a: Any, b: Any) -> Any:
    return _compare(a, b, True)


@builtin("toUpper", 1)
def _to_upper(s: EvalState, v: Any) -> Any:
    text = to_string(v)
    return text.translate(_ASCII_UPPER) if type(text) is str else text


@builtin("toLower", 1)
def _to_lower(s: EvalState, v: Any) -> Any:
    text = to_string(v)
    return ascii_lower(text) if type(text) is str else text
