"""The schedd's answers to its users: submit, queue queries, and the job commands.

condor_submit first reserves a cluster id (``NewCluster``, answered ``ClusterReserved``)
so that ``$(Cluster)`` expands to it; its cluster then arrives as job ads made by the submit
core on the client, in a ``Submit`` naming the reserved id. The schedd stamps ``TotalSubmitProcs`` and ``User`` (the owner with the accounting domain;
the owner is the identity the runtime authenticated, docs/security.md, so a forged Owner or User
in the ads is overwritten)
and admits the cluster through the queue (transforms, submit requirements), then
advertises its new totals and asks the negotiator for a cycle. Queries answer job ads
without the schedd's private attributes (``public``). condor_hold, _release, _rm,
_vacate_job, _prio, _suspend and _continue act on the jobs a ``JobAction`` names
(``targets``), one handler per ``JobActionKind`` in ``JOB_ACTIONS`` (suspend and continue
are forwarded to the job's startd, which reports back what it did); condor_qedit's
``EditJobs`` is ``edit``'s; a job that holds a claim has the claim
released (hold, vacate) or removed with it (rm). A job the user may not touch, or one
in a state the action does not apply to, is reported in the result's errors; the
others are acted on. Queue super users act as the schedd itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ClassAdError, ExprTree, as_number
from htcpool.classad.classad import to_node
from htcpool.classad.context import request_pool
from htcpool.protocol import (
    ActionResult,
    AdList,
    JobAction,
    JobActionKind,
    QueueQuery,
    Submit,
    Submitted,
)
from htcpool.protocol.schedd import ClusterReserved, EditJobs, NewCluster
from htcpool.protocol.startd import ContinueClaim, SuspendClaim
from htcpool.schedd import localjobs
from htcpool.schedd.edit import on_edit_jobs
from htcpool.schedd.errors import BadRequest, ScheddError
from htcpool.schedd.messages import ToStartd
from htcpool.schedd.resubmit import already_queued
from htcpool.schedd.selection import in_order, matching
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId
from htcpool.schedd.targets import select_jobs

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

#: job attributes the schedd keeps for itself: a claim id is a capability (HTCondor shows only
#: PublicClaimId); the startd's address is reconnection state
PRIVATE_JOB_ATTRS = ("ClaimId", "StartdAddress")
_PRIVATE = frozenset(a.lower() for a in PRIVATE_JOB_ATTRS)


def on_submit(schedd: Schedd, message: Submit, now: float) -> Submitted:
    if not message.ads:
        raise BadRequest("Submit: no job ads")
    retry = already_queued(schedd.queue, message.owner, message.cluster, len(message.ads))
    if retry is not None:  # the same reserved cluster id again: answered, not queued twice
        return retry
    ads = list(message.ads)
    domain = schedd.settings.accounting_domain
    user = f"{message.owner}@{domain}" if domain else message.owner
    # Owner (admission) and User are the authenticated submitter's, never the ads'; one node
    # each, shared by every proc
    extra = (("TotalSubmitProcs", to_node(len(ads))), ("User", to_node(user)))
    cluster, warnings = schedd.queue.submit(message.owner, ads, now, message.cluster, extra)
    schedd.advertise_soon(now)
    schedd.reschedule("new jobs")
    return Submitted(cluster, len(ads), tuple(warnings))


def on_new_cluster(schedd: Schedd, message: NewCluster, now: float) -> ClusterReserved:
    if not message.owner:
        raise BadRequest("NewCluster: no owner")
    return ClusterReserved(schedd.queue.reserve_cluster(message.owner, now))


def on_queue_query(schedd: Schedd, message: QueueQuery, now: float) -> AdList:
    constraint, projection = message.constraint, message.projection
    try:
        test = ExprTree(constraint) if constraint else None
    except ClassAdError as e:
        raise BadRequest(f"the constraint {constraint!r} does not parse: {e}") from None
    out = []
    ctx = dataclasses.replace(schedd.queue.context(now), pool=request_pool())  # bounded work per query
    jobs = schedd.queue.jobs
    wanted: dict[str, str] = {}  # the caller's spelling, the first when given twice
    for a in projection:
        if a.lower() not in _PRIVATE:
            wanted.setdefault(a.lower(), a)
    for ad in matching(in_order(jobs, schedd.queue.tally.lookup, test), test, ctx):
        if projection:
            exprs = ad._exprs
            picked = {key: exprs[key] for key in wanted if key in exprs}
            out.append(ClassAd._from_tables(picked, {key: wanted[key] for key in picked}))
        else:
            out.append(public(ad))
    return AdList(tuple(out))


def on_job_action(schedd: Schedd, message: JobAction, now: float) -> ActionResult:
    try:
        kind = JobActionKind(message.action)
    except ValueError:
        raise BadRequest(f"JobAction.action: expected one of {', '.join(JobActionKind)}, "
                         f"not {message.action!r}") from None
    if not message.targets and not message.constraint:
        raise BadRequest("JobAction: name jobs, clusters or users, or give a constraint")
    try:
        selected = select_jobs(schedd.queue.jobs, message.targets, message.constraint,
                               schedd.queue.context(now))
    except ValueError as e:
        raise BadRequest(str(e)) from None
    act = JOB_ACTIONS[kind]
    user = None if message.user in schedd.settings.queue_super_users else message.user
    done: list[str] = []
    errors: list[str] = []
    for job_id in selected.jobs:
        try:
            act(schedd, job_id, message, user, now)
            done.append(f"{job_id[0]}.{job_id[1]}")
        except ScheddError as e:
            errors.append(f"Job {job_id[0]}.{job_id[1]}: {e}")
    errors.extend(selected.missing)
    if kind is JobActionKind.RELEASE and done:
        schedd.reschedule("jobs released")
    schedd.advertise_soon(now)
    return ActionResult(tuple(done), tuple(errors))


# --------------------------------------------------------------------------- one job, one action
def _remove(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    if schedd.claim_of(job_id) is not None:
        schedd.send_claim_actions(schedd.claims.remove_job(job_id, user, now, a.reason))
    else:
        schedd.queue.remove(job_id, user, now, a.reason)


def _hold(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    claim_id = schedd.claim_of(job_id)
    schedd.queue.hold(job_id, user, now, a.reason or f"via condor_hold (by user {a.user})")
    if claim_id is not None:
        schedd.send_claim_actions(schedd.claims.job_held(claim_id, now))


def _release(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    schedd.queue.release(job_id, user, now, a.reason or f"via condor_release (by user {a.user})")


def _vacate(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    claim_id = schedd.claim_of(job_id)
    if claim_id is None and localjobs.vacate(schedd, job_id, user, now):
        return  # a local or scheduler universe job: its run is stopped
    if claim_id is None or schedd.queue.status(job_id) not in ACTIVE:
        raise ScheddError("the job is not running")
    schedd.queue.authorize(schedd.queue.job(job_id), user)
    schedd.send_claim_actions(schedd.claims.release(claim_id, now))


def _prio(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    current = as_number(schedd.queue.job(job_id).evaluate("JobPrio", schedd.queue.context(now)))
    base = current if isinstance(current, int) else 0
    schedd.queue.set_priority(job_id, user, base + a.value if a.relative else a.value, now)


def _signal_job(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, *, suspend: bool) -> None:
    """condor_suspend / condor_continue: ask the job's startd to stop or resume it. The job becomes
    Suspended (event 010) or Running again (event 011) when the startd reports that it did."""
    ad = schedd.queue.job(job_id)
    schedd.queue.authorize(ad, user)
    status = schedd.queue.status(job_id)
    wanted = JobStatus.RUNNING if suspend else JobStatus.SUSPENDED
    claim_id = schedd.claim_of(job_id)
    if status != wanted or claim_id is None:
        raise ScheddError(f"cannot {a.action} a job that is {status.label}")
    slot = str(schedd.claims.claims[claim_id].slot_ad.get("Name", ""))
    message = SuspendClaim(slot, claim_id) if suspend else ContinueClaim(slot, claim_id)
    schedd.emit(ToStartd(schedd.startd_addresses.get(claim_id, ""), message))


def _suspend(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    _signal_job(schedd, job_id, a, user, suspend=True)


def _continue(schedd: Schedd, job_id: JobId, a: JobAction, user: str | None, now: float) -> None:
    _signal_job(schedd, job_id, a, user, suspend=False)


JobActionHandler = Callable[["Schedd", JobId, JobAction, "str | None", float], None]
JOB_ACTIONS: dict[JobActionKind, JobActionHandler] = {
    JobActionKind.HOLD: _hold,
    JobActionKind.RELEASE: _release,
    JobActionKind.REMOVE: _remove,
    JobActionKind.VACATE: _vacate,
    JobActionKind.PRIO: _prio,
    JobActionKind.SUSPEND: _suspend,
    JobActionKind.CONTINUE: _continue,
}


def public(ad: ClassAd) -> ClassAd:
    """The ad without the private attributes (a copy only when there are some)."""
    if not any(attr in ad for attr in PRIVATE_JOB_ATTRS):
        return ad
    ad = ad.copy()
    for attr in PRIVATE_JOB_ATTRS:
        if attr in ad:
            del ad[attr]
    return ad


HANDLERS: dict[type, Callable[[Schedd, Any, float], Any]] = {
    NewCluster: on_new_cluster,
    Submit: on_submit,
    QueueQuery: on_queue_query,
    JobAction: on_job_action,
    EditJobs: on_edit_jobs,
}

__all__ = ["HANDLERS", "JOB_ACTIONS", "PRIVATE_JOB_ATTRS", "public"]
