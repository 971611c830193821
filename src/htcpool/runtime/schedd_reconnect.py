"""A restarted schedd finds its running jobs again.

A running job's ad keeps its claim id, its startd's address and the time of the last word from
that startd (``LastJobLeaseRenewal``). After a restart the schedd asks each startd about the claim
(``Reconnect``): a live claim is adopted (Busy; leases and keep-alives start again) and the job
runs on; a claim the startd no longer has sends the job back to Idle; an unreachable startd is
asked again every few seconds until ``LastJobLeaseRenewal + JobLeaseDuration``, then the job goes
back to Idle (HTCondor's job lease).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import httpx

from htcpool.classad import ClassAd
from htcpool.protocol import Reconnect, ReconnectReply
from htcpool.runtime.http import RequestRefused
from htcpool.schedd import JobStatus
from htcpool.schedd.states import ACTIVE

if TYPE_CHECKING:
    from htcpool.runtime.schedd_service import ScheddService

log = logging.getLogger("htcpool.schedd")
RECONNECT_FAILED = "The job's execute point could not be reached within its lease."


async def reconnect_all(svc: ScheddService) -> None:
    now = svc.daemon.clock()
    for job_id, ad in list(svc.queue.jobs.items()):
        if JobStatus(ad.evaluate("JobStatus")) not in ACTIVE:
            continue
        claim_id, startd = ad.get("ClaimId"), ad.get("StartdAddress")
        if not isinstance(claim_id, str) or not isinstance(startd, str):
            requeue(svc, job_id, now, "The schedd restarted and the job's claim was unknown.")
            continue
        try:
            reply = await svc.daemon.client.send(startd, Reconnect(claim_id, svc.name), timeout=3.0)
        except (httpx.HTTPError, OSError, RequestRefused) as e:
            log.info("job %d.%d: startd unreachable (%s); waiting for its lease", *job_id, e)
            svc.reconnecting[job_id] = claim_id
            continue
        if isinstance(reply, ReconnectReply) and reply.alive:
            slot_ad = ClassAd({"Name": reply.slot, "MyAddress": startd})
            svc.claims.adopt(slot_ad, claim_id, job_id, now)
            svc.claim_startd[claim_id] = startd
            log.info("job %d.%d reconnected on %s", *job_id, reply.slot)
        else:
            requeue(svc, job_id, now, "The job's claim was gone when the schedd restarted.")
    svc._flush_logs()


def requeue(svc: ScheddService, job_id: tuple[int, int], now: float, reason: str) -> None:
    if job_id in svc.queue.jobs and svc.queue.status(job_id) in ACTIVE:
        svc.queue.vacate(job_id, None, now, reason)


async def retry_reconnects(svc: ScheddService, now: float) -> None:
    for job_id, claim_id in list(svc.reconnecting.items()):
        ad = svc.queue.jobs.get(job_id)
        if ad is None or svc.queue.status(job_id) not in ACTIVE:
            svc.reconnecting.pop(job_id)
            continue
        startd = str(ad.get("StartdAddress", ""))
        try:
            reply = await svc.daemon.client.send(startd, Reconnect(claim_id, svc.name), timeout=2.0)
        except (httpx.HTTPError, OSError, RequestRefused):
            reply = None
        if isinstance(reply, ReconnectReply):
            svc.reconnecting.pop(job_id)
            if reply.alive and claim_id not in svc.claims.claims:
                svc.claims.adopt(ClassAd({"Name": reply.slot, "MyAddress": startd}), claim_id, job_id, now)
                svc.claim_startd[claim_id] = startd
            else:
                requeue(svc, job_id, now, "The job's claim was gone when the schedd reconnected.")
            continue
        renewed = ad.get("LastJobLeaseRenewal")
        lease = ad.get("JobLeaseDuration")
        lease = lease if isinstance(lease, int) and lease > 0 else 2400
        if not isinstance(renewed, int) or now > renewed + lease:
            svc.reconnecting.pop(job_id)
            requeue(svc, job_id, now, RECONNECT_FAILED)
