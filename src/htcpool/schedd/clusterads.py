"""The factories' cluster ads: what condor_q -factory shows of each late-materialization factory.

HTCondor's schedd keeps a cluster ad per factory and answers a query for cluster ads with them;
htcpool keeps the factory's state (``schedd.factory``) and builds the ad when it is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.protocol import AdList
from htcpool.schedd.errors import BadRequest
from htcpool.schedd.factory import Factory, factory_view
from htcpool.schedd.states import JobStatus

if TYPE_CHECKING:
    from htcpool.schedd.queue import JobQueue


def cluster_ad(queue: JobQueue, factory: Factory, now: float) -> ClassAd:
    """The factory's cluster ad, as condor_q -factory shows it: one of its jobs' ads (or its
    next job made afresh) without ``ProcId``, with the factory's attributes, ``JobFactoryPaused``
    (HTCondor's runtime mode: 3 once removed) and the counts of its jobs in the queue
    (``JobsPresent``, ``JobsRunning``, ``JobsIdle``, ``JobsHeld``)."""
    ads = factory_view(queue, factory, now)
    ad = ads[0].copy() if ads else ClassAd({"ClusterId": factory.cluster, "Owner": factory.owner})
    for name in ("ProcId", "JobStatus", "EnteredCurrentStatus", "LastJobStatus"):
        if name in ad:
            del ad[name]
    ad["QDate"] = factory.submitted
    ad.update(factory.attributes())
    ad["JobFactoryPaused"] = 3 if factory.removed else int(factory.mode)
    statuses = [queue.jobs[(factory.cluster, proc)].get("JobStatus") for proc in factory.live]
    ad["JobsPresent"] = len(statuses)
    for name, status in (("JobsRunning", JobStatus.RUNNING), ("JobsIdle", JobStatus.IDLE),
                         ("JobsHeld", JobStatus.HELD)):
        ad[name] = sum(1 for s in statuses if s == status)
    return ad


def cluster_ads(queue: JobQueue, constraint: str, now: float) -> AdList:
    """The cluster ads (``cluster_ad``) of the factories that meet ``constraint``, by cluster;
    BadRequest for a constraint that does not parse."""
    try:
        test = ExprTree(constraint) if constraint else None
    except ClassAdError as e:
        raise BadRequest(f"the constraint {constraint!r} does not parse: {e}") from None
    context = EvalContext(clock=fixed_clock(now))
    ads = (cluster_ad(queue, queue.factories[c], now) for c in sorted(queue.factories))
    return AdList(tuple(ad for ad in ads if test is None or test.evaluate(ad, None, context) is True))


__all__ = ["cluster_ad", "cluster_ads"]
