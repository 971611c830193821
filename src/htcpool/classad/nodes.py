"""Expression trees and how each kind of node evaluates.

A parsed expression is a tree of small immutable nodes, one class per form.
Trees are shared freely (the parser caches them), so a node never points at
the ad it belongs to; the ad comes from the evaluation state instead.

Evaluation compiles each tree once into nested Python closures: ``compiled()``
returns a function ``fn(state) -> value`` and caches it on the node. The state
(``EvalState``) carries the current ad, the root ad, the remaining attribute
depth and the context (clock, strictness, map files). Lookup rules follow
HTCondor's library:

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
  reference. Going past ``MAX_ATTRIBUTE_DEPTH`` is an evaluation failure
  (``EvalFailure``), which the public API reports as an exception. The levels
  are static within an expression, so they are counted once (``root_fn``) and
  the closures only pay at attribute references.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcpool.classad import operators as ops
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

if TYPE_CHECKING:
    from htcpool.classad.classad import ClassAd
    from htcpool.classad.context import EvalContext

Fn = Callable[["EvalState"], Any]

MAX_ATTRIBUTE_DEPTH = 400

# Trees up to HTCondor's limits nest a few thousand Python calls deep when compiled,
# printed or evaluated; Python 3.11+ runs such pure-Python recursion without the C stack.
if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)


class EvalFailure(Exception):
    """Evaluation could not complete (reference chains too deep, no root for ``.attr``)."""


class EvalState:
    """The mutable state of one evaluation."""

    __slots__ = ("cur", "root", "depth", "ctx", "left", "right", "busy", "busy_pairs")

    def __init__(self, cur: ClassAd | None, ctx: EvalContext) -> None:
        self.cur = cur
        self.root = root_of(cur)
        self.depth = MAX_ATTRIBUTE_DEPTH
        self.ctx = ctx
        # attributes being evaluated: lower-cased name -> its ad (the common case), and
        # (id(ad), name) pairs for a name under way in two ads at once
        self.busy: dict[str, Any] = {}
        self.busy_pairs: set[tuple[int, str]] | None = None
        # The two ads of a match, when evaluating inside one (see match.py); they let
        # TARGET.x skip the walk through the match's context ads.
        self.left: ClassAd | None = None
        self.right: ClassAd | None = None


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


class Node:
    """Base of all expression nodes."""

    __slots__ = ("_fn", "_rfn", "_h")

    def __init__(self) -> None:
        self._fn: Fn | None = None
        self._rfn: Fn | None = None

    def compiled(self) -> Fn:
        fn = self._fn
        if fn is None:
            fn = self._fn = self._compile()
        return fn

    def root_fn(self) -> Fn:
        """The closure for evaluating this node as a whole expression.

        Counts the nesting levels of the tree first (``_levels``), so its attribute
        references know what following them costs, and records the tree's height
        (``_h``), the depth an evaluation needs to start it.
        """
        fn = self._rfn
        if fn is None:
            self._h = _levels(self)
            # a tree too high for any evaluation is never compiled (that would recurse as deep)
            fn = self._rfn = self.compiled() if self._h <= MAX_ATTRIBUTE_DEPTH else _too_deep
        return fn

    def _compile(self) -> Fn:
        raise NotImplementedError

    def children(self) -> tuple[Node, ...]:
        return ()

    def same_as(self, other: object) -> bool:
        """Structural equality, as HTCondor's ``SameAs``."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return self.same_as(other)

    def __hash__(self) -> int:
        from htcpool.classad.unparse import unparse

        return hash(unparse(self))

    def __repr__(self) -> str:
        from htcpool.classad.unparse import unparse

        return f"<{type(self).__name__} {unparse(self)}>"


def _too_deep(s: EvalState) -> Any:
    raise EvalFailure("expression nested too deeply")


class Literal(Node):
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self._fn = self._rfn = None
        self.value = value

    def _compile(self) -> Fn:
        v = self.value
        return lambda s: v

    def same_as(self, other: object) -> bool:
        if type(other) is not Literal:
            return False
        a, b = self.value, other.value
        return type(a) is type(b) and (a is b or a == b)


class AttrRef(Node):
    """``name``, ``.name`` (absolute) or ``base.name``."""

    __slots__ = ("name", "base", "absolute", "key", "level")

    def __init__(self, name: str, base: Node | None = None, absolute: bool = False) -> None:
        self._fn = self._rfn = None
        self.name = name
        self.base = base
        self.absolute = absolute
        self.key = name.lower()
        self.level = 0  # operators around it in its expression (see ``_levels``)

    def children(self) -> tuple[Node, ...]:
        return (self.base,) if self.base is not None else ()

    def same_as(self, other: object) -> bool:
        return (
            type(other) is AttrRef
            and self.name == other.name
            and self.absolute == other.absolute
            and _same(self.base, other.base)
        )

    def _compile(self) -> Fn:
        key = self.key
        cost = self.level + 1
        if self.base is not None:
            base = self.base.compiled()
            b = self.base
            if type(b) is AttrRef and b.base is None and not b.absolute and b.key in ("target", "my"):
                return _scoped_fast(b.key, base, key, cost)

            def scoped(s: EvalState) -> Any:
                return select(s, base(s), key, cost)

            return scoped
        if self.absolute:

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


class UnaryOp(Node):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Node) -> None:
        self._fn = self._rfn = None
        self.op = op
        self.operand = operand

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def same_as(self, other: object) -> bool:
        return type(other) is UnaryOp and self.op == other.op and self.operand.same_as(other.operand)

    def _compile(self) -> Fn:
        f = ops.UNARY_OPS[self.op]
        a = self.operand.compiled()
        return lambda s: f(a(s))


class BinaryOp(Node):
    """A binary operator; ``op`` is canonical (``=?=`` for ``is``, ``=!=`` for ``isnt``)."""

    __slots__ = ("op", "left", "right")

    def __init__(self, op: str, left: Node, right: Node) -> None:
        self._fn = self._rfn = None
        self.op = op
        self.left = left
        self.right = right

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def same_as(self, other: object) -> bool:
        return (
            type(other) is BinaryOp
            and self.op == other.op
            and self.left.same_as(other.left)
            and self.right.same_as(other.right)
        )

    def _compile(self) -> Fn:
        op = self.op
        a = self.left.compiled()
        b = self.right.compiled()
        if op == "&&":
            and_rest = ops.and_rest

            def land(s: EvalState) -> Any:
                x = a(s)
                if x is True:
                    y = b(s)
                    return y if type(y) is bool else and_rest(x, y)
                if x is False:
                    return False
                tx = type(x)
                if (tx is int or tx is float) and x == 0:
                    return False
                return and_rest(x, b(s))

            return land
        if op == "||":
            or_rest = ops.or_rest

            def lor(s: EvalState) -> Any:
                x = a(s)
                if x is False:
                    y = b(s)
                    return y if type(y) is bool else or_rest(x, y)
                if x is True:
                    return True
                tx = type(x)
                if (tx is int or tx is float) and x != 0:
                    return True
                return or_rest(x, b(s))

            return lor
        if op == "==" or op == "!=" or op == "<" or op == "<=" or op == ">" or op == ">=":
            cmp = ops._CMP[op]
            compare = ops.compare

            if op == "==" or op == "!=":
                equal = op == "=="

                def equality(s: EvalState) -> Any:
                    x = a(s)
                    y = b(s)
                    tx = type(x)
                    if tx is type(y) and (tx is int or tx is str) and x == y:
                        return equal  # identical ints or strings: no case folding needed
                    if tx is int and type(y) is int:
                        return not equal
                    return compare(op, x, y)

                return equality

            def comparison(s: EvalState) -> Any:
                x = a(s)
                y = b(s)
                if type(x) is int and type(y) is int:
                    return cmp(x, y)
                return compare(op, x, y)

            return comparison
        f = ops.BINARY_OPS[op]
        if type(self.left) is Literal and type(self.right) is Literal:
            folded = f(self.left.value, self.right.value)
            return lambda s: folded
        return lambda s: f(a(s), b(s))


class Paren(Node):
    __slots__ = ("expr",)

    def __init__(self, expr: Node) -> None:
        self._fn = self._rfn = None
        self.expr = expr

    def children(self) -> tuple[Node, ...]:
        return (self.expr,)

    def same_as(self, other: object) -> bool:
        return type(other) is Paren and self.expr.same_as(other.expr)

    def _compile(self) -> Fn:
        return self.expr.compiled()


class Ternary(Node):
    """``cond ? then : else``, or ``cond ?: else`` when ``then`` is None."""

    __slots__ = ("cond", "then", "orelse")

    def __init__(self, cond: Node, then: Node | None, orelse: Node) -> None:
        self._fn = self._rfn = None
        self.cond = cond
        self.then = then
        self.orelse = orelse

    def children(self) -> tuple[Node, ...]:
        if self.then is None:
            return (self.cond, self.orelse)
        return (self.cond, self.then, self.orelse)

    def same_as(self, other: object) -> bool:
        return (
            type(other) is Ternary
            and self.cond.same_as(other.cond)
            and _same(self.then, other.then)
            and self.orelse.same_as(other.orelse)
        )

    def _compile(self) -> Fn:
        c = self.cond.compiled()
        e = self.orelse.compiled()
        if self.then is None:

            def elvis(s: EvalState) -> Any:
                v = c(s)
                return e(s) if v is UNDEFINED else v

            return elvis
        t = self.then.compiled()
        bool_equiv = ops.bool_equiv

        def ternary(s: EvalState) -> Any:
            v = c(s)
            b = bool_equiv(v)
            if b is True:
                return t(s)
            if b is False:
                return e(s)
            if v is UNDEFINED:
                return UNDEFINED
            return ERROR

        return ternary


class Subscript(Node):
    """``base[index]``: a list element by position or an ad's attribute by name."""

    __slots__ = ("base", "index")

    def __init__(self, base: Node, index: Node) -> None:
        self._fn = self._rfn = None
        self.base = base
        self.index = index

    def children(self) -> tuple[Node, ...]:
        return (self.base, self.index)

    def same_as(self, other: object) -> bool:
        return type(other) is Subscript and self.base.same_as(other.base) and self.index.same_as(other.index)

    def _compile(self) -> Fn:
        b = self.base.compiled()
        i = self.index.compiled()

        def subscript(s: EvalState) -> Any:
            return subscript_value(s, b(s), i(s))

        return subscript


class FnCall(Node):
    __slots__ = ("name", "args")

    def __init__(self, name: str, args: tuple[Node, ...]) -> None:
        self._fn = self._rfn = None
        self.name = name
        self.args = args

    def children(self) -> tuple[Node, ...]:
        return self.args

    def same_as(self, other: object) -> bool:
        return (
            type(other) is FnCall
            and self.name.lower() == other.name.lower()
            and len(self.args) == len(other.args)
            and all(x.same_as(y) for x, y in zip(self.args, other.args, strict=True))
        )

    def _compile(self) -> Fn:
        from htcpool.classad.builtins import compile_call

        return compile_call(self.name, self.args)


class ListExpr(Node):
    __slots__ = ("items",)

    def __init__(self, items: tuple[Node, ...]) -> None:
        self._fn = self._rfn = None
        self.items = items

    def children(self) -> tuple[Node, ...]:
        return self.items

    def same_as(self, other: object) -> bool:
        return (
            type(other) is ListExpr
            and len(self.items) == len(other.items)
            and all(x.same_as(y) for x, y in zip(self.items, other.items, strict=True))
        )

    def _compile(self) -> Fn:
        items = self.items
        return lambda s: ListValue(items, s.cur)


class AdExpr(Node):
    """A nested ad written inside an expression: ``[a = 1; b = a + 1]``.

    ``exprs`` maps lower-cased names to expressions; ``names`` keeps the
    spelling first used for each name.
    """

    __slots__ = ("exprs", "names")

    def __init__(self, exprs: dict[str, Node], names: dict[str, str]) -> None:
        self._fn = self._rfn = None
        self.exprs = exprs
        self.names = names

    def children(self) -> tuple[Node, ...]:
        return tuple(self.exprs.values())

    def same_as(self, other: object) -> bool:
        if type(other) is not AdExpr or self.exprs.keys() != other.exprs.keys():
            return False
        return all(self.exprs[k].same_as(other.exprs[k]) for k in self.exprs)

    def _compile(self) -> Fn:
        from htcpool.classad.classad import ClassAd

        node = self
        return lambda s: ClassAd._view(node, s.cur)


def _same(a: Node | None, b: Node | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.same_as(b)


# ------------------------------------------------------------------ lookup

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
        return s.ctx.time_int()
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
        return deref(sub, node, base, key, 0)
    if tb is ListValue and ti is int:
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


def walk(node: Node) -> list[Node]:
    """All nodes of a tree, parents before children, without recursion."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children()))
    return out


_OPERATORS = (UnaryOp, BinaryOp, Ternary, Paren, Subscript)


def _levels(root: Node) -> int:
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
