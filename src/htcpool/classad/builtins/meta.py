"""Functions about expressions themselves: ``ifThenElse``, ``eval``, ``unparse``, ``unresolved``,
``debug``, ``evalInEachContext``, ``countMatches``.

These are lazy: they receive their argument expressions unevaluated.

* ``unparse(attr)`` looks ``attr`` up in the current ad only (as HTCondor's
  ``curAd->Lookup`` of the reference's text, so ``a.b`` is never found) and
  returns the pretty-printed expression, or ``""``.
* ``unresolved(attr [, pattern])`` lists the references of the attribute's
  expression the ad cannot satisfy: first the plain names found nowhere in the ad
  or its enclosing ads, then the scoped ones (``TARGET.x`` and ``MY.x`` as ``x``,
  ``a.b`` as written), each group sorted ignoring case; internal references are
  followed. With a pattern the result is whether any of them matches it.
* ``evalInEachContext(expr, ads)`` evaluates ``expr`` (when it is a reference to an existing
  attribute, that attribute's expression) inside each ad of the list
  (UNDEFINED elements give UNDEFINED, other non-ads ERROR); ``countMatches`` counts the ads in which
  it is true (or a non-zero number), skipping elements that are not ads.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.nodes import (
    AttrRef,
    EvalFailure,
    EvalState,
    Node,
    eval_in,
    list_values,
    value_node,
)
from htcpool.classad.operators import bool_equiv
from htcpool.classad.values import ERROR, UNDEFINED, ListValue


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
    from htcpool.classad.unparse import pretty

    if type(arg) is not AttrRef:
        return ERROR
    if arg.base is not None or arg.absolute or s.cur is None:
        return ""
    target = s.cur._exprs.get(arg.key)
    return "" if target is None else pretty(target)


@builtin("debug", 1, lazy=True)
def _debug(s: EvalState, arg: Node) -> Any:
    return arg.compiled()(s)


@builtin("unresolved", 1, 2, lazy=True)
def _unresolved(s: EvalState, arg: Node, pattern: Node | None = None) -> Any:
    from htcpool.classad.builtins.regex import compile_pattern, search
    from htcpool.classad.builtins.types import utf8

    if type(arg) is not AttrRef:
        return ERROR
    target = _find_attribute(s, arg)
    if target is None:
        return UNDEFINED
    names = _unresolved_names(s, target)
    if pattern is None:
        return ",".join(names)
    text = pattern.compiled()(s)
    if type(text) is not str:
        raise EvalFailure("unresolved() needs a string pattern")
    rx = compile_pattern(text, "")
    if rx is None:
        return ERROR
    for n in names:
        found = search(rx, utf8(n))
        if found is not False:
            return found  # True, or ERROR when the search ran out of time
    return False


def _unresolved_names(s: EvalState, node: Node) -> list[str]:
    from htcpool.classad.unparse import unparse

    plain: dict[str, str] = {}
    scoped: dict[str, str] = {}
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is AttrRef:
            if n.base is None and not n.absolute:
                found = _find_attribute(s, n)
                if found is None:
                    plain.setdefault(n.key, n.name)
                elif id(found) not in seen:
                    seen.add(id(found))
                    stack.append(found)
                continue
            base = n.base
            if type(base) is AttrRef and base.base is None and base.key in ("target", "my"):
                scoped.setdefault(n.key, n.name)
            else:
                text = unparse(n)
                scoped.setdefault(text.lower(), text)
            continue
        stack.extend(n.children())
    return [plain[k] for k in sorted(plain)] + [scoped[k] for k in sorted(scoped)]


def _contexts(s: EvalState, node: Node) -> Any:
    """The evaluated elements of the context list, or UNDEFINED/ERROR."""
    lst = node.compiled()(s)
    if type(lst) is not ListValue:
        return lst if lst is UNDEFINED else ERROR
    return list_values(s, lst)


def _each_expression(s: EvalState, expr: Node) -> Node:
    """The expression to evaluate in each context: an attribute reference names its attribute's
    expression when the attribute exists (``countMatches(MY.RequireGPUs, AvailableGPUs)`` tests the
    job's RequireGPUs in each GPU ad), else it is itself the expression (``Capability``)."""
    if type(expr) is AttrRef:
        found = _find_attribute(s, expr)
        if found is not None:
            return found
    return expr


@builtin("evalInEachContext", 2, lazy=True)
def _eval_in_each_context(s: EvalState, expr: Node, ads: Node) -> Any:
    from htcpool.classad.builtins.types import is_classad

    expr = _each_expression(s, expr)
    contexts = _contexts(s, ads)
    if type(contexts) is not list:
        return contexts
    out = []
    for ad in contexts:
        if ad is UNDEFINED:
            out.append(value_node(UNDEFINED))
        elif is_classad(ad):
            out.append(value_node(eval_in(s, expr, ad)))
        else:
            out.append(value_node(ERROR))
    return ListValue(tuple(out), None)


@builtin("countMatches", 2, lazy=True)
def _count_matches(s: EvalState, expr: Node, ads: Node) -> Any:
    from htcpool.classad.builtins.types import is_classad

    expr = _each_expression(s, expr)
    contexts = _contexts(s, ads)
    if contexts is ERROR:
        return ERROR
    if type(contexts) is not list:
        return 0
    return sum(1 for ad in contexts if is_classad(ad) and bool_equiv(eval_in(s, expr, ad)) is True)


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
