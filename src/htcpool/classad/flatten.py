"""Partial evaluation of an expression in the context of one ad (HTCondor's ``Flatten``).

What can be computed from the ad is replaced by its value; what cannot (names
the ad does not define, and names whose own expressions cannot be reduced to a
value) stays as written. Operators with every operand reduced are evaluated;
otherwise they are rebuilt around the reduced operands. Function calls are
evaluated only when every argument reduced to a value. Reading the current time
without a clock in the context is not a failure here: the call stays as written, as a
name the ad does not define does.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.classad import ClassAd
from htcpool.classad.context import EvalContext
from htcpool.classad.nodes import (
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
from htcpool.classad.operators import bool_equiv
from htcpool.classad.scope import EvalFailure, EvalState, NoClock, eval_in, value_node
from htcpool.classad.values import ERROR, UNDEFINED

_NOT_REDUCED = object()


def _value(node: Node) -> Any:
    return node.value if type(node) is Literal else _NOT_REDUCED


def _lookup(ad: ClassAd, key: str) -> tuple[Node | None, ClassAd | None]:
    cur: ClassAd | None = ad
    while cur is not None:
        node = cur._exprs.get(key)
        if node is not None:
            return node, cur
        cur = cur._parent
    return None, None


class _Flattener:
    def __init__(self, ad: ClassAd, ctx: EvalContext) -> None:
        self.ad = ad
        self.ctx = ctx
        self.active: set[int] = set()

    def evaluate(self, node: Node) -> Any:
        """The value of ``node``; ERROR when evaluation fails; not reduced when it needs a clock
        and the context has none (the time is unknown, so the call stays as written)."""
        s = EvalState(self.ad, self.ctx)
        try:
            return eval_in(s, node, self.ad)
        except NoClock:
            return _NOT_REDUCED
        except EvalFailure:
            return ERROR

    def reduced(self, node: Node) -> Node:
        """``node`` replaced by its value, or kept when it cannot be computed here."""
        v = self.evaluate(node)
        return node if v is _NOT_REDUCED else value_node(v)

    def flat(self, n: Node, scope: ClassAd) -> Node:
        t = type(n)
        if t is Literal:
            return n
        if t is AttrRef:
            assert isinstance(n, AttrRef)
            if n.base is not None or n.absolute:
                v = self.evaluate(n)
                return n if v is UNDEFINED or v is _NOT_REDUCED else value_node(v)
            target, where = _lookup(scope, n.key)
            if target is None or isinstance(target, (AdExpr, ClassAd)) or id(target) in self.active:
                return n
            self.active.add(id(target))
            reduced = self.flat(target, where or scope)
            self.active.discard(id(target))
            return reduced if type(reduced) is Literal else n
        if t is Paren:
            assert isinstance(n, Paren)
            inner = self.flat(n.expr, scope)
            return inner if type(inner) is Literal else Paren(inner)
        if t is UnaryOp:
            assert isinstance(n, UnaryOp)
            inner = self.flat(n.operand, scope)
            node: Node = UnaryOp(n.op, inner)
            return self.reduced(node) if type(inner) is Literal else node
        if t is BinaryOp:
            assert isinstance(n, BinaryOp)
            left, right = self.flat(n.left, scope), self.flat(n.right, scope)
            node = BinaryOp(n.op, left, right)
            if type(left) is Literal and type(right) is Literal:
                return self.reduced(node)
            if n.op in ("+", "*") and type(right) is Literal:
                return BinaryOp(n.op, right, left)  # HTCondor puts the reduced operand first
            return node
        if t is Ternary:
            assert isinstance(n, Ternary)
            cond = self.flat(n.cond, scope)
            cv = _value(cond)
            if cv is not _NOT_REDUCED and cv is not UNDEFINED:
                b = bool_equiv(cv)
                if b is None:
                    return Literal(ERROR)
                if n.then is None:
                    return cond
                return self.flat(n.then if b else n.orelse, scope)
            then = self.flat(n.then, scope) if n.then is not None else None
            return Ternary(cond, then, self.flat(n.orelse, scope))
        if t is Subscript:
            assert isinstance(n, Subscript)
            node = Subscript(self.flat(n.base, scope), self.flat(n.index, scope))
            if type(node.base) is Literal and type(node.index) is Literal:
                return self.reduced(node)
            return node
        if t is FnCall:
            assert isinstance(n, FnCall)
            from htcpool.classad.builtins import lookup

            if lookup(n.name) is None:
                return Literal(ERROR)
            args = tuple(self.flat(a, scope) for a in n.args)
            node = FnCall(n.name, args)
            if all(type(a) is Literal for a in args):
                return self.reduced(node)
            return node
        if t is ListExpr:
            assert isinstance(n, ListExpr)
            return ListExpr(tuple(self.flat(i, scope) for i in n.items))
        if t is AdExpr:
            assert isinstance(n, AdExpr)
            return AdExpr({k: self.flat(v, scope) for k, v in n.exprs.items()}, dict(n.names))
        return n


def flatten(ad: ClassAd, node: Node, ctx: EvalContext) -> Node:
    return _Flattener(ad, ctx).flat(node, ad)
