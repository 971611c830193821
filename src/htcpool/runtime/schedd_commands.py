"""The schedd's answers to its users: submit, queue queries, and the job commands.

condor_submit's cluster arrives as job ads made by the submit core on the client; the schedd
stamps ``TotalSubmitProcs`` and ``User``, admits the cluster through the queue core (transforms,
submit requirements) inside one durable transaction, and asks for a negotiation. Queries answer
job ads without the schedd's private attributes (claim ids). condor_hold, _release, _rm,
_vacate_job and _prio act on the jobs a ``JobAction`` names (``jobtargets``); a job that holds a
claim has the claim released or removed with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, ClassAdError, ExprTree
from htcpool.protocol import ActionResult, JobAction, Submit, Submitted
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.jobtargets import select_jobs
from htcpool.schedd import ScheddError
from htcpool.schedd.states import ACTIVE

if TYPE_CHECKING:
    from htcpool.runtime.schedd_service import ScheddService

JOB_ACTIONS = ("hold", "release", "remove", "vacate", "prio")
#: job attributes the schedd keeps for itself: a claim id is a capability (HTCondor shows only
#: PublicClaimId); the startd's address is reconnection state
PRIVATE_JOB_ATTRS = frozenset({"claimid", "startdaddress"})


def submit(svc: ScheddService, message: Submit, now: float) -> Submitted:
    if not message.ads:
        raise RequestRefused(400, "Submit: no job ads")
    ads = list(message.ads)
    user = f"{message.owner}@{svc.settings.accounting_domain}" if svc.settings.accounting_domain \
        else message.owner
    for ad in ads:
        ad["TotalSubmitProcs"] = len(ads)
        if "User" not in ad:
            ad["User"] = user
    try:
        with svc.store.batch():
            cluster, warnings = svc.queue.submit(message.owner, ads, now)
    except ScheddError as e:
        raise RequestRefused(400, str(e)) from None
    svc._advertise(now)
    svc._reschedule("new jobs")
    return Submitted(cluster, len(message.ads), tuple(warnings))


def query(svc: ScheddService, constraint: str, projection: tuple[str, ...], now: float) -> list[ClassAd]:
    try:
        test = ExprTree(constraint) if constraint else None
    except ClassAdError as e:
        raise RequestRefused(400, f"the constraint {constraint!r} does not parse: {e}") from None
    out = []
    ctx = svc._ctx(now)
    for _job_id, ad in sorted(svc.queue.jobs.items()):
        if test is not None and test.evaluate(ad, None, ctx) is not True:
            continue
        if projection:
            out.append(ClassAd({a: ad.lookup(a) for a in projection
                                if a in ad and a.lower() not in PRIVATE_JOB_ATTRS}))
        else:
            out.append(public(ad))
    return out


def job_action(svc: ScheddService, message: JobAction, now: float) -> ActionResult:
    if message.action not in JOB_ACTIONS:
        raise RequestRefused(400, f"JobAction.action: expected one of {', '.join(JOB_ACTIONS)}, "
                                  f"not {message.action!r}")
    if not message.targets and not message.constraint:
        raise RequestRefused(400, "JobAction: name jobs, clusters or users, or give a constraint")
    try:
        selected = select_jobs(svc.queue.jobs, message.targets, message.constraint, svc._ctx(now))
    except ValueError as e:
        raise RequestRefused(400, str(e)) from None
    done: list[str] = []
    errors: list[str] = []
    user = None if message.user in svc.settings.queue_super_users else message.user
    for job_id in selected.jobs:
        try:
            act_on(svc, job_id, message, user, now)
            done.append(f"{job_id[0]}.{job_id[1]}")
        except ScheddError as e:
            errors.append(f"Job {job_id[0]}.{job_id[1]}: {e}")
    errors.extend(selected.missing)
    if message.action in ("release",) and done:
        svc._reschedule("jobs released")
    svc._advertise(now)
    return ActionResult(tuple(done), tuple(errors))


def claim_of(svc: ScheddService, job_id: tuple[int, int]) -> str | None:
    return next((cid for cid, c in svc.claims.claims.items() if c.job == job_id), None)


def act_on(svc: ScheddService, job_id: tuple[int, int], a: JobAction, user: str | None, now: float) -> None:
    claim_id = claim_of(svc, job_id)
    if a.action == "remove":
        if claim_id is not None:
            svc._send_all(svc.claims.remove_job(job_id, user, now, a.reason))
        else:
            svc.queue.remove(job_id, user, now, a.reason)
    elif a.action == "hold":
        svc.queue.hold(job_id, user, now, a.reason or f"via condor_hold (by user {a.user})")
        if claim_id is not None:
            svc._send_all(svc.claims.release(claim_id, now))
    elif a.action == "release":
        svc.queue.release(job_id, user, now, a.reason or f"via condor_release (by user {a.user})")
    elif a.action == "vacate":
        if claim_id is None or svc.queue.status(job_id) not in ACTIVE:
            raise ScheddError("the job is not running")
        svc.queue._authorize(svc.queue.job(job_id), user)
        svc._send_all(svc.claims.release(claim_id, now))
    elif a.action == "prio":
        ad = svc.queue.job(job_id)
        current = ad.evaluate("JobPrio")
        base = current if isinstance(current, int) and not isinstance(current, bool) else 0
        svc.queue.set_priority(job_id, user, base + a.value if a.relative else a.value, now)
    else:
        raise RequestRefused(400, f"unknown job action {a.action!r}")


def public(ad: ClassAd) -> ClassAd:
    """The ad without the private attributes (a copy only when there are some)."""
    if "ClaimId" not in ad and "StartdAddress" not in ad:
        return ad
    ad = ad.copy()
    for attr in ("ClaimId", "StartdAddress"):
        if attr in ad:
            del ad[attr]
    return ad
