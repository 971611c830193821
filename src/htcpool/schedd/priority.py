"""Which idle job of a submitter goes next: HTCondor's job priority order.

A job's submitter is its accounting name: ``AccountingGroup`` if set, else
``Owner``, followed by ``@`` and the accounting domain (``ACCOUNTING_DOMAIN``,
whose default is ``UID_DOMAIN``) unless the domain is empty or the name has
one already, as the schedd names submitters to the negotiator
(``group_physics.einstein@example.org``). An ``AccountingGroup`` that is not a
non-empty string, or cannot be evaluated, gives way to ``Owner``.

Within one submitter jobs are ordered as ``qmgmt.cpp::prio_compar`` does:
``PreJobPrio1``, ``PreJobPrio2``, ``JobPrio``, ``PostJobPrio1``,
``PostJobPrio2`` (higher first; missing, non-integer or impossible to evaluate
counts as 0), then cluster and proc (lower first). ``QDate`` is not part of the
order: cluster ids stand in for submission order, as in HTCondor.
``PriorityIndex`` keeps one heap per submitter with lazy deletion: a changed or
departed job leaves a stale entry that is skipped when it reaches the top.
``ordered`` walks the jobs in order without removing them, so an unmatchable
job at the top never blocks the rest. The functions take the ``EvalContext``
of the caller's ``now``: priorities and accounting groups may read the time.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext

PRIO_ATTRS = ("prejobprio1", "prejobprio2", "jobprio", "postjobprio1", "postjobprio2")
SUBMITTER_ATTRS = ("accountinggroup", "owner")
JobId = tuple[int, int]
Prefix = tuple[int, int, int, int, int]
Key = tuple[int, int, int, int, int, int, int]


def _value(ad: ClassAd, low: str, context: EvalContext) -> Any:
    """The attribute's value in ``context``; None when it is absent or cannot be evaluated."""
    node = ad._exprs.get(low)
    if node is None:
        return None
    try:
        return ad._evaluate_node(node, None, context)
    except ClassAdError:
        return None


def _int(ad: ClassAd, low: str, context: EvalContext) -> int:
    value = _value(ad, low, context)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def submitter_of(ad: ClassAd, domain: str, context: EvalContext) -> str:
    """The accounting name of the job's submitter (``""`` when it has no owner)."""
    for attr in SUBMITTER_ATTRS:
        value = _value(ad, attr, context)
        if isinstance(value, str) and value:
            return f"{value}@{domain}" if domain and "@" not in value else value
    return ""


def priority_prefix(ad: ClassAd, context: EvalContext) -> Prefix:
    """The job-priority part of the key (negated, so that higher comes first)."""
    p1, p2, prio, q1, q2 = (_int(ad, a, context) for a in PRIO_ATTRS)
    return (-p1, -p2, -prio, -q1, -q2)


_SLACK = 64  # dead heap entries tolerated beyond the live ones before a rebuild


def priority_key(ad: ClassAd, job_id: JobId, context: EvalContext) -> Key:
    return (*priority_prefix(ad, context), job_id[0], job_id[1])


class PriorityIndex:
    """Each submitter's idle jobs in priority order: a heap per submitter, whose entries for jobs
    that left or changed key are skipped when met (``current`` says which entries are live). A
    heap that has gathered more dead entries than live ones (a job held and released again and
    again, or jobs that left between negotiations) is rebuilt from its live entries, so that its
    size follows the submitter's idle jobs; a submitter with none left is forgotten."""

    def __init__(self) -> None:
        self.heaps: dict[str, list[Key]] = {}
        self.current: dict[JobId, tuple[str, Key]] = {}
        self.live: dict[str, int] = {}

    def add(self, submitter: str, key: Key) -> None:
        job_id = (key[5], key[6])
        entry = (submitter, key)
        old = self.current.get(job_id)
        if old == entry:
            return
        if old is not None:
            self._uncount(old[0])
        self.current[job_id] = entry
        live = self.live[submitter] = self.live.get(submitter, 0) + 1
        heap = self.heaps.setdefault(submitter, [])
        heapq.heappush(heap, key)
        if len(heap) > 2 * live + _SLACK:
            self.heaps[submitter] = sorted({k for k in heap if self._live(submitter, k)})

    def discard(self, job_id: JobId) -> None:
        old = self.current.pop(job_id, None)
        if old is not None:
            self._uncount(old[0])

    def _uncount(self, submitter: str) -> None:
        left = self.live.get(submitter, 0) - 1
        if left > 0:
            self.live[submitter] = left
        else:
            self.live.pop(submitter, None)
            self.heaps.pop(submitter, None)

    def _live(self, submitter: str, key: Key) -> bool:
        return self.current.get((key[5], key[6])) == (submitter, key)

    def ordered(self, submitter: str) -> Iterator[JobId]:
        heap = self.heaps.get(submitter, [])
        taken: list[Key] = []
        try:
            while heap:
                key = heapq.heappop(heap)
                if not self._live(submitter, key) or (taken and taken[-1] == key):
                    continue  # dead, or a second copy of a live key (a job released again)
                taken.append(key)
                yield (key[5], key[6])
        finally:
            for key in taken:
                heapq.heappush(heap, key)

    def submitters(self) -> list[str]:
        # ``live`` counts each submitter's entries of ``current``: no walk over the idle jobs
        return sorted(self.live, key=lambda s: (len(s), s))
