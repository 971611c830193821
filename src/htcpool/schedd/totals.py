"""condor_q -totals answered from the queue without sending a job ad.

HTCondor's condor_q prints, under ``-totals``, only the summary lines ("Total for
query", "Total for all users"): counts of jobs by state. Sending 10,000 ads to count
them costs the schedd their encoding and the tool their decoding; ``queue_totals``
counts in the schedd instead. The whole queue's counts are the ones the queue keeps as
jobs enter, change and leave (``tally``); so are those of one cluster or one owner
(``ClusterId == 12``, ``Owner == "alice"``: ``jobindex``). Any other constraint is evaluated
on the jobs it can be true for, as a ``QueueQuery`` would.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from htcpool.classad import ClassAd, ClassAdError, ExprTree
from htcpool.classad.context import request_pool
from htcpool.classad.nodes import Literal
from htcpool.protocol.schedd import QueueCounts, QueueTotals
from htcpool.schedd.errors import BadRequest
from htcpool.schedd.queue import JobQueue
from htcpool.schedd.selection import candidates, matching
from htcpool.schedd.tally import OTHER, status_key


def count_by_status(ads: Iterable[ClassAd]) -> dict[str, int]:
    """Counts by ``status_key``; a literal status shared by many jobs (a cluster's) is read once."""
    by_node: Counter[int] = Counter()
    keys: dict[int, str] = {}
    counts: Counter[str] = Counter()
    for ad in ads:
        node = ad._exprs.get("jobstatus")
        if type(node) is Literal:
            ident = id(node)
            by_node[ident] += 1
            if ident not in keys:
                keys[ident] = status_key(ad)
        else:
            counts[status_key(ad)] += 1
    for ident, n in by_node.items():
        counts[keys[ident]] += n
    return dict(counts)


def queue_totals(queue: JobQueue, message: QueueTotals, now: float) -> QueueCounts:
    """The counts by ``JobStatus`` of the jobs that meet the constraint and of every job."""
    ctx = queue.context(now)
    everything = queue.tally.by_status(queue.jobs, queue.settings.accounting_domain, ctx)
    name, address = queue.settings.schedd_name, queue.settings.schedd_address
    if not message.constraint:
        return QueueCounts(everything, everything, name, address)
    try:
        test = ExprTree(message.constraint)
    except ClassAdError as e:
        raise BadRequest(f"the constraint {message.constraint!r} does not parse: {e}") from None
    selected = queue.tally.lookup.counts(test.node)  # ``Owner == "alice"``: counts kept by owner
    if selected is None:
        ctx = dataclasses.replace(ctx, pool=request_pool())  # bounded work per query
        selected = count_by_status(matching(candidates(queue.jobs, queue.tally.lookup, test), test, ctx))
    return QueueCounts(selected, everything, name, address)


__all__ = ["OTHER", "count_by_status", "queue_totals", "status_key"]
