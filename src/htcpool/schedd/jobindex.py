"""The queue's jobs by cluster and by owner, so that a query names its few candidates.

Most queries users make pick one cluster (``condor_q 12``, ``ClusterId == 12``) or one
user's jobs (``Owner == "alice" && JobStatus == 1``); answering them by walking a queue of
10,000 jobs costs milliseconds each time. ``JobIndex`` keeps, for every queued job, the
literal value of its ``ClusterId`` (a whole number) and of its ``Owner`` (a string, kept
with its ASCII letters folded, as ClassAd ``==`` compares strings), updated where the
queue's job counts are (``tally``: every job stored, every job gone).

``candidates`` reads a constraint and returns a set of jobs that holds every job it can
be true for, or None when it cannot narrow the queue. It narrows only by terms that must be
true for the whole constraint to be: a ``ClusterId == <integer>`` or ``Owner == "<string>"``
(either side, ``MY.`` allowed, in parentheses or not) standing alone or as one operand of
``&&``, where ``&&`` is true only when both operands are. A job whose value is anything
but such a literal (an expression, another type, or no value of its own, which a parent ad
might give) is a candidate of every such term. The constraint is still evaluated on every
candidate, so the answer is the one a walk over the whole queue gives.
"""

from __future__ import annotations

from collections import Counter

from htcpool.classad import ClassAd
from htcpool.classad.nodes import AttrRef, BinaryOp, Literal, Node, Paren
from htcpool.classad.operators import ascii_lower
from htcpool.schedd.store import JobId

#: the attributes indexed (lower case), each with the one literal type kept by value
_ATTRS: tuple[tuple[str, type], ...] = (("clusterid", int), ("owner", str))
_NAMES = tuple(name for name, _ in _ATTRS)
_KINDS = dict(_ATTRS)
#: the value a job is kept under for one attribute; None: not kept by value (a candidate always)
ValueKey = int | str | None
_NO_JOBS: frozenset[JobId] = frozenset()
_UNKNOWN: tuple[ValueKey, ...] = (None,) * len(_ATTRS)


def _value_key(node: Node | None, kind: type) -> ValueKey:
    return _fold(node.value, kind) if isinstance(node, Literal) else None


def _fold(value: object, kind: type) -> ValueKey:
    """The key of a value of ``kind``: a string with its ASCII letters folded, a whole number as
    it is (not a bool: ``true == 1`` holds in ClassAds); None for any other value."""
    if kind is str:
        return ascii_lower(value) if type(value) is str else None
    return value if type(value) is int else None


class JobIndex:
    """Queued jobs by the literal values of ``ClusterId`` and ``Owner``; see the module docstring."""

    def __init__(self) -> None:
        self.by_value: dict[str, dict[ValueKey, set[JobId]]] = {name: {} for name in _NAMES}
        #: per attribute and value, its jobs by status (``tally.status_key``; None: not known)
        self.statuses: dict[str, dict[ValueKey, Counter[str | None]]] = {name: {} for name in _NAMES}
        self.loose: dict[str, set[JobId]] = {name: set() for name in _NAMES}
        #: each job's value keys and its status
        self.entries: dict[JobId, tuple[tuple[ValueKey, ...], str | None]] = {}
        #: the last entry made: a cluster's jobs share one (memory: one tuple, not one a job)
        self._last: tuple[tuple[ValueKey, ...], str | None] = (_UNKNOWN, None)

    def __len__(self) -> int:
        return len(self.entries)

    def note(self, job_id: JobId, ad: ClassAd, status: str | None) -> None:
        """``ad`` is stored as it is now (new or changed), counted under ``status`` (None: its
        status is an expression, or something the count depends on is)."""
        exprs = ad._exprs
        self._put(job_id, tuple(_value_key(exprs.get(name), kind) for name, kind in _ATTRS), status)

    def note_like(self, job_id: JobId, like: JobId) -> None:
        """A new job with ``like``'s very ``ClusterId``, ``Owner`` and status (a copy of it)."""
        keys, status = self.entries.get(like, (_UNKNOWN, None))
        self._put(job_id, keys, status)

    def _put(self, job_id: JobId, keys: tuple[ValueKey, ...], status: str | None) -> None:
        self.forget(job_id)
        entry = keys, status
        if entry == self._last:
            entry = self._last
        else:
            self._last = entry
        self.entries[job_id] = entry
        for name, key in zip(_NAMES, keys, strict=True):
            if key is None:
                self.loose[name].add(job_id)
                continue
            jobs = self.by_value[name].get(key)
            if jobs is None:
                jobs = self.by_value[name][key] = set()
                self.statuses[name][key] = Counter()
            jobs.add(job_id)
            self.statuses[name][key][status] += 1

    def forget(self, job_id: JobId) -> None:
        """The job left the queue (or is about to be noted again)."""
        entry = self.entries.pop(job_id, None)
        if entry is None:
            return
        keys, status = entry
        for name, key in zip(_NAMES, keys, strict=True):
            if key is None:
                self.loose[name].discard(job_id)
                continue
            jobs = self.by_value[name][key]
            jobs.discard(job_id)
            if not jobs:
                del self.by_value[name][key], self.statuses[name][key]
                continue
            counts = self.statuses[name][key]
            counts[status] -= 1
            if not counts[status]:
                del counts[status]

    def clear(self) -> None:
        for name in _NAMES:
            self.by_value[name].clear()
            self.statuses[name].clear()
            self.loose[name].clear()
        self.entries.clear()

    def candidates(self, node: Node) -> set[JobId] | frozenset[JobId] | None:
        """Jobs that include every job ``node`` can be true for; None: any job may be. The set
        returned may be the index's own: read it, never change it."""
        while isinstance(node, Paren):
            node = node.expr
        if not isinstance(node, BinaryOp):
            return None
        if node.op == "&&":
            a, b = self.candidates(node.left), self.candidates(node.right)
            if a is None or b is None:
                return b if a is None else a
            return a & b if len(a) <= len(b) else b & a
        found = _equality(node)
        if found is None:
            return None
        name, key = found
        exact = self.by_value[name].get(key, _NO_JOBS)
        loose = self.loose[name]
        return exact | loose if loose else exact

    def counts(self, node: Node) -> dict[str, int] | None:
        """The jobs ``node`` is true for, counted by status, when ``node`` is one indexed term
        (``Owner == "alice"``) that every job's literal value decides; None otherwise."""
        while isinstance(node, Paren):
            node = node.expr
        found = _equality(node) if isinstance(node, BinaryOp) else None
        if found is None or self.loose[found[0]]:
            return None
        counts = self.statuses[found[0]].get(found[1], Counter())
        if None in counts:  # some job's status must be evaluated
            return None
        return {str(status): n for status, n in counts.items()}


def _equality(node: BinaryOp) -> tuple[str, ValueKey] | None:
    """(indexed attribute, value key) for ``<attribute> == <literal of its kind>``."""
    if node.op != "==":
        return None
    term = _term(node.left, node.right) or _term(node.right, node.left)
    if term is None:
        return None
    name, value = term
    key = _fold(value, _KINDS[name])
    return None if key is None else (name, key)


def _term(ref: Node, literal: Node) -> tuple[str, object] | None:
    """(indexed attribute, literal value) when ``ref`` reads one of the job's indexed
    attributes and ``literal`` is a literal."""
    while isinstance(ref, Paren):
        ref = ref.expr
    while isinstance(literal, Paren):
        literal = literal.expr
    if not isinstance(ref, AttrRef) or not isinstance(literal, Literal) or ref.absolute:
        return None
    base = ref.base
    if base is not None and not (isinstance(base, AttrRef) and base.base is None and not base.absolute
                                 and base.key == "my"):
        return None
    if ref.key not in _NAMES:
        return None
    return ref.key, literal.value


__all__ = ["JobIndex"]
