"""List functions: ``member``, ``identicalMember``, ``anyCompare``, ``allCompare``, ``size``,
``sum``, ``avg``, ``min``, ``max``, and the splitters ``split``, ``splitUserName``, ``splitSlotName``.

Elements are evaluated lazily, in order, in the scope the list was written in, and
compared with the language's own operators (``==`` ignores case on strings, ``is``
does not). ``sum``, ``avg``, ``min`` and ``max`` drop UNDEFINED elements first and
accept only numbers (booleans count as 0 and 1, as in arithmetic).
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import is_classad, utf8
from htcpool.classad.nodes import EvalState, Literal, list_item, list_values
from htcpool.classad.operators import BINARY_OPS, arith, compare, identical, not_identical
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

_NUMBERS = (int, float, bool)


def _membership(s: EvalState, item: Any, lst: Any, use_is: bool) -> Any:
    if lst is UNDEFINED or (not use_is and item is UNDEFINED):
        return UNDEFINED
    if type(lst) is not ListValue or type(item) is ListValue or is_classad(item):
        return ERROR
    if not use_is and item is ERROR:
        return ERROR
    for i in range(len(lst.items)):
        v = list_item(s, lst, i)
        r = identical(v, item) if use_is else compare("==", v, item)
        if r is True:
            return True
    return False


@builtin("member", 2)
def _member(s: EvalState, item: Any, lst: Any) -> Any:
    return _membership(s, item, lst, False)


@builtin("identicalMember", 2)
def _identical_member(s: EvalState, item: Any, lst: Any) -> Any:
    return _membership(s, item, lst, True)


# anyCompare/allCompare spell the identity operators as words
_COMPARISONS = {op: BINARY_OPS[op] for op in ("<", "<=", "!=", "==", ">", ">=")}
_COMPARISONS |= {"is": identical, "isnt": not_identical}


def _list_compare(s: EvalState, op: Any, lst: Any, against: Any, need_all: bool) -> Any:
    if op is UNDEFINED:
        return UNDEFINED
    if type(op) is not str:
        return ERROR
    fn = _COMPARISONS.get(op)
    if fn is None:
        return ERROR
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue:
        return ERROR
    for i in range(len(lst.items)):
        r = fn(list_item(s, lst, i), against)
        if type(r) is not bool:
            # UNDEFINED ends the walk with false; anything else is ERROR.
            return False if r is UNDEFINED else ERROR
        if r and not need_all:
            return True
        if not r and need_all:
            return False
    return need_all


@builtin("anyCompare", 3)
def _any_compare(s: EvalState, op: Any, lst: Any, against: Any) -> Any:
    return _list_compare(s, op, lst, against, False)


@builtin("allCompare", 3)
def _all_compare(s: EvalState, op: Any, lst: Any, against: Any) -> Any:
    return _list_compare(s, op, lst, against, True)


@builtin("size", 1)
def _size(s: EvalState, v: Any) -> Any:
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is ListValue:
        return len(v.items)
    if is_classad(v):
        return len(v._exprs)
    if type(v) is str:
        return len(utf8(v))
    return ERROR


def _numbers(s: EvalState, lst: Any) -> list[Any] | Any:
    """The defined elements of a list, or UNDEFINED/ERROR when the argument or an element is bad."""
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue:
        return ERROR
    out = []
    for v in list_values(s, lst):
        if v is UNDEFINED:
            continue
        if type(v) not in _NUMBERS:
            return ERROR
        out.append(v)
    return out


@builtin("sum", 1)
def _sum(s: EvalState, lst: Any) -> Any:
    values = _numbers(s, lst)
    if type(values) is not list:
        return values
    return _total(values) if values else 0


def _total(values: list[Any]) -> Any:
    """The sum of a non-empty list of numbers, with ClassAd arithmetic."""
    total = values[0]
    for v in values[1:]:
        total = arith("+", total, v)
    return total


@builtin("avg", 1)
def _avg(s: EvalState, lst: Any) -> Any:
    values = _numbers(s, lst)
    if type(values) is not list:
        return values
    if not values:
        return 0
    return arith("/", _total(values), float(len(values)))


def _bound(s: EvalState, lst: Any, op: str) -> Any:
    values = _numbers(s, lst)
    if type(values) is not list:
        return values
    if not values:
        return UNDEFINED
    if len(values) == 1:  # returned as it is, as HTCondor does: min({true}) is true
        return values[0]
    best = values[0]
    for v in values[1:]:
        if compare(op, v, best) is True:
            best = v
    if any(type(v) is float for v in values):
        return float(best)
    return int(best)


@builtin("min", 1)
def _min(s: EvalState, lst: Any) -> Any:
    return _bound(s, lst, "<")


@builtin("max", 1)
def _max(s: EvalState, lst: Any) -> Any:
    return _bound(s, lst, ">")


def _string_list(parts: list[str]) -> ListValue:
    return ListValue(tuple(Literal(p) for p in parts), None)


@builtin("split", 1, 2)
def _split(s: EvalState, text: Any, seps: Any = ", \t") -> Any:
    if type(text) is not str or type(seps) is not str:
        return ERROR
    parts: list[str] = []
    last = 0
    prev = ""
    if seps:
        for i, c in enumerate(text):
            if c not in seps:
                continue
            if i > last:
                parts.append(text[last:i])
            elif not prev.isspace() and prev == c:
                parts.append("")
            if not c.isspace():
                prev = c
            last = i + 1
    if len(text) > last:
        parts.append(text[last:])
    return _string_list(parts)


def _split_at(text: Any, slot: bool) -> Any:
    if type(text) is not str:
        return ERROR
    at = text.find("@")
    if at < 0:
        return _string_list(["", text] if slot else [text, ""])
    return _string_list([text[:at], text[at + 1 :]])


@builtin("splitUserName", 1)
def _split_user_name(s: EvalState, text: Any) -> Any:
    return _split_at(text, False)


@builtin("splitSlotName", 1)
def _split_slot_name(s: EvalState, text: Any) -> Any:
    return _split_at(text, True)
