"""Constraints, projections and private attributes: what a collector query does to each ad.

* ``compile_constraint(text)`` parses a constraint once (recently used ones are cached, since
  daemons repeat the same query every cycle) into a ``Constraint``; text that does not parse
  raises ``CollectorQueryError`` with the line, column and reason. Blank text means "every ad".
* A ``Constraint`` is called with an ad and an ``EvalContext`` (whose clock is the query's
  ``now``). The ad is ``MY``, so plain names and ``MY.x`` read it. HTCondor evaluates a query
  with the stored ad as ``TARGET``, so constraints written ``TARGET.Memory > 1024`` are common;
  when a constraint mentions ``TARGET`` it is evaluated in a match of the ad with a view of
  itself, which makes ``TARGET.x`` read the ad too. An ad is selected when the result is
  ``true`` or a non-zero number (HTCondor's boolean equivalence); ``false``, ``undefined``,
  ``error``, strings and an evaluation that cannot complete leave it out.
* ``project(ad, names)`` is a new ad holding only the named attributes the ad has (names are
  case-insensitive; asked-for names the ad lacks are simply absent), like ``condor_status -af``
  asking only for what it prints.
* ``with_private(ad, private)`` is the public ad with the private ad's attributes (the startd's
  ``ClaimId``, ``Capability`` …) laid over it, as the negotiator sees a slot.

Every function returns new ads that share the stored ads' expression nodes (nodes are never
changed in place), so callers may change what they get without touching the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from htcpool.classad import ClassAd, ClassAdError, ClassAdParseError, EvalContext
from htcpool.classad.nodes import Node
from htcpool.classad.operators import bool_equiv
from htcpool.classad.parser import parse_expression
from htcpool.classad.refs import Scope, references
from htcpool.collector.errors import CollectorQueryError, CollectorUsageError


def _mentions_target(node: Node) -> bool:
    """Whether the constraint reads ``TARGET.x`` anywhere, inside the bases of selections too."""
    return any(ref.scope is Scope.TARGET
               or (ref.scope is Scope.SELECTED and ref.base is not None and _mentions_target(ref.base))
               for ref in references(node))


class Constraint:
    """A parsed constraint, called as ``constraint(ad, context) -> bool``."""

    __slots__ = ("text", "node", "uses_target", "mentions_absent")

    def __init__(self, text: str, node: Node) -> None:
        self.text = text
        self.node = node
        self.uses_target = _mentions_target(node)
        #: the constraint asks about ``Absent``: absent ads are not filtered out for it
        self.mentions_absent = any(ref.key == "absent" for ref in references(node))

    def __call__(self, ad: ClassAd, context: EvalContext) -> bool:
        target = ClassAd._from_tables(ad._exprs, ad._names) if self.uses_target else None
        try:
            value = ad._evaluate_node(self.node, target, context)
        except ClassAdError:
            return False
        return bool_equiv(value) is True

    def __repr__(self) -> str:
        return f"Constraint({self.text!r})"


@lru_cache(maxsize=256)
def _compile(text: str) -> Constraint:
    try:
        return Constraint(text, parse_expression(text))
    except ClassAdParseError as e:
        raise CollectorQueryError(text, e.reason, e.line, e.column, e.excerpt()) from None


def compile_constraint(text: str | None) -> Constraint | None:
    """The parsed constraint, or None when ``text`` is None or blank (every ad qualifies)."""
    if text is None or not text.strip():
        return None
    if not isinstance(text, str):
        raise CollectorUsageError(f"a constraint is text, not {type(text).__name__}")
    return _compile(text)


def projection_keys(names: Iterable[str] | None) -> list[str] | None:
    """The lower-cased attribute names of a projection, or None for "all attributes"."""
    if names is None:
        return None
    if isinstance(names, str):
        raise CollectorUsageError("a projection is a list of attribute names, not one string")
    keys: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise CollectorUsageError(f"projection: {name!r} is not an attribute name")
        low = name.lower()
        if low not in keys:
            keys.append(low)
    return keys or None


def project(ad: ClassAd, keys: list[str]) -> ClassAd:
    """A new ad with only the attributes of ``ad`` whose lower-cased names are in ``keys``."""
    exprs, names = ad._exprs, ad._names
    present = [k for k in keys if k in exprs]
    return ClassAd._from_tables({k: exprs[k] for k in present}, {k: names[k] for k in present})


def with_private(ad: ClassAd, private: ClassAd | None) -> ClassAd:
    """A copy of ``ad`` with the attributes of ``private`` laid over it."""
    merged = ad.copy()
    if private is not None:
        for key, node in private._exprs.items():
            merged.insert_node(private._names[key], node)
    return merged
