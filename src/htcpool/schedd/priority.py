"""Which idle job of a submitter goes next: HTCondor's job priority order.

Within one submitter (``AccountingGroup``, else ``Owner``) jobs are ordered by
``PreJobPrio1``, ``PreJobPrio2``, ``JobPrio``, ``PostJobPrio1``,
``PostJobPrio2`` (higher first; missing or non-integer counts as 0), then
``QDate``, cluster and proc (lower first). ``PriorityIndex`` keeps one heap per
submitter with lazy deletion: a changed or departed job leaves a stale entry
that is skipped when it reaches the top. ``ordered`` walks the jobs in order
without removing them, so an unmatchable job at the top never blocks the rest.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from htcpool.classad import ClassAd

PRIO_ATTRS = ("prejobprio1", "prejobprio2", "jobprio", "postjobprio1", "postjobprio2")
JobId = tuple[int, int]
Key = tuple[int, int, int, int, int, int, int, int]


def _int(ad: ClassAd, low: str) -> int:
    node = ad._exprs.get(low)
    if node is None:
        return 0
    value = ad._evaluate_node(node, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def submitter_of(ad: ClassAd) -> str:
    for attr in ("accountinggroup", "owner"):
        node = ad._exprs.get(attr)
        if node is not None:
            value = ad._evaluate_node(node, None)
            if isinstance(value, str):
                return value
    return ""


def priority_key(ad: ClassAd, job_id: JobId) -> Key:
    p1, p2, prio, q1, q2 = (_int(ad, a) for a in PRIO_ATTRS)
    return (-p1, -p2, -prio, -q1, -q2, _int(ad, "qdate"), job_id[0], job_id[1])


class PriorityIndex:
    def __init__(self) -> None:
        self.heaps: dict[str, list[Key]] = {}
        self.current: dict[JobId, tuple[str, Key]] = {}

    def add(self, submitter: str, key: Key) -> None:
        job_id = (key[6], key[7])
        self.current[job_id] = (submitter, key)
        heapq.heappush(self.heaps.setdefault(submitter, []), key)

    def discard(self, job_id: JobId) -> None:
        self.current.pop(job_id, None)

    def _live(self, submitter: str, key: Key) -> bool:
        return self.current.get((key[6], key[7])) == (submitter, key)

    def ordered(self, submitter: str) -> Iterator[JobId]:
        heap = self.heaps.get(submitter, [])
        taken: list[Key] = []
        try:
            while heap:
                key = heapq.heappop(heap)
                if not self._live(submitter, key):
                    continue
                taken.append(key)
                yield (key[6], key[7])
        finally:
            for key in taken:
                heapq.heappush(heap, key)

    def submitters(self) -> list[str]:
        return sorted({s for s, _ in self.current.values()}, key=lambda s: (len(s), s))
