"""The shadow's part of the schedd: what the startds say about claims and their jobs.

Claim, activation and deactivation replies go to the claim manager; a partitionable slot's
leftovers are claimed for the submitter's next jobs; release notices evict the job with the
startd's reason; ``JobUpdate`` reports become queue changes (suspended, continued, usage,
provisioned resources, exit, start errors and missed deferral times as holds). Every word from a
startd renews the claim's lease and the job's ``LastJobLeaseRenewal``. A report about a claim this
schedd no longer holds (or not yet, right after a restart) is matched to its job by claim id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ExprTree
from htcpool.protocol import JobUpdate, Ok
from htcpool.protocol import startd as m
from htcpool.runtime.http import RequestRefused
from htcpool.schedd import JobStatus, UnknownClaim
from htcpool.schedd.queue import HOLD_MISSED_DEFERRAL, MISSED_DEFERRAL_REASON
from htcpool.schedd.states import ACTIVE

if TYPE_CHECKING:
    from htcpool.runtime.schedd_service import ScheddService

HOLD_STARTER_ERROR = 6  # HTCondor: the job could not be started


def renew(svc: ScheddService, claim_id: str, now: float) -> tuple[int, int] | None:
    claim = svc.claims.claims.get(claim_id)
    if claim is None or claim.job is None:
        return None
    claim.last_heard = now
    ad = svc.queue.jobs.get(claim.job)
    if ad is not None:
        ad["LastJobLeaseRenewal"] = int(now)
    return claim.job


def from_startd(svc: ScheddService, message: Any, now: float) -> Any:
    try:
        return startd_message(svc, message, now)
    except UnknownClaim:
        return orphan(svc, message, now)


def startd_message(svc: ScheddService, message: Any, now: float) -> Any:
    if isinstance(message, m.ClaimReply):
        claim = svc.claims.claim(message.claim_id)
        submitter = claim.submitter
        if message.accepted and message.slot and claim.slot_ad.get("Name") != message.slot:
            claim.slot_ad = claim.slot_ad.copy()  # a dynamic slot carved from the matched one
            claim.slot_ad["Name"] = message.slot
        svc._send_all(svc.claims.claim_reply(message, now))
        if message.accepted:
            svc._claim_leftovers(message, submitter, now)
        return Ok()
    if isinstance(message, m.ActivateReply):
        claim = svc.claims.claim(message.claim_id)
        job_id = claim.job
        svc._send_all(svc.claims.activate_reply(message, now))
        if message.accepted and job_id is not None and job_id in svc.queue.jobs:
            ad = svc.queue.jobs[job_id]
            ad["ClaimId"] = message.claim_id
            ad["StartdAddress"] = svc.claim_startd.get(message.claim_id, "")
            ad["LastJobLeaseRenewal"] = int(now)
            svc.store.save_job(job_id, ad)
        return Ok()
    if isinstance(message, m.DeactivateReply):
        svc._send_all(svc.claims.deactivate_reply(message, now))
        return Ok()
    if isinstance(message, m.NotifySchedd):
        if message.kind == "release":
            svc.claims.startd_released(message.claim_id, now, message.reason)
            svc._reschedule("a claim ended")
        return Ok()
    if isinstance(message, m.HoldJob):
        job_id = renew(svc, message.claim_id, now)
        if job_id is not None and svc.queue.status(job_id) in ACTIVE:
            svc.queue.hold(job_id, None, now, message.reason, message.code, message.subcode)
        return Ok()
    if isinstance(message, JobUpdate):
        return job_update(svc, message, now)
    raise RequestRefused(400, f"the schedd does not take {type(message).__name__}")


def job_update(svc: ScheddService, u: JobUpdate, now: float) -> Any:
    job_id = renew(svc, u.claim_id, now)
    if job_id is None:
        raise UnknownClaim(u.claim_id)
    ad = svc.queue.jobs[job_id]
    status = svc.queue.status(job_id)
    if u.event == "provisioned":
        for attr, value in u.resources.items():
            ad[attr] = value
        svc.store.save_job(job_id, ad)
    elif u.event == "suspended" and status == JobStatus.RUNNING:
        svc.queue.suspend(job_id, now, max(1, u.processes))
    elif u.event == "continued" and status == JobStatus.SUSPENDED:
        svc.queue.unsuspend(job_id, now)
    elif u.event == "usage":
        _record_usage(ad, u)
        svc.store.save_job(job_id, ad)
        svc.logs.image_size(ad, job_id, u, now)
    elif u.event == "missed_deferral":
        if status in ACTIVE:
            svc.queue.hold(job_id, None, now, MISSED_DEFERRAL_REASON, HOLD_MISSED_DEFERRAL)
        svc._send_all(svc.claims.release(u.claim_id, now))
    elif u.event == "error":
        if status in ACTIVE:
            svc.queue.hold(job_id, None, now, f"Error from starter: {u.message}", HOLD_STARTER_ERROR)
        svc._send_all(svc.claims.release(u.claim_id, now))
    elif u.event == "exited":
        _record_usage(ad, u)
        _record_run(ad, u)
        if not u.killed and status in ACTIVE:
            svc._send_all(svc.claims.job_exited(u.claim_id, now, u.exit_code, u.exit_signal))
    return Ok()


def orphan(svc: ScheddService, message: Any, now: float) -> Any:
    """A startd's message about a claim this schedd no longer holds (or not yet, after a restart)."""
    if isinstance(message, JobUpdate) and message.event == "exited" and not message.killed:
        for job_id, ad in list(svc.queue.jobs.items()):
            if ad.get("ClaimId") == message.claim_id and svc.queue.status(job_id) in ACTIVE:
                svc.queue.finish(job_id, now, message.exit_code, message.exit_signal)
                svc.reconnecting.pop(job_id, None)
    elif isinstance(message, m.ClaimReply) and message.accepted:
        svc.daemon.outbox.post(str(message.leftovers.get("MyAddress", "")) if message.leftovers
                                else svc.claim_startd.get(message.claim_id, ""),
                                m.ReleaseClaim(message.claim_id))
    return Ok("unknown claim")


def _record_usage(ad: ClassAd, u: JobUpdate) -> None:
    if u.image_size_kb:
        ad["ImageSize"] = max(int(u.image_size_kb), _int(ad.get("ImageSize")))
    if u.rss_kb:
        ad["ResidentSetSize"] = int(u.rss_kb)
        ad["MemoryUsage"] = ExprTree("((ResidentSetSize + 1023) / 1024)")
    if u.user_cpu or u.sys_cpu:
        ad["RemoteUserCpu"] = float(u.user_cpu)
        ad["RemoteSysCpu"] = float(u.sys_cpu)


def _record_run(ad: ClassAd, u: JobUpdate) -> None:
    """A finished run's totals, as the shadow adds them to the job ad."""
    ad["ActivationExecutionDuration"] = int(u.wall)
    ad["ActivationDuration"] = int(u.wall)
    ad["CumulativeRemoteUserCpu"] = _number(ad.get("CumulativeRemoteUserCpu")) + float(u.user_cpu)
    ad["CumulativeRemoteSysCpu"] = _number(ad.get("CumulativeRemoteSysCpu")) + float(u.sys_cpu)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
