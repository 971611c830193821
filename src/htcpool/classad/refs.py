"""Which attributes an expression refers to, from the point of view of one ad.

``external_refs`` lists the references the ad cannot resolve (what a match
needs from the other side), with scoped ones written in full (``TARGET.Memory``);
``internal_refs`` lists the attributes of the ad the expression uses, following
references through the ad's own expressions. Both follow HTCondor's
``GetExternalReferences``/``GetInternalReferences`` with full names. Results are
sorted case-insensitively and without duplicates; an expression with no such
references gives an empty list (HTCondor's binding returns ``['']`` there, an
artefact of splitting an empty string, which is not copied).
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.classad import ClassAd
from htcpool.classad.context import DEFAULT_CONTEXT
from htcpool.classad.nodes import AttrRef, Node
from htcpool.classad.scope import EvalFailure, EvalState, root_of
from htcpool.classad.unparse import unparse
from htcpool.classad.values import UNDEFINED


def _find(ad: ClassAd | None, key: str, root: ClassAd | None) -> tuple[Node | None, ClassAd | None]:
    cur = ad
    while cur is not None:
        node = cur._exprs.get(key)
        if node is not None:
            return node, cur
        cur = None if cur is root else cur._parent
    return None, None


def _walk(ad: ClassAd, node: Node, external: set[str], internal: set[str], seen: set[int], depth: int) -> None:
    if depth > 200:
        return
    stack: list[tuple[Node, ClassAd]] = [(node, ad)]
    root = root_of(ad) or ad
    while stack:
        n, scope = stack.pop()
        if type(n) is AttrRef:
            assert isinstance(n, AttrRef)
            if n.base is not None:
                base_val = _eval_quiet(n.base, scope)
                if isinstance(base_val, ClassAd):
                    target, where = _find(base_val, n.key, None)
                    if target is None:
                        external.add(n.name)
                    elif id(target) not in seen:
                        seen.add(id(target))
                        if where is scope:
                            internal.add(base_val._names[n.key])
                        stack.append((target, where or base_val))
                    # the base itself is an internal reference when it names an attribute
                    _walk(ad, n.base, set(), internal, seen, depth + 1)
                    continue
                if base_val is UNDEFINED:
                    external.add(unparse(n.base) + "." + n.name)
                continue
            start = root if n.absolute else scope
            target, where = _find(start, n.key, root)
            if target is None:
                external.add(n.name)
                continue
            if where is ad:
                internal.add(ad._names[n.key])
            if id(target) not in seen:
                seen.add(id(target))
                stack.append((target, where or scope))
            continue
        if isinstance(n, ClassAd):
            continue
        for child in n.children():
            stack.append((child, scope))


def _eval_quiet(node: Node, scope: ClassAd) -> Any:
    s = EvalState(scope, DEFAULT_CONTEXT)
    try:
        return node.compiled()(s)
    except EvalFailure:
        return UNDEFINED


def _sorted(names: set[str]) -> list[str]:
    return sorted(names, key=str.lower)


def external_refs(ad: ClassAd, node: Node) -> list[str]:
    external: set[str] = set()
    _walk(ad, node, external, set(), set(), 0)
    return _sorted(external)


def internal_refs(ad: ClassAd, node: Node) -> list[str]:
    internal: set[str] = set()
    _walk(ad, node, set(), internal, set(), 0)
    return _sorted(internal)
