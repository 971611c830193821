"""Reading machine ads fast enough for a poll over ten thousand of them (docs/performance.md, "Defrag").

A poll reads a handful of attributes of every startd ad and evaluates three or four
configured expressions on each. Two shortcuts keep that within budget, neither changing a
result:

* ``attribute(ad, name, ctx)``: an attribute written as a plain value (a *literal*, as
  nearly every attribute of a startd ad is) is read straight from the ad; anything else
  is evaluated as usual.
* ``Memo``: an expression that is one attribute, or minus one (the default DEFRAG_RANK), is
  that attribute's number when it is a literal. Otherwise, an expression's value depends only on the attributes it refers to (and the
  poll's clock, the same for every ad of a poll). When every one of them is a literal in
  the ad (or absent), the tuple of their values, each with its type so ``1`` and
  ``true`` differ, is a key under which the value is remembered for the rest of the poll.
  Pools have few distinct combinations of ``Cpus``/``TotalSlotCpus`` or ``TotalCpus``, so
  DEFRAG_WHOLE_MACHINE_EXPR and DEFRAG_REQUIREMENTS are evaluated a few times per poll, not
  once per ad; a memo whose keys nearly all differ (a rank by expected badput) stops keying
  after a few hundred. An expression that selects from a computed value (``job.Owner``,
  ``{…}[0]``) or meets an attribute that is itself an expression is evaluated in full.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, Value
from htcpool.classad.nodes import AttrRef, Literal, Node, UnaryOp
from htcpool.classad.refs import Scope, references

ERROR = Value.Error
_ABSENT = object()
#: what an absent attribute reads as: a literal None (no ClassAd literal is None)
_ABSENT_NODE: Any = Literal(None)
_ABSENT_NODES = (_ABSENT_NODE,) * 64


def _getter(names: tuple[str, ...]) -> Callable[[dict[str, Node]], tuple[Node, ...]]:
    """A function from an ad's table to the nodes of ``names`` (KeyError when one is absent)."""
    if len(names) == 1:
        one = itemgetter(names[0])
        return lambda table: (one(table),)
    return itemgetter(*names)
#: misses after which a memo that keeps missing stops computing keys
_GIVE_UP = 512


def _direct(node: Node) -> tuple[int, str] | None:
    """(sign, name) for an expression that is one plain attribute, or its negation (the default
    DEFRAG_RANK): its value is the attribute's number, read without an evaluation."""
    sign = 1
    if type(node) is UnaryOp and node.op in ("-", "+"):
        sign = -1 if node.op == "-" else 1
        node = node.operand
    if type(node) is AttrRef and node.base is None and not node.absolute:
        return sign, node.key
    return None


def attributes(ad: ClassAd, names: tuple[str, ...], ctx: EvalContext) -> list[Any]:
    """The values of several attributes (lower-case names) of ``ad``, as ``attribute`` reads each."""
    nodes: list[Any] = list(map(ad._exprs.get, names, _ABSENT_NODES[:len(names)]))
    try:
        return [node.value for node in nodes]  # only literals (and the absent stand-in) have a value
    except AttributeError:
        return [attribute(ad, name, ctx) for name in names]


def attribute(ad: ClassAd, name: str, ctx: EvalContext) -> Any:
    """The value of attribute ``name`` (lower case) of ``ad``; None when the ad lacks it."""
    node = ad._exprs.get(name)
    if node is None:
        return None
    if type(node) is Literal:
        return node.value
    try:
        value = ad.evaluate(name, ctx)
    except ClassAdError:
        return ERROR
    return None if value is Value.Undefined else value


class Memo:
    """An expression evaluated against ads, remembered by the values of what it refers to."""

    __slots__ = ("tree", "ctx", "names", "getter", "values", "direct", "misses")

    def __init__(self, tree: ExprTree, ctx: EvalContext) -> None:
        self.tree = tree
        self.ctx = ctx
        refs = references(tree.node)
        simple = all(r.scope is not Scope.SELECTED for r in refs)
        self.names: tuple[str, ...] | None = tuple(dict.fromkeys(r.key for r in refs)) if simple else None
        #: the referenced attributes' nodes of an ad as a tuple, looked up all at once
        self.getter = None if not self.names else _getter(self.names)
        self.values: dict[tuple[Any, ...], Any] = {}
        self.direct = _direct(tree.node)
        self.misses = 0

    def __call__(self, ad: ClassAd) -> Any:
        """The expression's value with ``ad`` as MY (ERROR when the evaluation cannot complete)."""
        if self.direct is not None:
            sign, name = self.direct
            node = ad._exprs.get(name)
            if type(node) is Literal and type(node.value) in (int, float):
                return sign * node.value
        return self.given(ad, self._key(ad))

    def given(self, ad: ClassAd, known: tuple[Any, ...] | None) -> Any:
        """The value for ``ad`` whose referenced attributes are the literals ``known`` (in
        ``names`` order; None when one is not a literal)."""
        if known is None or self.getter is None:
            key = None
        else:
            direct = self.direct
            if direct is not None and type(known[0]) in (int, float):
                return direct[0] * known[0]
            key = (*known, *map(type, known))
            found = self.values.get(key, _ABSENT)
            if found is not _ABSENT:
                return found
        try:
            value = self.tree.evaluate(ad, None, self.ctx)
        except ClassAdError:
            value = ERROR
        if key is not None:
            self.values[key] = value
            self.misses += 1
            if self.misses == _GIVE_UP and len(self.values) * 4 > self.misses * 3 and self.direct is None:
                self.getter = None  # nearly every ad differs (a rank by expected badput): stop keying
        return value

    def _key(self, ad: ClassAd) -> tuple[Any, ...] | None:
        getter = self.getter
        if getter is None:
            return None
        try:
            nodes: Any = getter(ad._exprs)
            return tuple([node.value for node in nodes])
        except KeyError:  # an absent attribute: read one name at a time
            return tuple([ad._exprs.get(name, _ABSENT_NODE).value for name in self.names or ()])
        except AttributeError:  # an attribute that is an expression: no key
            return None


class Reader:
    """One read per ad of every attribute a survey needs: ``fixed`` names first, then what each
    memo refers to; ``known(values, i)`` hands memo ``i`` its attributes' values."""

    __slots__ = ("names", "absent", "picks")

    def __init__(self, fixed: tuple[str, ...], memos: list[Memo | None]) -> None:
        names = list(fixed)
        self.picks: list[Callable[[list[Any]], tuple[Any, ...]] | None] = []
        for memo in memos:
            if memo is None or not memo.names:
                self.picks.append(None)
                continue
            positions = []
            for name in memo.names:
                if name not in names:
                    names.append(name)
                positions.append(names.index(name))
            self.picks.append(_getter_by_position(positions))
        self.names = tuple(names)
        self.absent = (_ABSENT_NODE,) * len(names)

    def adopt_names(self, ad: ClassAd) -> None:
        """Look names up with the very key objects ``ad`` uses: ads parsed from a collector's answer
        share them, and a dictionary finds an identical key without comparing its text."""
        own = {name: name for name in ad._exprs}
        self.names = tuple(own.get(name, name) for name in self.names)

    def read(self, ad: ClassAd, ctx: EvalContext) -> tuple[list[Any], bool]:
        """The values of ``names`` in ``ad``, and whether all of them are literals (or absent)."""
        nodes: list[Any] = list(map(ad._exprs.get, self.names, self.absent))
        try:
            return [node.value for node in nodes], True
        except AttributeError:
            return [attribute(ad, name, ctx) for name in self.names], False

    def known(self, values: list[Any], literal: bool, i: int) -> tuple[Any, ...] | None:
        pick = self.picks[i]
        return pick(values) if literal and pick is not None else None


def _getter_by_position(positions: list[int]) -> Callable[[list[Any]], tuple[Any, ...]]:
    if len(positions) == 1:
        one = positions[0]
        return lambda values: (values[one],)
    return itemgetter(*positions)
