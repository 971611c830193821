"""What the negotiator needs to know about expressions without evaluating them.

* ``scoped_names(node)``: the attribute names an expression mentions, each with its scope:
  ``"my"`` (``MY.x``), ``"target"`` (``TARGET.x``) or ``None`` (unscoped, which in HTCondor's
  matching resolves in the ad itself and falls back to the other ad; the attribute of a
  selection ``base.x`` counts as unscoped, and so do the names its base reads). A view of
  ``htcpool.classad.refs.references``, cached per node object.
* ``closure(ad, nodes)``: those references followed through the ad's own attributes (``START`` in
  ``Requirements = START``), giving every name of the ad and of the other ad that can matter.
* ``expression_shape(ad)``: a key equal for ads that differ only in literal values, whose closures
  are therefore equal (a pool's slot ads mostly share a few shapes); ``shape_closure`` remembers
  closures by shape across cycles, so an unchanged slot costs a shape and a dictionary lookup.
* ``literal(ad, name, context)``: an attribute's value, read off a literal without evaluating.
* ``with_values(ad, values)``: a copy of an ad with attributes set to plain values, as
  ``ad[name] = value`` would set them (the ephemeral attributes of request and slot ads).
* ``value_key(node)``: a hashable stand-in for an attribute's expression, equal for equal
  expressions: the literal's type and value, or the canonical text. Slot and job *classes* are
  built from these keys: two ads with the same keys for every referenced name evaluate alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.classad import to_node
from htcpool.classad.nodes import ListExpr, Literal, Node
from htcpool.classad.refs import Scope, references

Ref = tuple[str | None, str]  # (scope, lower-cased name)

_refs_cache: dict[int, tuple[Node, frozenset[Ref]]] = {}
_text_cache: dict[int, tuple[Node, str]] = {}


def scoped_names(node: Node) -> frozenset[Ref]:
    hit = _refs_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    out: set[Ref] = set()
    for ref in references(node):
        scope = ref.scope
        if scope is Scope.MY or scope is Scope.TARGET:
            out.add((scope.value, ref.key))
        elif scope is Scope.UNSCOPED:
            if ref.key not in ("my", "target"):
                out.add((None, ref.key))
        else:
            out.add((None, ref.key))
            assert ref.base is not None
            out |= scoped_names(ref.base)
    result = frozenset(out)
    if len(_refs_cache) > 200_000:
        _refs_cache.clear()
    _refs_cache[id(node)] = (node, result)
    return result


def closure(ad: ClassAd, nodes: Iterable[Node]) -> tuple[set[str], set[str]]:
    """Names of ``ad`` and names of the other ad that ``nodes`` (evaluated with ``ad`` as MY) can read.

    Returns ``(own, other)``: unscoped names the ad does not define count in both (HTCondor's
    fallback to the other ad), ``TARGET.x`` only in ``other``.
    """
    own: set[str] = set()
    other: set[str] = set()
    stack = list(nodes)
    seen: set[str] = set()
    exprs = ad._exprs
    while stack:
        for scope, name in scoped_names(stack.pop()):
            if scope == "target":
                other.add(name)
                continue
            own.add(name)
            node = exprs.get(name)
            if node is None:
                if scope is None:
                    other.add(name)
            elif name not in seen:
                seen.add(name)
                stack.append(node)
    return own, other


def value_key(node: Node | None) -> Any:
    """A hashable key equal for equal expressions (None for an absent attribute)."""
    if node is None:
        return None
    if type(node) is Literal:
        v = node.value
        return (type(v), v)
    hit = _text_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    text = repr(ExprTree._wrap(node))
    if len(_text_cache) > 200_000:
        _text_cache.clear()
    _text_cache[id(node)] = (node, text)
    return text


def expression_shape(ad: ClassAd) -> Shape:
    """Equal for ads that define the same names, in the same order, with the same expression
    objects, whatever their literal values: such ads have the same ``closure`` for any nodes, so
    it is computed once (``shape_closure``). The names and, per name, the id of its expression
    node (None for a literal) are interned as a small number, so a shape hashes and compares at
    once; the table keeps each shape's nodes alive, so an id in it names one object while the
    number is in use, and numbers are never given twice."""
    exprs = ad._exprs
    values = exprs.values()
    key = (tuple(exprs), tuple([None if type(n) is Literal or _is_value(n) else id(n) for n in values]))
    hit = _shape_numbers.get(key)
    if hit is not None:
        return hit[0]
    if len(_shape_numbers) >= CLOSURE_CACHE_SIZE:
        _shape_numbers.clear()
        _closure_cache.clear()
    number = next(_shape_counter)
    _shape_numbers[key] = (number, tuple([n for n in values if not _is_value(n)]))
    return number


def _is_value(node: Node) -> bool:
    """Whether ``node`` reads nothing: a literal, or a list of literals (``{ "Docker" }``, which an
    ad assigned a Python list holds as a list node of its own, so two slots with equal lists
    would otherwise never share a shape)."""
    t = type(node)
    return t is Literal or (t is ListExpr and all(type(i) is Literal for i in node.items))  # type: ignore[attr-defined]


Shape = int

_shape_numbers: dict[tuple[tuple[str, ...], tuple[int | None, ...]], tuple[int, tuple[Node, ...]]] = {}
_shape_counter = itertools.count(1)
#: (shape, ids of the nodes) -> (own, other, what keeps the ids alive): kept across cycles, since
#: a pool's slot ads keep their few shapes while only their literal values move
_closure_cache: dict[tuple[Shape, tuple[int, ...]], tuple[frozenset[str], frozenset[str], object]] = {}
CLOSURE_CACHE_SIZE = 20_000


def shape_closure(shape: Shape, ad: ClassAd, nodes: Sequence[Node]) -> tuple[frozenset[str], frozenset[str]]:
    """``closure(ad, nodes)`` for an ad of ``shape`` (``expression_shape(ad)``), remembered by the
    shape and the nodes' identities. The entry keeps the ad's expression nodes and the nodes
    alive, so no id in its key can be reused by another object while it is held; an ad whose
    expressions changed has another shape and is followed afresh."""
    key = (shape, tuple([id(n) for n in nodes]))
    hit = _closure_cache.get(key)
    if hit is not None:
        return hit[0], hit[1]
    own, other = closure(ad, nodes)
    alive = (tuple([n for n in ad._exprs.values() if type(n) is not Literal]), tuple(nodes))
    result = (frozenset(own), frozenset(other), alive)
    if len(_closure_cache) >= CLOSURE_CACHE_SIZE:
        _closure_cache.clear()
    _closure_cache[key] = result
    return result[0], result[1]


def whole_closure(shape: Shape, ad: ClassAd) -> tuple[frozenset[str], frozenset[str]]:
    """``closure`` of every expression (non-literal) of an ad of ``shape``: the shape alone
    decides it (its number stands for the ad's names and expression nodes, and is never given
    twice), so it is remembered by the number."""
    hit = _whole_cache.get(shape)
    if hit is None:
        own, other = closure(ad, [n for n in ad._exprs.values() if type(n) is not Literal])
        if len(_whole_cache) >= CLOSURE_CACHE_SIZE:
            _whole_cache.clear()
        hit = _whole_cache[shape] = (frozenset(own), frozenset(other))
    return hit


_whole_cache: dict[Shape, tuple[frozenset[str], frozenset[str]]] = {}


def literal(ad: ClassAd, name: str, context: EvalContext, default: Any = None) -> Any:
    """The value of a literal attribute, evaluating it (in ``context``, the cycle's) only when
    it is an expression."""
    node = ad._exprs.get(name.lower())
    if node is None:
        return default
    if type(node) is Literal:
        return node.value
    return ad.evaluate(name, context)


def number(v: Any) -> float | None:
    """A value as matchmaking reads a rank or a resource: a real, with ``true`` and ``false`` as 1
    and 0 (``Rank = Owner == "alice"`` ranks by a boolean). ``htcpool.classad.as_number``, which
    refuses booleans, is for counts and times."""
    t = type(v)
    if t is int or t is float or t is bool:
        return float(v)
    return None


def with_values(ad: ClassAd, values: Sequence[tuple[str, object]]) -> ClassAd:
    """A copy of ``ad`` with the attributes ``values`` set (as ``ad[name] = value`` would)."""
    exprs = dict(ad._exprs)
    names = dict(ad._names)
    for name, value in values:
        low = name.lower()
        if low not in names:
            names[low] = name
        exprs[low] = Literal(value) if type(value) in _PLAIN else to_node(value)
    return ClassAd._from_tables(exprs, names)


_PLAIN = (float, str, bool)
