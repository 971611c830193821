"""What the schedd offers the negotiator, and what it does with a match.

Rules (the deferral rule itself is ``htcpool.deferral.ready_to_offer``):

* ``FetchRequests``: the idle jobs of the submitters asked for (every submitter when
  none is named), each submitter's best first (``JobQueue.ordered_jobs``), leaving out
  jobs a claim already holds or is being requested for, local and scheduler universe
  jobs (the schedd runs those itself: ``localjobs``), and deferred jobs not yet due
  (``now + SCHEDD_INTERVAL >= DeferralTime - DeferralPrepTime``) or whose deferral
  cannot be evaluated at all (the queue's timer reports those).
* ``MAX_JOBS_RUNNING`` (``limits.may_start_more``): at the limit no job is offered and
  no match or leftovers are taken.
* ``MatchInfo`` is taken only for a job still Idle and a claim id the schedd does not
  hold yet; the schedd then asks the slot's startd (its ``MyAddress``, required) for
  the claim, naming the claims the match preempts. A match the claim manager refuses
  is dropped and the reply says why.
* Leftovers (``CLAIM_PARTITIONABLE_LEFTOVERS``, default true): an accepted claim on a
  partitionable slot comes back with the slot's leftover resources and a claim id for
  them; the schedd claims them at once for the same submitter's best job that may be
  offered and whose Requirements and the leftovers' hold both ways. A slot with a
  consumption policy sends none: each negotiator match of it has its own claim id, and
  what is left is shared by the negotiator's next cycle.
* ``for_startd``: a claim request or an activation carries the submitter's accounting
  name in ``AccountingGroup`` (with the accounting domain) when the job has one, as
  the startd advertises and charges it.
* ``deferred_due``: whether some idle deferred job may now be offered, so the
  negotiator is asked for a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ClassAdError
from htcpool.classad.match import requirements_hold
from htcpool.deferral import ready_to_offer
from htcpool.protocol import FetchRequests, IdleJobs, MatchInfo, Ok
from htcpool.protocol.startd import ActivateClaim, ClaimReply, RequestClaim
from htcpool.schedd.claims import ClaimAction, negotiated_attributes
from htcpool.schedd.errors import BadRequest, ScheddError
from htcpool.schedd.limits import may_start_more
from htcpool.schedd.states import JobStatus
from htcpool.schedd.store import JobId

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

#: the field of each message that carries the job ad to the startd
_JOB_FIELD: dict[type, str] = {RequestClaim: "request", ActivateClaim: "job"}


def jobs_on_claims(schedd: Schedd) -> AbstractSet[JobId]:
    """Jobs a claim holds or is being requested for: not to be offered again (kept by the claims
    table as claims change, not walked for)."""
    return schedd.claims.claims.held_jobs()  # type: ignore[return-value]


def offerable(schedd: Schedd, submitter: str, now: float,
              reserved: AbstractSet[JobId] | None = None) -> Iterator[JobId]:
    """The submitter's idle jobs that may be offered now, best first, found as they are
    needed (``reserved``: the jobs on claims, when the caller has them)."""
    reserved = jobs_on_claims(schedd) if reserved is None else reserved
    interval = schedd.settings.schedd_interval
    jobs = schedd.queue.jobs
    here = schedd.local.tracked  # local and scheduler universe jobs: the schedd runs them itself
    return (job_id for job_id in schedd.queue.ordered_jobs(submitter)
            if job_id not in reserved and job_id not in here and _may_offer(jobs[job_id], now, interval))


def _may_offer(job: ClassAd, now: float, interval: float) -> bool:
    try:
        return ready_to_offer(job, now, interval)
    except ClassAdError:
        return False


def on_fetch_requests(schedd: Schedd, message: FetchRequests, now: float) -> IdleJobs:
    wanted = set(message.submitters)
    submitters: list[str] = []
    ads: list[ClassAd] = []
    reserved = jobs_on_claims(schedd)
    if not may_start_more(schedd):  # MAX_JOBS_RUNNING reached (``limits``): nothing to offer
        return IdleJobs((), ())
    for submitter in schedd.queue.submitters():
        if wanted and submitter not in wanted:
            continue
        for job_id in offerable(schedd, submitter, now, reserved):
            submitters.append(submitter)
            ads.append(schedd.queue.jobs[job_id])
    return IdleJobs(tuple(submitters), tuple(ads))


def on_match(schedd: Schedd, message: MatchInfo, now: float) -> Ok:
    job_id = (message.cluster, message.proc)
    address = message.slot_ad.get("MyAddress")
    if not isinstance(address, str):
        raise BadRequest("MatchInfo: the slot ad has no MyAddress")
    queue = schedd.queue
    if job_id not in queue.jobs or queue.status(job_id) != JobStatus.IDLE \
            or message.claim_id in schedd.claims.claims:
        return Ok("match not taken")
    if not may_start_more(schedd):
        return Ok("match not taken: MAX_JOBS_RUNNING reached")
    schedd.startd_addresses[message.claim_id] = address
    try:
        negotiated = negotiated_attributes(message.group, message.negotiating_group, message.autoregroup)
        actions = schedd.claims.match(message.slot_ad, message.claim_id, job_id, now, negotiated)
    except ScheddError as e:
        return Ok(f"match for {job_id[0]}.{job_id[1]} dropped: {e}")
    schedd.send_claim_actions([replace(a, preempt_claim_ids=message.preempt_claim_ids)
                               if isinstance(a, RequestClaim) else a for a in actions])
    return Ok()


def claim_leftovers(schedd: Schedd, reply: ClaimReply, submitter: str, now: float) -> None:
    """Claim the leftovers of a partitionable slot for the submitter's next job, if one fits."""
    leftovers = reply.leftovers
    if not schedd.settings.claim_partitionable_leftovers or leftovers is None or not may_start_more(schedd):
        return
    claim_id, address = leftovers.get("ClaimId"), leftovers.get("MyAddress")
    if not isinstance(claim_id, str) or not isinstance(address, str) or claim_id in schedd.claims.claims:
        return
    ctx = schedd.queue.context(now)
    for job_id in offerable(schedd, submitter, now):
        job = schedd.queue.jobs[job_id]
        if requirements_hold(job, leftovers, ctx) and requirements_hold(leftovers, job, ctx):
            schedd.startd_addresses[claim_id] = address
            schedd.send_claim_actions(schedd.claims.match(leftovers, claim_id, job_id, now))
            return


def for_startd(schedd: Schedd, action: ClaimAction) -> ClaimAction:
    """The message as the startd gets it: with the claim's accounting name (see the rules)."""
    field = _JOB_FIELD.get(type(action))
    if field is None:
        return action
    claim = schedd.claims.claims.get(action.claim_id)
    job: ClassAd = getattr(action, field)
    if claim is None or "AccountingGroup" not in job or job.get("AccountingGroup") == claim.submitter:
        return action
    job = job.copy()
    job["AccountingGroup"] = claim.submitter
    return replace(action, **{field: job})  # type: ignore[arg-type]


def deferred_due(schedd: Schedd, now: float) -> bool:
    """Whether an idle job with a ``DeferralTime`` may be offered now."""
    interval = schedd.settings.schedd_interval
    ctx = schedd.queue.context(now)
    return any("DeferralTime" in ad and JobStatus(ad.evaluate("JobStatus", ctx)) == JobStatus.IDLE
               and _may_offer(ad, now, interval) for ad in schedd.queue.jobs.values())


HANDLERS: dict[type, Callable[[Schedd, Any, float], Any]] = {
    FetchRequests: on_fetch_requests,
    MatchInfo: on_match,
}

__all__ = ["HANDLERS", "claim_leftovers", "deferred_due", "for_startd", "jobs_on_claims", "offerable"]
