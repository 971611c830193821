"""What a negotiation cycle works out from each slot ad, kept for the next cycle while the ad is
the very same object.

A collector that hands the negotiator one read-only snapshot per version of each ad (the
simulator's; ``AdStore.query(shared=True)``) gives an unchanged ad back as the same object, so
the ad's identity is its version: a ``SlotMemo`` keeps, per ad object, the facts below, and a
changed ad (a new object) starts with none. Every fact is a pure function of the ad's
attributes (the ad is never changed: its nodes are immutable and the snapshot is read-only), and
a fact that an evaluation with the cycle's clock decides (an expression rather than a literal)
is never kept. So a cycle with the memo computes exactly what it would compute afresh; the memo
only skips the repetition. Facts:

* ``shape``: ``exprinfo.expression_shape`` of the ad, and per set of decorated names (the
  ephemeral attributes a cycle adds, ``slotattrs``) the shape of the decorated copy;
* ``name``, ``remote_user``, ``cp``: the slot's Name, the user preemption sees, the
  consumption-policy resources (``slotclasses``);
* ``values``: per tuple of attribute names (the cycle's match or rank names), the ad's
  ``value_key`` of each, as a ``HashedTuple`` that one memo hands out once per content (a slot's
  match key holds it and is looked up at every cycle: its hash is not worked out again, and an
  equal tuple of another slot is the same object);
* ``state``: what the cycle's passes read of the slot's own state (``slotstate``);
* ``weight``: the slot's ``SlotWeight`` with the key of the weigher that worked it out
  (``accountant.SlotWeigher``), when it follows from the ad's literals.

Entries last one cycle beyond their last use (``begin`` starts a cycle): the memo holds the ads,
so an id in it cannot be reused while its entry lives.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Sequence
from typing import Any

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Literal
from htcpool.negotiator.exprinfo import Shape, expression_shape, value_key

__all__ = ["UNKNOWN", "HashedTuple", "SlotFacts", "SlotMemo", "literal_only"]

#: the tuples of names whose value keys an ad keeps (a cycle asks for two: match and rank names)
MAX_NAME_TUPLES = 4
#: a fact not worked out yet, or one that is not kept (it needs the cycle's clock)
UNKNOWN: Any = object()


#: equal value-key tuples a memo keeps one object of, at most (past it, it starts again)
MAX_INTERNED = 100_000


class HashedTuple(tuple):
    """A tuple that works its hash out once: equal to, and hashing like, the plain tuple."""

    def __hash__(self) -> int:
        found = self.__dict__
        h = found.get("hash")
        if h is None:
            h = found["hash"] = tuple.__hash__(self)
        return h


def literal_only(ad: ClassAd, names: Sequence[str]) -> bool:
    """Whether every one of the (lower-cased) ``names`` the ad defines is a literal."""
    exprs = ad._exprs
    for name in names:
        node = exprs.get(name)
        if node is not None and type(node) is not Literal:
            return False
    return True


class SlotFacts:
    """The facts of one slot ad (see the module docstring)."""

    __slots__ = ("ad", "shape", "decorated_shapes", "name", "remote_user", "cp", "values", "state", "weight",
                 "interned")

    def __init__(self, ad: ClassAd, interned: dict[HashedTuple, HashedTuple] | None = None) -> None:
        self.ad = ad
        #: the memo's one object per content of value-key tuples (``value_keys``)
        self.interned: dict[HashedTuple, HashedTuple] = {} if interned is None else interned
        self.shape: Shape | None = None
        self.decorated_shapes: dict[tuple[str, ...], Shape] = {}
        self.name: Any = UNKNOWN
        self.remote_user: Any = UNKNOWN
        self.cp: Any = UNKNOWN
        #: (names tuple, the ad's value keys for those names), most recent last
        self.values: list[tuple[tuple[str, ...], tuple[Hashable, ...]]] = []
        self.state: Any = UNKNOWN
        self.weight: tuple[Hashable, float] | None = None

    def expression_shape(self) -> Shape:
        shape = self.shape
        if shape is None:
            shape = self.shape = expression_shape(self.ad)
        return shape

    def decorated_shape(self, decorated: ClassAd, added: tuple[str, ...]) -> Shape:
        """``expression_shape(decorated)``, where ``decorated`` is this ad with the lower-cased
        attributes ``added`` set. Its names and non-literal nodes follow from this ad's and
        ``added`` when every added node is a literal; otherwise it is worked out afresh."""
        exprs = decorated._exprs
        if any(type(exprs[name]) is not Literal for name in added):
            return expression_shape(decorated)
        shape = self.decorated_shapes.get(added)
        if shape is None:
            shape = self.decorated_shapes[added] = expression_shape(decorated)
        return shape

    def value_keys(self, names: tuple[str, ...]) -> tuple[Hashable, ...]:
        """``value_key`` of each of ``names`` in the ad."""
        # a cycle's names come from the memo (``SlotMemo.names``), one object per content: found
        # by identity without hashing them; an equal tuple made elsewhere is found by content
        known = self.values
        for seen, keys in known:
            if seen is names:
                return keys
        for seen, keys in known:
            if seen == names:
                return keys
        if len(known) >= MAX_NAME_TUPLES:
            known.clear()
        exprs = self.ad._exprs
        keys = HashedTuple([value_key(exprs.get(n)) for n in names])
        keys = self.interned.setdefault(keys, keys)
        known.append((names, keys))
        return keys


class SlotMemo:
    """Facts per slot ad object, kept from one cycle to the next (see the module docstring)."""

    def __init__(self) -> None:
        self._current: dict[int, SlotFacts] = {}
        self._previous: dict[int, SlotFacts] = {}
        self._interned: dict[HashedTuple, HashedTuple] = {}
        self._names: dict[tuple[str, ...], HashedTuple] = {}
        #: the ads of this cycle's last ``facts_of`` and their facts: a cycle asks for every slot
        #: twice (``requests.significant_attributes``, then ``NegotiationCycle.prepare``)
        self._last: tuple[Sequence[ClassAd], list[SlotFacts]] = ((), [])
        self.hits = 0
        self.misses = 0

    def begin(self) -> None:
        """A new cycle: the facts of ads not asked for since the previous ``begin`` are dropped."""
        self._previous = self._current
        self._current = {}
        self._last = ((), [])
        if len(self._interned) > MAX_INTERNED:
            self._interned.clear()  # equal tuples then are two objects for a while: slower, no less equal

    def names(self, names: tuple[str, ...]) -> HashedTuple:
        """One object per content of a cycle's tuple of attribute names (``SlotFacts.value_keys``)."""
        found = self._names.get(names)
        if found is None:
            if len(self._names) > MAX_INTERNED:
                self._names.clear()
            found = self._names[names] = HashedTuple(names)
        return found

    def facts(self, ad: ClassAd) -> SlotFacts:
        return self.facts_of((ad,))[0]

    def facts_of(self, ads: Sequence[ClassAd]) -> list[SlotFacts]:
        """``facts`` of each of ``ads``, in one loop (a cycle asks for every slot of the pool)."""
        last_ads, last = self._last
        if len(ads) == len(last_ads) and all(map(operator.is_, ads, last_ads)):
            self.hits += len(last)
            return list(last)
        current, previous, interned = self._current, self._previous, self._interned
        out = []
        hits = misses = 0
        for ad in ads:
            key = id(ad)
            f = current.get(key)
            if f is None or f.ad is not ad:
                f = previous.get(key)
                if f is not None and f.ad is ad:
                    hits += 1
                else:
                    f = SlotFacts(ad, interned)
                    misses += 1
                current[key] = f
            out.append(f)
        self.hits += hits
        self.misses += misses
        self._last = (tuple(ads), out)
        return list(out)
