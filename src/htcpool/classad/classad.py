"""The ClassAd: a case-insensitive mapping from attribute names to expressions.

``ClassAd`` mirrors HTCondor's ``classad2.ClassAd``: a mutable mapping whose
items are Python values when the expression is a literal, list or nested ad,
and ``ExprTree`` objects otherwise. It is also an expression node (an ad is a
value in the language), which lets match contexts hold ads directly.

Internally an ad keeps ``_exprs`` (lower-cased name → node), ``_names``
(lower-cased name → the spelling first used), ``_parent`` (the enclosing ad,
for nested ads and match contexts) and ``_alternate`` (the other ad of a
match, for HTCondor's old-ClassAd fallback).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from htcpool.classad.context import DEFAULT_CONTEXT, EvalContext
from htcpool.classad.errors import ClassAdEvaluationError, ClassAdParseError
from htcpool.classad.nodes import AdExpr, ListExpr, Literal, Node
from htcpool.classad.scope import EvalFailure, EvalState, Fn, eval_in, settle
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime, Value, wrap_int

if TYPE_CHECKING:
    from htcpool.classad.expr import ExprTree


#: ``ClassAd.pop`` called without a default
_ABSENT: Any = object()


class ClassAd(Node, MutableMapping[str, Any]):
    __slots__ = ("_exprs", "_names", "_parent", "_alternate", "_shared", "__weakref__")

    def __init__(self, source: str | Mapping[str, Any] | None = None) -> None:
        self._fn = self._rfn = None
        self._exprs: dict[str, Node] = {}
        self._names: dict[str, str] = {}
        self._parent: ClassAd | None = None
        self._alternate: ClassAd | None = None
        self._shared = False
        if source is None:
            return
        if isinstance(source, str):
            from htcpool.classad.forms import parse_one_ad

            parsed = parse_one_ad(source)
            self._exprs = parsed._exprs
            self._names = parsed._names
            return
        for k, v in source.items():
            self[k] = v

    # -- construction helpers
    @classmethod
    def _view(cls, node: AdExpr, parent: ClassAd | None) -> ClassAd:
        """A nested ad value: shares the node's tables (never mutated) and knows its parent."""
        ad = cls.__new__(cls)
        ad._fn = ad._rfn = None
        ad._exprs = node.exprs
        ad._names = node.names
        ad._parent = parent
        ad._alternate = None
        ad._shared = True
        return ad

    @classmethod
    def _from_tables(cls, exprs: dict[str, Node], names: dict[str, str]) -> ClassAd:
        ad = cls.__new__(cls)
        ad._fn = ad._rfn = None
        ad._exprs = exprs
        ad._names = names
        ad._parent = None
        ad._alternate = None
        ad._shared = False
        return ad

    # -- Node protocol: an ad evaluates to itself
    def _compile(self) -> Fn:
        return lambda s: self

    def children(self) -> tuple[Node, ...]:
        return tuple(self._exprs.values())

    def same_as(self, other: object) -> bool:
        if not isinstance(other, ClassAd) or self._exprs.keys() != other._exprs.keys():
            return False
        return all(self._exprs[k].same_as(other._exprs[k]) for k in self._exprs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassAd):
            return NotImplemented
        return self.same_as(other)

    __hash__ = None  # type: ignore[assignment]

    # -- mapping protocol
    def __len__(self) -> int:
        return len(self._exprs)

    def __iter__(self) -> Iterator[str]:
        from htcpool.classad.unparse import ad_order

        return iter([self._names[k] for k in ad_order(self._names)])

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._exprs

    def __getitem__(self, key: str) -> Any:
        node = self._exprs.get(key.lower())
        if node is None:
            raise KeyError(key)
        return self._value_of(node)

    def get(self, key: str, default: Any = None) -> Any:
        """``Mapping.get`` without its exception: most asks on a hot path are for absent names."""
        node = self._exprs.get(key.lower())
        if node is None:
            return default
        return self._value_of(node)

    def _value_of(self, node: Node) -> Any:
        """What ``ad[name]`` gives for the attribute whose node is ``node``."""
        if type(node) is Literal:  # what evaluating it gives, without an evaluation's state
            return to_python(node.value)
        if isinstance(node, (ListExpr, AdExpr, ClassAd)):
            return to_python(self._evaluate_node(node, None))
        from htcpool.classad.expr import ExprTree

        return ExprTree._wrap(node)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("attribute names must be strings")
        self._own()
        low = key.lower()
        if low not in self._names:
            self._names[low] = key
        self._exprs[low] = to_node(value)

    def __delitem__(self, key: str) -> None:
        low = key.lower()
        if low not in self._exprs:
            raise KeyError(key)
        self._own()
        del self._exprs[low]
        del self._names[low]

    def pop(self, key: str, default: Any = _ABSENT) -> Any:
        """``MutableMapping.pop`` without its exception for an absent name (the startd drops
        attributes that are mostly not there on every publication)."""
        low = key.lower()
        node = self._exprs.get(low)
        if node is None:
            if default is _ABSENT:
                raise KeyError(key)
            return default
        value = self._value_of(node)
        self._own()
        del self._exprs[low]
        del self._names[low]
        return value

    def _own(self) -> None:
        """Copy shared tables before the first change (views share their node's tables)."""
        if self._shared:
            self._exprs = dict(self._exprs)
            self._names = dict(self._names)
            self._shared = False

    def insert_node(self, name: str, node: Node) -> None:
        """Set an attribute to an already-parsed expression (no conversion)."""
        self._own()
        low = name.lower()
        if low not in self._names:
            self._names[low] = name
        self._exprs[low] = node

    def copy(self) -> ClassAd:
        return ClassAd._from_tables(dict(self._exprs), dict(self._names))

    # -- classad2 API
    def lookup(self, attr: str) -> ExprTree:
        from htcpool.classad.expr import ExprTree

        node = self._exprs.get(attr.lower())
        if node is None:
            raise KeyError(attr)
        return ExprTree._wrap(node)

    def eval(self, attr: str, context: EvalContext | None = None) -> Any:
        """Evaluate attribute ``attr`` in this ad (KeyError if it is not defined)."""
        return to_python(self.evaluate(attr, context))

    def evaluate(self, attr: str, context: EvalContext | None = None, target: ClassAd | None = None) -> Any:
        """Evaluate ``attr`` and return the engine's value (UNDEFINED when not defined)."""
        node = self._exprs.get(attr.lower())
        if node is None:
            return UNDEFINED
        return self._evaluate_node(node, target, context)

    def _evaluate_node(self, node: Node, target: ClassAd | None, context: EvalContext | None = None) -> Any:
        """Evaluate ``node`` with this ad as MY (and ``target`` as TARGET, through a match)."""
        ctx = context or DEFAULT_CONTEXT
        if target is not None and target is not self:
            from htcpool.classad.match import evaluate_in_match

            return evaluate_in_match(node, self, target, ctx)
        s = EvalState(self, ctx)
        try:
            return eval_in(s, node, self)
        except EvalFailure as e:
            raise ClassAdEvaluationError(f"failed to evaluate expression: {e}") from None
        finally:
            if ctx.pool is not None:
                settle(s)

    def printOld(self) -> str:  # noqa: N802 - classad2's name
        from htcpool.classad.unparse import print_old

        return print_old(self)

    def printJson(self) -> str:  # noqa: N802 - classad2's name
        from htcpool.classad.json_form import print_json

        return print_json(self)

    def matches(self, ad: ClassAd, context: EvalContext | None = None) -> bool:
        """Whether ``ad``'s Requirements hold with ``ad`` as MY and this ad as TARGET."""
        from htcpool.classad.match import requirements_hold

        return requirements_hold(ad, self, context or DEFAULT_CONTEXT)

    def symmetricMatch(self, ad: ClassAd, context: EvalContext | None = None) -> bool:  # noqa: N802
        return self.matches(ad, context) and ad.matches(self, context)

    def externalRefs(self, expr: ExprTree) -> list[str]:  # noqa: N802
        from htcpool.classad.refs import external_refs

        return external_refs(self, expr._node)

    def internalRefs(self, expr: ExprTree) -> list[str]:  # noqa: N802
        from htcpool.classad.refs import internal_refs

        return internal_refs(self, expr._node)

    def flatten(self, expr: ExprTree, context: EvalContext | None = None) -> Any:
        """Partially evaluate ``expr`` here: a Python value when it reduces fully, else an ExprTree."""
        from htcpool.classad.expr import ExprTree
        from htcpool.classad.flatten import flatten

        node = flatten(self, expr._node, context or DEFAULT_CONTEXT)
        if isinstance(node, Literal):
            return to_python(node.value)
        return ExprTree._wrap(node)

    def __repr__(self) -> str:
        from htcpool.classad.unparse import unparse

        return unparse(self)

    def __str__(self) -> str:
        from htcpool.classad.unparse import pretty

        return pretty(self)


# ---------------------------------------------------------------- conversions


def to_node(value: Any) -> Node:
    """An expression node for a Python value (classad2's conversion rules)."""
    t = type(value)
    if t is str or t is float or t is bool:  # the common plain values first, before any import
        return Literal(value)
    if t is int:
        return Literal(wrap_int(value))
    from htcpool.classad.expr import ExprTree

    if isinstance(value, ExprTree):
        return value._node
    if isinstance(value, ClassAd):
        return AdExpr(dict(value._exprs), dict(value._names))
    if value is None or value is UNDEFINED:
        return Literal(UNDEFINED)
    if value is ERROR:
        return Literal(ERROR)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            secs = int(value.timestamp())
        else:
            secs = int(value.astimezone(UTC).timestamp())
        return Literal(AbsTime(secs, 0))
    if t in (bool, int, float, str, AbsTime, RelTime):
        return Literal(value)
    if isinstance(value, bytes):
        return Literal(value.decode("utf-8", "surrogateescape"))
    if isinstance(value, Mapping):
        ad = ClassAd(value)
        return AdExpr(ad._exprs, ad._names)
    if isinstance(value, ListValue):
        return ListExpr(value.items)
    try:
        items = iter(value)
    except TypeError:
        raise TypeError(f"cannot convert {type(value).__name__} to a ClassAd expression") from None
    return ListExpr(tuple(to_node(v) for v in items))


def to_python(v: Any) -> Any:
    """An engine value as classad2 hands it to Python."""
    t = type(v)
    if t in (bool, int, float, str) or isinstance(v, Value):
        return v
    if t is AbsTime:
        return datetime.fromtimestamp(v.secs, tz=UTC)
    if t is RelTime:
        return float(v.secs)
    if t is ListValue:
        from htcpool.classad.expr import ExprTree

        out: list[Any] = []
        for item in v.items:
            if isinstance(item, (Literal, ListExpr, AdExpr, ClassAd)):
                s = EvalState(v.scope, DEFAULT_CONTEXT)
                out.append(to_python(item.root_fn()(s)))
            else:
                out.append(ExprTree._wrap(item))
        return out
    if t is ClassAd:
        return v.copy()
    raise TypeError(f"unknown ClassAd value {v!r}")


def parse_error_text(e: ClassAdParseError) -> str:
    return f"{e}\n{e.excerpt()}"
