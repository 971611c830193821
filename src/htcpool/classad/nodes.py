"""Expression trees: one small immutable node class per form, compiled to closures.

Trees are shared freely (the parser caches them), so a node never points at the
ad it belongs to; the ad comes from the evaluation state instead (``scope``).

Evaluation compiles each tree once into nested Python closures: ``compiled()``
returns a function ``fn(state) -> value`` and caches it on the node. Attribute
references, selections and subscripts call into ``scope`` for the lookup rules,
cycles and the depth limit.

Nesting is limited as HTCondor limits it (see ``scope``): ``root_fn`` counts a
tree's levels once (``scope.levels``), so the closures only pay at attribute
references.
"""

from __future__ import annotations

import sys
from typing import Any

from htcpool.classad import operators as ops
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

# Trees up to HTCondor's limits nest a few thousand Python calls deep when compiled,
# printed or evaluated; Python 3.11+ runs such pure-Python recursion without the C stack.
if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)


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

        Counts the nesting levels of the tree first (``scope.levels``), so its attribute
        references know what following them costs, and records the tree's height
        (``_h``), the depth an evaluation needs to start it.
        """
        fn = self._rfn
        if fn is None:
            self._h = levels(self)
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
        self.level = 0  # operators around it in its expression (see ``scope.levels``)

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
        return reference_fn(self)


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
                if x is ERROR:  # as in HTCondor, the right side is not evaluated at all
                    return ERROR
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
                if x is ERROR:  # as in HTCondor, the right side is not evaluated at all
                    return ERROR
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
            if v is not ERROR:
                # a condition of the wrong type: HTCondor still evaluates both branches, so
                # one that cannot be evaluated at all (``.a`` with no root ad) fails the whole
                t(s)
                e(s)
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


def walk(node: Node) -> list[Node]:
    """All nodes of a tree, parents before children, without recursion."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children()))
    return out


# What the closures call, from the module that holds the lookup rules; it imports this
# module's classes at its own end (see its docstring), so either may be imported first.
# The other names are re-exported for the modules that import them from here.
from htcpool.classad.scope import (  # noqa: E402
    MAX_ATTRIBUTE_DEPTH,
    EvalFailure,
    levels,
    reference_fn,
    subscript_value,
)
from htcpool.classad.scope import EvalState as EvalState  # noqa: E402
from htcpool.classad.scope import Fn as Fn  # noqa: E402
from htcpool.classad.scope import eval_in as eval_in  # noqa: E402
from htcpool.classad.scope import list_item as list_item  # noqa: E402
from htcpool.classad.scope import list_values as list_values  # noqa: E402
from htcpool.classad.scope import value_node as value_node  # noqa: E402
