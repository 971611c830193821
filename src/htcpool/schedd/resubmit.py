"""A Submit sent twice: the second answers as the first did, and queues nothing.

condor_submit reserves its cluster id first (``NewCluster``) and names it in its
``Submit``: the id is the submission's transaction id. A client that lost the answer to a
``Submit`` that did commit (a dropped connection, a timeout) may send it again. The
reservation was used by the first, so without this the retry would be refused and the
user told the submission failed although the jobs are queued. ``already_queued`` sees the
retry: the cluster is in the queue, owned by the same user, with as many procs as the retry
carries; the answer is the first one's, with a warning that nothing more was queued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol import Submitted

if TYPE_CHECKING:
    from htcpool.schedd.queue import JobQueue


def already_queued(queue: JobQueue, owner: str, cluster: int, count: int) -> Submitted | None:
    """The answer to a retried ``Submit`` of ``cluster`` (None: it is not a retry)."""
    if not cluster or cluster in queue.reservations:
        return None
    jobs = queue.jobs
    first = jobs.get((cluster, 0))
    if first is None or first.get("Owner") != owner:
        return None
    procs = 0
    while (cluster, procs) in jobs:
        procs += 1
    if procs != count:
        return None
    return Submitted(cluster, count, (f"cluster {cluster} was already submitted; this retry queued nothing",))


__all__ = ["already_queued"]
