"""The queue's job counts, kept as jobs enter, change and leave instead of counted each time.

The schedd's ads (``ads``) need every submitter's idle, running and held jobs, and
``condor_q -totals`` (``totals``) the whole queue's jobs by ``JobStatus``; counting 10,000
ads for each costs milliseconds. ``JobTally`` keeps, for every queued job, the key it is
counted under (its submitter, its universe when the schedd runs it itself, its status as
``status_key`` gives it) and the number of jobs under each key. The queue tells it of each
job it stores (``note``) and each job that leaves (``forget``); a job's key is read again at
each ``note``, which the queue calls after every change of a job's status.

A job whose status, owner, accounting group or universe is an expression rather than a
literal may count differently as time passes without being stored again; such jobs are kept
apart (``volatile``) and counted when the counts are read, as they were before. The keys hold
the accounting domain they were made with; after a reconfiguration that changes it the
counts are made again from the queue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from htcpool.classad import ClassAd, ClassAdError
from htcpool.classad.context import EvalContext
from htcpool.classad.nodes import Literal
from htcpool.schedd.jobindex import JobIndex
from htcpool.schedd.priority import submitter_of
from htcpool.schedd.store import JobId
from htcpool.schedd.universes import Universe, universe_of

OTHER = "other"  # a JobStatus that is not a number
_READ = ("jobstatus", "accountinggroup", "owner", "jobuniverse")

#: the key a job is counted under: submitter, universe (None: offered for matchmaking), status
Key = tuple[str, Universe | None, str]


def status_key(ad: ClassAd, ctx: EvalContext | None = None) -> str:
    """The job's ``JobStatus`` as text (``"1"`` …), or ``OTHER`` when it is not a whole number."""
    try:
        status = ad.evaluate("JobStatus", ctx)
    except ClassAdError:
        return OTHER
    if type(status) is float and status.is_integer():
        status = int(status)
    return str(status) if type(status) is int else OTHER


def key_of(ad: ClassAd, domain: str, ctx: EvalContext) -> Key:
    try:
        submitter = submitter_of(ad, domain, ctx)
    except ClassAdError:
        submitter = ""
    return submitter, universe_of(ad), status_key(ad, ctx)


def _read(ad: ClassAd) -> tuple[object, ...] | None:
    """The nodes a key is made from; None when one is an expression (the job is volatile)."""
    exprs = ad._exprs
    nodes = tuple(exprs.get(name) for name in _READ)
    if any(node is not None and type(node) is not Literal for node in nodes):
        return None
    return nodes


class JobTally:
    """Counts of the queued jobs by ``Key``; see the module docstring."""

    def __init__(self, domain: str = "") -> None:
        self.domain = domain
        self.keys: dict[JobId, Key] = {}
        self.counts: Counter[Key] = Counter()
        self.volatile: set[JobId] = set()
        #: the nodes of the last job noted and its key: a cluster's jobs share their nodes
        self._last: tuple[tuple[object, ...], Key] | None = None
        #: the same jobs by cluster and owner, for the queries (``jobindex``)
        self.lookup = JobIndex()

    def note(self, job_id: JobId, ad: ClassAd, ctx: EvalContext) -> None:
        """``ad`` is stored as it is now (new or changed)."""
        self.forget(job_id)
        nodes = _read(ad)
        if nodes is None:
            self.volatile.add(job_id)
            self.lookup.note(job_id, ad, None)
            return
        last = self._last
        if last is not None and all(a is b for a, b in zip(nodes, last[0], strict=True)):
            key = last[1]
        else:
            key = key_of(ad, self.domain, ctx)
            self._last = (nodes, key)
        self.keys[job_id] = key
        self.counts[key] += 1
        self.lookup.note(job_id, ad, key[2])

    def note_like(self, job_id: JobId, like: JobId) -> None:
        """A new job counted as ``like`` (noted before): its status, owner, group and universe
        are ``like``'s very expressions (the copies of a submitted cluster)."""
        if job_id in self.keys or job_id in self.volatile:
            self.forget(job_id)
        self.lookup.note_like(job_id, like)
        key = self.keys.get(like)
        if key is None:
            self.volatile.add(job_id)
        else:
            self.keys[job_id] = key
            self.counts[key] += 1

    def forget(self, job_id: JobId) -> None:
        """The job left the queue (or is about to be noted again)."""
        old = self.keys.pop(job_id, None)
        if old is not None:
            left = self.counts[old] - 1
            if left:
                self.counts[old] = left
            else:
                del self.counts[old]
        self.volatile.discard(job_id)
        self.lookup.forget(job_id)

    def rebuild(self, jobs: Iterable[tuple[JobId, ClassAd]], domain: str, ctx: EvalContext) -> None:
        """Count every job again, under ``domain``."""
        self.domain = domain
        self.keys.clear()
        self.counts.clear()
        self.volatile.clear()
        self.lookup.clear()
        self._last = None
        for job_id, ad in jobs:
            self.note(job_id, ad, ctx)

    def current(self, jobs: dict[JobId, ClassAd], domain: str, ctx: EvalContext) -> Counter[Key]:
        """The counts at the time of ``ctx``: the kept ones and the volatile jobs' as they are now."""
        if domain != self.domain:
            self.rebuild(jobs.items(), domain, ctx)
        if not self.volatile:
            return self.counts
        counts = Counter(self.counts)
        for job_id in self.volatile:
            counts[key_of(jobs[job_id], domain, ctx)] += 1
        return counts

    def by_status(self, jobs: dict[JobId, ClassAd], domain: str, ctx: EvalContext) -> dict[str, int]:
        """The queue's jobs by ``status_key``."""
        out: Counter[str] = Counter()
        for (_, _, status), n in self.current(jobs, domain, ctx).items():
            out[status] += n
        return dict(out)


__all__ = ["OTHER", "JobTally", "Key", "key_of", "status_key"]
