"""Which attributes an expression refers to: one walk, and the views built on it.

``references(node)`` is the one analysis. It walks the tree once and returns every
attribute reference in it, in the order a depth-first walk meets them, each as a
``Reference`` that says where the reference looks for its attribute:

* ``Scope.MY``: ``MY.name``, the ad the expression belongs to;
* ``Scope.TARGET``: ``TARGET.name``, the other ad of a match;
* ``Scope.UNSCOPED``: ``name`` or ``.name`` (``absolute``), found in the ad or the ads
  around it, and, outside strict evaluation, in the other ad of a match;
* ``Scope.SELECTED``: ``base.name`` for any other ``base`` (``job.Owner``, ``{…}[0].x``),
  an attribute of whatever ``base`` evaluates to.

The walk does not enter the ``base`` of a reference: the ``Reference`` carries it, so
each caller decides what a selection reads (the base's own references, or the
attribute of the ad the base evaluates to). Nested ads written in the expression
(``[a = b].a``) are walked; a ``ClassAd`` object placed in a tree as a value is not.

Built on it:

* ``external_refs`` lists the references an ad cannot resolve (what a match needs
  from the other side), with scoped ones written in full (``TARGET.Memory``);
* ``internal_refs`` lists the attributes of the ad the expression uses, following
  references through the ad's own expressions.

Both follow HTCondor's ``GetExternalReferences``/``GetInternalReferences`` with full
names: the base of a selection is evaluated in the ad (with no clock: a base that
reads the time counts as undefined). Results are sorted case-insensitively and
without duplicates; an expression with no such references gives an empty list
(HTCondor's binding returns ``['']`` there, an artefact of splitting an empty string,
which is not copied). The negotiator's significant attributes
(``negotiator.exprinfo``) and ``condor_q -better-analyze`` (``cli.formats.analyze``)
are views of ``references`` too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from htcpool.classad.classad import ClassAd
from htcpool.classad.context import DEFAULT_CONTEXT
from htcpool.classad.nodes import AttrRef, Node
from htcpool.classad.scope import EvalFailure, EvalState, root_of
from htcpool.classad.unparse import unparse
from htcpool.classad.values import UNDEFINED


class Scope(enum.Enum):
    """Where a reference looks for its attribute (see the module docstring)."""

    MY = "my"
    TARGET = "target"
    UNSCOPED = "unscoped"
    SELECTED = "selected"


_SCOPED = {"my": Scope.MY, "target": Scope.TARGET}


@dataclass(frozen=True, slots=True)
class Reference:
    """One attribute reference of an expression.

    ``name`` is spelled as written and ``key`` is its lower-cased form; ``base`` is
    the expression before the dot (``MY``, ``TARGET`` or the selected value; None for
    an unscoped name); ``absolute`` marks ``.name``. Equality ignores ``base``."""

    scope: Scope
    name: str
    key: str
    base: Node | None = field(default=None, compare=False, repr=False)
    absolute: bool = False


def references(node: Node) -> list[Reference]:
    """Every attribute reference of ``node`` outside the bases of selections, in the order
    of a depth-first walk (last operand first), repeats included."""
    out: list[Reference] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, AttrRef):
            base = n.base
            if base is None:
                out.append(Reference(Scope.UNSCOPED, n.name, n.key, None, n.absolute))
            elif isinstance(base, AttrRef) and base.base is None and base.key in _SCOPED:
                out.append(Reference(_SCOPED[base.key], n.name, n.key, base))
            else:
                out.append(Reference(Scope.SELECTED, n.name, n.key, base))
        elif not isinstance(n, ClassAd):
            stack.extend(n.children())
    return out


# ---------------------------------------------------------------- resolved in one ad


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
        for ref in references(n):
            base = ref.base
            if base is not None:
                base_val = _eval_quiet(base, scope)
                if isinstance(base_val, ClassAd):
                    target, where = _find(base_val, ref.key, None)
                    if target is None:
                        external.add(ref.name)
                    elif id(target) not in seen:
                        seen.add(id(target))
                        if where is scope:
                            internal.add(base_val._names[ref.key])
                        stack.append((target, where or base_val))
                    # the base itself is an internal reference when it names an attribute
                    _walk(ad, base, set(), internal, seen, depth + 1)
                elif base_val is UNDEFINED:
                    external.add(unparse(base) + "." + ref.name)
                continue
            target, where = _find(root if ref.absolute else scope, ref.key, root)
            if target is None:
                external.add(ref.name)
                continue
            if where is ad:
                internal.add(ad._names[ref.key])
            if id(target) not in seen:
                seen.add(id(target))
                stack.append((target, where or scope))


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


__all__ = ["Reference", "Scope", "external_refs", "internal_refs", "references"]
