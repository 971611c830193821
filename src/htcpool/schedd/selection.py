"""Which jobs of the queue meet a query's constraint, evaluated once per distinct input.

A query's constraint (``ClusterId == 12``, ``Owner == "alice" && JobStatus == 1``) reads
a few attributes of each job. The jobs of one cluster share those attributes' literal
values as the same objects (a cluster's ads are copies of one ad), so the constraint
gives the same answer for every job whose referenced attributes are the same literal
objects. ``matching`` evaluates it once for each such combination and reuses the answer,
which turns a scan of 10,000 jobs into a few evaluations and 10,000 dictionary lookups.

The shortcut is taken only where it cannot change an answer: the constraint reads only
attributes of the job itself (no ``TARGET.``, no selection from another value), calls no
function (``random()``, ``time()``), and the job's values for those attributes are
literals (or absent); any other job is evaluated as it is. The remembered answers last
one query, during which the queue does not change.

Before that, ``in_order`` narrows the queue to the jobs the constraint can be true for when
it names a cluster or an owner (``jobindex``): ``condor_q 12`` looks at cluster 12's jobs only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.nodes import FnCall, Literal, Node
from htcpool.classad.refs import Scope, references
from htcpool.schedd.jobindex import JobIndex
from htcpool.schedd.store import JobId


def _keys_if_memoizable(node: Node) -> tuple[str, ...] | None:
    """The attribute keys ``node`` reads from the job, or None when its answer may depend on
    more than their literal values."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, FnCall):
            return None
        if not isinstance(n, ClassAd):
            stack.extend(n.children())
    keys: list[str] = []
    for ref in references(node):
        if ref.scope not in (Scope.UNSCOPED, Scope.MY) or ref.absolute:
            return None
        if ref.key not in keys:
            keys.append(ref.key)
    return tuple(keys)


def in_order(jobs: dict[JobId, ClassAd], index: JobIndex, test: ExprTree | None) -> list[ClassAd]:
    """The ads a query with ``test`` must look at, in job id order: the index's candidates when it
    can name them, else the whole queue."""
    chosen = index.candidates(test.node) if test is not None else None
    if chosen is None:
        return [jobs[job_id] for job_id in sorted(jobs)]
    return [jobs[job_id] for job_id in sorted(chosen) if job_id in jobs]


def candidates(jobs: dict[JobId, ClassAd], index: JobIndex, test: ExprTree) -> Iterable[ClassAd]:
    """``in_order`` in no particular order (for counting)."""
    chosen = index.candidates(test.node)
    if chosen is None:
        return jobs.values()
    return [jobs[job_id] for job_id in chosen if job_id in jobs]


def matching(ads: Iterable[ClassAd], test: ExprTree | None, ctx: EvalContext) -> Iterator[ClassAd]:
    """The ads of ``ads`` (top-level job ads) for which ``test`` is true, in their order."""
    if test is None:
        yield from ads
        return
    keys = _keys_if_memoizable(test.node)
    if keys is None:
        for ad in ads:
            if test.evaluate(ad, None, ctx) is True:
                yield ad
        return
    if len(keys) == 1:
        yield from _matching_one(ads, test, ctx, keys[0])
        return
    known: dict[tuple[int, ...], bool] = {}
    plain = _PLAIN
    for ad in ads:
        nodes = tuple(map(ad._exprs.get, keys))
        if plain.issuperset(map(type, nodes)):
            ids = tuple(map(id, nodes))
            answer = known.get(ids)
            if answer is None:
                answer = known[ids] = test.evaluate(ad, None, ctx) is True
        else:
            answer = test.evaluate(ad, None, ctx) is True
        if answer:
            yield ad


_PLAIN = frozenset({Literal, type(None)})  # values that depend on nothing else


def _matching_one(ads: Iterable[ClassAd], test: ExprTree, ctx: EvalContext, key: str) -> Iterator[ClassAd]:
    """``matching`` for a constraint that reads one attribute (``ClusterId == 12``)."""
    known: dict[int, bool] = {}
    for ad in ads:
        node = ad._exprs.get(key)
        if node is None or type(node) is Literal:
            answer = known.get(id(node))
            if answer is None:
                answer = known[id(node)] = test.evaluate(ad, None, ctx) is True
        else:
            answer = test.evaluate(ad, None, ctx) is True
        if answer:
            yield ad


__all__ = ["candidates", "in_order", "matching"]
