"""String-list functions: a list written inside one string, ``"a, b, c"``.

``stringListSize``, ``stringListSum``/``Avg``/``Min``/``Max``, ``stringListMember``,
``stringListIMember``, ``stringListsIntersect``, ``stringListSubsetMatch``,
``stringListISubsetMatch`` and ``stringList_regexpMember``.

Each character of the delimiter string (default ``", "``) ends an item; items are
trimmed of white space and empty ones are dropped (HTCondor's ``StringList``); an
empty delimiter string makes the whole text one item. ``stringListMember`` and the
subset matches treat an UNDEFINED delimiter as the default, and
``stringListMember`` is false when the item or the list is UNDEFINED (UNDEFINED
when both are).
``stringListsIntersect`` splits with ``strcspn`` instead and does not trim. The
numeric summaries read items as C's ``sscanf("%lf")`` does and keep HTCondor's
starting values: ``stringListMax`` starts from ``FLT_MIN`` and ``stringListMin``
from ``FLT_MAX``, so an all-negative list has maximum 0.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.regex import compile_pattern, search
from htcpool.classad.builtins.types import c_strtod, real_to_int, utf8
from htcpool.classad.nodes import EvalState
from htcpool.classad.operators import ascii_lower
from htcpool.classad.values import ERROR, UNDEFINED

_SPACE = " \t\r\n"
_FLT_MAX = 3.4028234663852886e38
_FLT_MIN = 1.1754943508222875e-38


def string_list(text: str, delims: str = ", ") -> list[str]:
    if not delims:
        item = text.strip(_SPACE)
        return [item] if item else []
    items: list[str] = []
    current: list[str] = []
    for c in text + delims[:1]:
        if c in delims:
            item = "".join(current).strip(_SPACE)
            if item:
                items.append(item)
            current = []
        else:
            current.append(c)
    return items


def _args_are_strings(*values: Any) -> bool:
    return all(type(v) is str for v in values)


@builtin("stringListSize", 1, 2)
def _size(s: EvalState, text: Any, delims: Any = ", ") -> Any:
    if not _args_are_strings(text, delims):
        return ERROR
    return len(string_list(text, delims))


def _summary(name: str) -> None:
    def impl(s: EvalState, text: Any, delims: Any = ", ") -> Any:
        if not _args_are_strings(text, delims):
            return ERROR
        items = string_list(text, delims)
        if not items:
            return 0.0 if name in ("sum", "avg") else UNDEFINED
        acc = {"sum": 0.0, "avg": 0.0, "min": _FLT_MAX, "max": _FLT_MIN}[name]
        is_real = False
        for item in items:
            x = c_strtod(item)
            if x is None:
                return ERROR
            if item.strip("+-0123456789"):
                is_real = True
            if name in ("sum", "avg"):
                acc = acc + x
            elif name == "min":
                acc = x if x < acc else acc
            else:
                acc = x if x > acc else acc
        if name == "avg":
            acc /= len(items)
        return acc if is_real else real_to_int(acc)

    builtin("stringList" + name.capitalize(), 1, 2)(impl)


for _name in ("sum", "avg", "min", "max"):
    _summary(_name)


def _member(fold: bool) -> Any:
    def impl(s: EvalState, item: Any, text: Any, delims: Any = ", ") -> Any:
        if delims is UNDEFINED:
            delims = ", "
        if any(type(v) is not str and v is not UNDEFINED for v in (item, text, delims)):
            return ERROR
        if item is UNDEFINED or text is UNDEFINED:
            return UNDEFINED if item is text else False
        items = string_list(text, delims)
        if fold:
            return ascii_lower(item) in (ascii_lower(x) for x in items)
        return item in items

    return impl


builtin("stringListMember", 2, 3)(_member(False))
builtin("stringListIMember", 2, 3)(_member(True))


def _strcspn_split(text: str, delims: str) -> list[str]:
    return string_list_raw(text, delims or " ,")


def string_list_raw(text: str, delims: str) -> list[str]:
    """Items between delimiter characters, untrimmed, empty ones dropped."""
    items: list[str] = []
    current: list[str] = []
    for c in text:
        if c in delims:
            if current:
                items.append("".join(current))
            current = []
        else:
            current.append(c)
    if current:
        items.append("".join(current))
    return items


@builtin("stringListsIntersect", 2, 3)
def _intersect(s: EvalState, a: Any, b: Any, delims: Any = "") -> Any:
    if a is ERROR or b is ERROR or delims is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED or delims is UNDEFINED:
        return UNDEFINED
    if not _args_are_strings(a, b, delims):
        return ERROR
    other = set(_strcspn_split(b, delims))
    return any(item in other for item in _strcspn_split(a, delims))


def _subset(fold: bool) -> Any:
    def impl(s: EvalState, a: Any, b: Any, delims: Any = ", ") -> Any:
        if delims is UNDEFINED:
            delims = ", "
        if type(delims) is not str:
            return ERROR
        if a is UNDEFINED and b is UNDEFINED:
            return UNDEFINED
        if a is UNDEFINED:
            return True if type(b) is str else ERROR
        if type(a) is not str:
            return ERROR
        if b is not UNDEFINED and type(b) is not str:
            return ERROR
        wanted = string_list(a, delims)
        if a and not wanted:
            return False  # text made only of separators is not an empty list to HTCondor
        if type(b) is not str:  # UNDEFINED: the only other value left
            return not wanted
        norm = ascii_lower if fold else (lambda x: x)
        have = {norm(x) for x in string_list(b, delims)}
        return all(norm(x) in have for x in wanted)

    return impl


builtin("stringListSubsetMatch", 2, 3)(_subset(False))
builtin("stringListISubsetMatch", 2, 3)(_subset(True))


@builtin("stringList_regexpMember", 2, 4)
def _regexp_member(s: EvalState, pattern: Any, text: Any, delims: Any = ", ", options: Any = "") -> Any:
    if not _args_are_strings(pattern, text, delims, options):
        return ERROR
    rx = compile_pattern(pattern, options)
    if rx is None:
        return ERROR
    items = string_list(text, delims)
    if not items:
        return UNDEFINED
    for item in items:
        found = search(rx, utf8(item))
        if found is not False:
            return found  # True, or ERROR when the search ran out of time
    return False
