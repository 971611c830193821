"""Functions about expressions themselves: ``ifThenElse``, ``eval``, ``unparse``, ``unresolved``,
``debug``, ``evalInEachContext``, ``countMatches``."""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.nodes import AttrRef, EvalState, Node
from htcpool.classad.operators import bool_equiv
from htcpool.classad.values import ERROR, UNDEFINED


@builtin("ifThenElse", 3, lazy=True)
def _if_then_else(s: EvalState, cond: Node, then: Node, orelse: Node) -> Any:
    v = cond.compiled()(s)
    if v is UNDEFINED or v is ERROR:
        return v
    b = bool_equiv(v)
    if b is None:
        return ERROR
    return then.compiled()(s) if b else orelse.compiled()(s)


@builtin("eval", 1)
def _eval(s: EvalState, v: Any) -> Any:
    from htcpool.classad.builtins.types import to_string
    from htcpool.classad.parser import parse_expression

    text = to_string(v)
    if type(text) is not str:
        return ERROR
    try:
        node = parse_expression(text)
    except ClassAdParseError:
        return ERROR
    return node.compiled()(s)


@builtin("unparse", 1, lazy=True)
def _unparse(s: EvalState, arg: Node) -> Any:
    from htcpool.classad.unparse import unparse

    if type(arg) is not AttrRef:
        return ERROR
    target = _find_attribute(s, arg)
    if target is None:
        return ""
    return unparse(target)


def _find_attribute(s: EvalState, ref: AttrRef) -> Node | None:
    """The expression an attribute reference names, without evaluating it."""
    from htcpool.classad.classad import ClassAd

    if ref.base is not None:
        base = ref.base.compiled()(s)
        if type(base) is not ClassAd:
            return None
        start: Any = base
    else:
        start = s.root if ref.absolute else s.cur
    ad = start
    while ad is not None:
        node = ad._exprs.get(ref.key)
        if node is not None:
            return node
        ad = None if ad is s.root else ad._parent
    return None
