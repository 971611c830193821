"""Where evaluation finds things: the state of one evaluation and attribute lookup.

The compiled closures of ``nodes`` call into this module whenever they follow an
attribute, select from an ad or a list, or subscript. The state (``EvalState``)
carries the current ad, the root ad, the remaining attribute depth and the context
(clock, strictness, map files). Lookup rules follow HTCondor's library:

* an unscoped name is looked up in the current ad, then in its enclosing ads,
  stopping at the root; the names ``self``/``my``, ``parent``, ``root``/
  ``toplevel`` and ``CurrentTime`` are special when not defined;
* when old-ClassAd semantics are on (the default; ``strict`` turns them off),
  ``MY`` and ``CurrentTime`` are special and a name found nowhere is looked up
  in the current ad's alternate scope (the other ad of a match);
* ``base.name`` looks in the ad ``base`` evaluates to (and applies to every
  element when ``base`` is a list); ``.name`` starts at the root;
* an attribute whose evaluation is already under way (a cycle such as
  ``[a = b; b = a]``) evaluates to UNDEFINED where it is met again;
* nesting is limited as in HTCondor: every operator (parentheses and
  subscripts included) and every selection base nests one level, and following
  an attribute reference costs one level more than the operators around the
  reference. The levels are static within an expression, so ``levels`` counts
  them once per tree and the closures only pay at attribute references. Going
  past ``MAX_ATTRIBUTE_DEPTH`` is an evaluation failure (``EvalFailure``), which
  the public API reports as an exception.
* work is bounded: ``deref`` and ``eval_in`` spend one unit of the evaluation's
  ``budget`` (``EvalContext.budget``, docs/reliability.md) per expression they
  start; at zero they return ERROR without evaluating, so every later reference
  is ERROR at once and the evaluation ends after a fixed amount of work. An
  evaluation whose context has a ``WorkPool`` starts with at most what the pool
  has left, and the public entry points charge the pool (``settle``) when done.

``nodes`` and this module need each other: the closures call ``deref``/``lookup``/
``select``, and these build and recognise nodes. Each imports the other's names at
its end, so either may be imported first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcpool.classad.context import _Limits
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

if TYPE_CHECKING:
    from htcpool.classad.classad import ClassAd
    from htcpool.classad.context import EvalContext

Fn = Callable[["EvalState"], Any]

MAX_ATTRIBUTE_DEPTH = 400


class EvalFailure(Exception):
    """Evaluation could not complete (reference chains too deep, no root for ``.attr``)."""


class NoClock(EvalFailure):
    """The expression reads the current time and the context has no clock."""


class EvalState:
    """The mutable state of one evaluation."""

    __slots__ = ("cur", "root", "depth", "ctx", "left", "right", "busy", "busy_pairs", "budget", "granted")

    def __init__(self, cur: ClassAd | None, ctx: EvalContext) -> None:
        self.cur = cur
        self.root = root_of(cur)
        self.depth = MAX_ATTRIBUTE_DEPTH
        self.ctx = ctx
        budget = ctx.budget
        if budget is None:
            budget = _Limits.budget
        pool = ctx.pool
        if pool is not None and pool.remaining < budget:
            budget = max(pool.remaining, 0)
        # expressions this evaluation may still start (see the module docstring)
        self.budget = self.granted = budget
        # attributes being evaluated: lower-cased name -> its ad (the common case), and
        # (id(ad), name) pairs for a name under way in two ads at once
        self.busy: dict[str, Any] = {}
        self.busy_pairs: set[tuple[int, str]] | None = None
        # The two ads of a match, when evaluating inside one (see match.py); they let
        # TARGET.x skip the walk through the match's context ads.
        self.left: ClassAd | None = None
        self.right: ClassAd | None = None


def settle(s: EvalState) -> None:
    """Charge what evaluation ``s`` spent to its context's ``WorkPool``, if it has one."""
    pool = s.ctx.pool
    if pool is not None:
        pool.remaining -= s.granted - s.budget
        s.granted = s.budget


def root_of(ad: ClassAd | None) -> ClassAd | None:
    if ad is None:
        return None
    cur = ad
    parent = cur._parent
    while parent is not None:
        if parent is ad:
            return None
        cur = parent
        parent = cur._parent
    return cur



_SPECIAL_ALWAYS = {"toplevel": "root", "root": "root", "self": "self", "parent": "parent"}
_SPECIAL_OLD = {**_SPECIAL_ALWAYS, "my": "self", "currenttime": "time"}


def eval_in(s: EvalState, node: Node, ad: ClassAd | None, cost: int = 0) -> Any:
    """Evaluate ``node`` as a whole expression with ``ad`` as the current ad.

    ``cost`` is the depth the way in costs (0 for a top-level evaluation). No cycle check:
    ``deref`` is the way to follow an attribute.
    """
    depth = s.depth - cost
    if depth < 0:
        raise EvalFailure("attribute references nested too deeply")
    if type(node) is Literal:
        return node.value
    budget = s.budget
    if budget <= 0:
        return ERROR
    s.budget = budget - 1
    fn = node._rfn or node.root_fn()
    if node._h > depth:
        raise EvalFailure("expression nested too deeply")
    saved, saved_depth = s.cur, s.depth
    s.cur = ad
    s.depth = depth
    v = fn(s)
    s.depth = saved_depth
    s.cur = saved
    return v


def deref(s: EvalState, node: Node, ad: ClassAd, key: str, cost: int) -> Any:
    """Evaluate attribute ``key`` of ``ad`` (its expression ``node``), as a reference does.

    Costs ``cost`` levels of depth; an attribute already under way is UNDEFINED here.
    """
    depth = s.depth - cost
    if depth < 0:
        raise EvalFailure("attribute references nested too deeply")
    if type(node) is Literal:
        return node.value
    budget = s.budget
    if budget <= 0:
        return ERROR
    s.budget = budget - 1
    fn = node._rfn or node.root_fn()
    if node._h > depth:
        raise EvalFailure("expression nested too deeply")
    busy = s.busy
    owner = busy.get(key)
    if owner is not None:
        if owner is ad:
            return UNDEFINED
        return _deref_again(s, fn, ad, key, depth)
    busy[key] = ad
    saved, saved_depth = s.cur, s.depth
    s.cur = ad
    s.depth = depth
    v = fn(s)
    s.depth = saved_depth
    s.cur = saved
    del busy[key]
    return v


def _deref_again(s: EvalState, fn: Fn, ad: ClassAd, key: str, depth: int) -> Any:
    """``deref`` of a name already under way in another ad: track the (ad, name) pair."""
    pairs = s.busy_pairs
    if pairs is None:
        pairs = s.busy_pairs = set()
    mark = (id(ad), key)
    if mark in pairs:
        return UNDEFINED
    pairs.add(mark)
    saved, saved_depth = s.cur, s.depth
    s.cur = ad
    s.depth = depth
    v = fn(s)
    s.depth = saved_depth
    s.cur = saved
    pairs.discard(mark)
    return v


def lookup(s: EvalState, start: ClassAd, key: str, use_alternate: bool, cost: int = 1) -> Any:
    """Find ``key`` from ``start`` outwards and evaluate it (HTCondor's ``LookupInScope``)."""
    strict = s.ctx.strict
    specials = _SPECIAL_ALWAYS if strict else _SPECIAL_OLD
    root = s.root
    ad: ClassAd | None = start
    while ad is not None:
        node = ad._exprs.get(key)
        if node is not None:
            return deref(s, node, ad, key, cost)
        sup = None if ad is root else ad._parent
        special = specials.get(key)
        if special is None:
            ad = sup
            if ad is start:
                return UNDEFINED
            continue
        if special == "root":
            if root is None:
                raise EvalFailure("no root ad")
            return root
        if special == "self":
            return ad
        if special == "parent":
            return sup if sup is not None else UNDEFINED
        return s.ctx.time_int("CurrentTime")
    if use_alternate and not strict:
        alt = start._alternate
        if alt is not None:
            return lookup(s, alt, key, False, cost)
    return UNDEFINED


def select(s: EvalState, base: Any, key: str, cost: int = 1) -> Any:
    """The value of ``base.key`` once ``base`` is evaluated."""
    from htcpool.classad.classad import ClassAd

    if type(base) is ClassAd:
        node = base._exprs.get(key)
        if node is not None:
            return deref(s, node, base, key, cost)
        return lookup(s, base, key, False, cost)
    if base is UNDEFINED:
        return UNDEFINED
    if type(base) is ListValue:
        items = tuple(value_node(select(s, list_item(s, base, i), key, cost)) for i in range(len(base.items)))
        return ListValue(items, None)
    return ERROR


def subscript_value(s: EvalState, base: Any, index: Any) -> Any:
    from htcpool.classad.classad import ClassAd

    if base is ERROR or index is ERROR:
        return ERROR
    if base is UNDEFINED or index is UNDEFINED:
        return UNDEFINED
    tb, ti = type(base), type(index)
    if tb is ClassAd and ti is str:
        key = index.lower()
        node = base._exprs.get(key)
        if node is None:
            return UNDEFINED
        sub = EvalState(base, s.ctx)
        sub.depth = s.depth
        sub.budget = s.budget
        v = deref(sub, node, base, key, 0)
        s.budget = sub.budget
        return v
    if tb is ListValue and ti is int:
        if index < 0 or index >= len(base.items):
            if -(2**31) <= index < 2**31:
                return ERROR
            index = (index + 2**31) % 2**32 - 2**31  # HTCondor reads the index as a 32-bit int
            if index < 0 or index >= len(base.items):
                return ERROR
        return list_item(s, base, index)
    return ERROR


def list_item(s: EvalState, lst: ListValue, index: int) -> Any:
    """Evaluate element ``index`` of a list value in the scope the list was written in."""
    node = lst.items[index]
    if type(node) is Literal:
        return node.value
    scope = lst.scope
    if scope is None:
        fn = node._rfn or node.root_fn()
        if node._h > s.depth:
            raise EvalFailure("expression nested too deeply")
        return fn(s)
    return eval_in(s, node, scope)


def list_values(s: EvalState, lst: ListValue) -> list[Any]:
    return [list_item(s, lst, i) for i in range(len(lst.items))]


def value_node(v: Any) -> Node:
    """A node that evaluates to ``v`` (a literal, or a list/ad expression)."""
    from htcpool.classad.classad import ClassAd

    t = type(v)
    if t is ListValue:
        return ListExpr(v.items)
    if t is ClassAd:
        return AdExpr(dict(v._exprs), dict(v._names))
    return Literal(v)



def levels(root: Node) -> int:
    """Record each attribute reference's level in ``root``'s expression; return its height.

    A node's level is the number of operators around it (a selection's base counts one
    more). List elements and the attributes of nested ads are expressions of their own.
    The height is the most levels any operator or selection of the tree needs.
    """
    height = 0
    operators = _OPERATORS
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        n, level = stack.pop()
        t = type(n)
        if t in operators:
            level += 1
            if level > height:
                height = level
            stack.extend((c, level) for c in n.children())
        elif t is AttrRef:
            assert isinstance(n, AttrRef)
            if n._fn is None:
                n.level = level
            if n.base is not None:
                level += 1
                if level > height:
                    height = level
                stack.append((n.base, level))
        elif t is FnCall:
            stack.extend((c, level) for c in n.children())
    return height


def reference_fn(ref: AttrRef) -> Fn:
    """The closure for an attribute reference: ``name``, ``.name`` or ``base.name``.

    ``ref.level`` (set by ``levels``) is the number of operators around the
    reference; following it costs one level more.
    """
    key = ref.key
    cost = ref.level + 1
    if ref.base is not None:
        base = ref.base.compiled()
        b = ref.base
        if type(b) is AttrRef and b.base is None and not b.absolute and b.key in ("target", "my"):
            return _scoped_fast(b.key, base, key, cost)

        def scoped(s: EvalState) -> Any:
            return select(s, base(s), key, cost)

        return scoped
    if ref.absolute:

        def absolute(s: EvalState) -> Any:
            root = s.root
            if root is None:
                raise EvalFailure("no root ad for an absolute reference")
            return lookup(s, root, key, False, cost)

        return absolute

    def unscoped(s: EvalState) -> Any:
        cur = s.cur
        if cur is None:
            return UNDEFINED
        node = cur._exprs.get(key)
        if node is not None:
            if type(node) is Literal and s.depth >= cost:
                return node.value
            return deref(s, node, cur, key, cost)
        return lookup(s, cur, key, True, cost)

    return unscoped


def _scoped_fast(scope: str, base: Fn, key: str, cost: int) -> Fn:
    """``TARGET.key`` / ``MY.key`` without walking the match's context ads.

    Inside a match the current ad is one of the pair, its parent is its context ad, and
    the context's ``target`` leads to the other ad of the pair; ``MY`` is the current ad
    itself. The shortcut applies only while the current ad is one of the pair and does not
    define the scope name itself; everything else takes the general path.
    """

    if scope == "target":

        def fast_target(s: EvalState) -> Any:
            cur = s.cur
            left = s.left
            if left is not None and "target" not in cur._exprs:  # type: ignore[union-attr]
                if cur is left:
                    ad = s.right
                elif cur is s.right:
                    ad = left
                else:
                    return select(s, base(s), key, cost)
                node = ad._exprs.get(key)  # type: ignore[union-attr]
                if node is not None:
                    if type(node) is Literal and s.depth >= cost:
                        return node.value
                    return deref(s, node, ad, key, cost)  # type: ignore[arg-type]
                return lookup(s, ad, key, False, cost)  # type: ignore[arg-type]
            return select(s, base(s), key, cost)

        return fast_target

    def fast(s: EvalState) -> Any:
        cur = s.cur
        left = s.left
        if left is not None and scope not in cur._exprs:  # type: ignore[union-attr]
            if not s.ctx.strict:
                ad = cur
            elif cur is left or cur is s.right:
                ad = cur
            else:
                return select(s, base(s), key, cost)
            node = ad._exprs.get(key)  # type: ignore[union-attr]
            if node is not None:
                return deref(s, node, ad, key, cost)  # type: ignore[arg-type]
            return lookup(s, ad, key, False, cost)  # type: ignore[arg-type]
        return select(s, base(s), key, cost)

    return fast


# At the end, as nodes imports this module's names at its end (see the module docstring).
from htcpool.classad.nodes import (  # noqa: E402
    AdExpr,
    AttrRef,
    BinaryOp,
    FnCall,
    ListExpr,
    Literal,
    Node,
    Paren,
    Subscript,
    Ternary,
    UnaryOp,
)

_OPERATORS = (UnaryOp, BinaryOp, Ternary, Paren, Subscript)
