"""``ExprTree``: a parsed expression, shaped like HTCondor's ``classad2.ExprTree``."""

from __future__ import annotations

from typing import Any

from htcpool.classad.classad import ClassAd, to_python
from htcpool.classad.context import DEFAULT_CONTEXT, EvalContext
from htcpool.classad.errors import ClassAdEvaluationError
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.parser import parse_expression
from htcpool.classad.scope import EvalFailure, EvalState, eval_in, settle, value_node
from htcpool.classad.values import UNDEFINED


class ExprTree:
    """An expression in the ClassAd language.

    ``ExprTree(text)`` parses; ``ExprTree(None)`` is ``undefined``. ``eval`` returns
    Python values the way classad2 does; ``evaluate`` returns the engine's own
    values (``AbsTime``, ``RelTime``, ``ListValue`` …) for code that works with them.
    """

    __slots__ = ("_node",)

    def __init__(self, expr: str | ExprTree | None = None) -> None:
        if expr is None:
            self._node: Node = Literal(UNDEFINED)
        elif isinstance(expr, ExprTree):
            self._node = expr._node
        elif isinstance(expr, str):
            self._node = parse_expression(expr)
        else:
            raise TypeError("ExprTree() takes a string, an ExprTree or None")

    @classmethod
    def _wrap(cls, node: Node) -> ExprTree:
        e = cls.__new__(cls)
        e._node = node
        return e

    @property
    def node(self) -> Node:
        return self._node

    def evaluate(
        self,
        scope: ClassAd | None = None,
        target: ClassAd | None = None,
        context: EvalContext | None = None,
    ) -> Any:
        """Evaluate with ``scope`` as MY and ``target`` as TARGET; return the engine value."""
        if scope is not None and not isinstance(scope, ClassAd):
            raise TypeError("scope must be a ClassAd")
        if target is not None and not isinstance(target, ClassAd):
            raise TypeError("target must be a ClassAd")
        ctx = context or DEFAULT_CONTEXT
        if scope is not None:
            return scope._evaluate_node(self._node, target, ctx)
        s = EvalState(None, ctx)
        try:
            return eval_in(s, self._node, None)
        except EvalFailure as e:
            raise ClassAdEvaluationError(f"failed to evaluate expression: {e}") from None
        finally:
            if ctx.pool is not None:
                settle(s)

    def eval(
        self,
        scope: ClassAd | None = None,
        target: ClassAd | None = None,
        context: EvalContext | None = None,
    ) -> Any:
        """Evaluate and return a Python value (bool, int, float, str, datetime, list, ClassAd, Value)."""
        return to_python(self.evaluate(scope, target, context))

    def simplify(
        self,
        scope: ClassAd | None = None,
        target: ClassAd | None = None,
        context: EvalContext | None = None,
    ) -> ExprTree:
        """Evaluate and return the value as an expression."""
        return ExprTree._wrap(value_node(self.evaluate(scope, target, context)))

    def __eq__(self, other: object) -> bool:
        if type(other) is not ExprTree:
            return False
        return self._node.same_as(other._node)

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        from htcpool.classad.unparse import unparse

        return unparse(self._node)

    def __str__(self) -> str:
        from htcpool.classad.unparse import pretty

        return pretty(self._node)
