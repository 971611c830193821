"""How the schedd core hands its state to durable storage, and an in-memory store.

The core calls a ``QueueStore`` after every change it accepts: ``save_job``
with the job's whole ad (``save_copies`` for the jobs of a new cluster that are its
proc 0's copies but for their ``ProcId``), ``delete_job`` when a job leaves the queue,
``append_history`` with the ad of a job that left, and ``save_next_cluster``; a
late-materialization factory's state (plain JSON values, ``htcpool.schedd.factory``) goes
to ``save_factory`` at every change and ``delete_factory`` when it leaves.
The live driver implements it over SQLite; ``MemoryStore`` keeps everything
in dictionaries for tests and simulations and can seed a new queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from htcpool.classad import ClassAd

JobId = tuple[int, int]


class QueueStore(Protocol):
    def save_job(self, job_id: JobId, ad: ClassAd) -> None: ...

    def save_copies(self, cluster: int, first: ClassAd, copies: list[tuple[int, ClassAd]]) -> None:
        """Jobs ``(cluster, proc)`` whose ads are ``first`` (the cluster's proc 0, saved before)
        but for a ``ProcId`` of ``proc``: the very expression objects, named and ordered alike."""

    def delete_job(self, job_id: JobId) -> None: ...

    def append_history(self, ad: ClassAd) -> None: ...

    def save_next_cluster(self, cluster_id: int) -> None: ...

    def save_factory(self, cluster_id: int, state: dict[str, Any]) -> None: ...

    def delete_factory(self, cluster_id: int) -> None: ...


@dataclass
class MemoryStore:
    jobs: dict[JobId, ClassAd] = field(default_factory=dict)
    history: list[ClassAd] = field(default_factory=list)
    next_cluster: int = 1
    factories: dict[int, dict[str, Any]] = field(default_factory=dict)

    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        self.jobs[job_id] = ad.copy()

    def save_copies(self, cluster: int, first: ClassAd, copies: list[tuple[int, ClassAd]]) -> None:
        for proc, ad in copies:
            self.jobs[cluster, proc] = ad.copy()

    def delete_job(self, job_id: JobId) -> None:
        self.jobs.pop(job_id, None)

    def append_history(self, ad: ClassAd) -> None:
        self.history.append(ad.copy())

    def save_next_cluster(self, cluster_id: int) -> None:
        self.next_cluster = cluster_id

    def save_factory(self, cluster_id: int, state: dict[str, Any]) -> None:
        self.factories[cluster_id] = dict(state)

    def delete_factory(self, cluster_id: int) -> None:
        self.factories.pop(cluster_id, None)


class NullStore:
    """A store that keeps nothing (benchmarks, throwaway queues)."""

    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        pass

    def save_copies(self, cluster: int, first: ClassAd, copies: list[tuple[int, ClassAd]]) -> None:
        pass

    def delete_job(self, job_id: JobId) -> None:
        pass

    def append_history(self, ad: ClassAd) -> None:
        pass

    def save_next_cluster(self, cluster_id: int) -> None:
        pass

    def save_factory(self, cluster_id: int, state: dict[str, Any]) -> None:
        pass

    def delete_factory(self, cluster_id: int) -> None:
        pass
