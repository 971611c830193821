"""Claims: who holds a slot, its lease, its job, and the retirement arithmetic.

A slot always owns a *current* claim object whose id it advertises privately (the
negotiator hands that id to the schedd with the match). A Claimed slot also owns a
pre-made id for a *preempting* claim; a better request arriving with that id becomes
the pending preempting claim (``Slot.preempting``).

Retirement (``retirement_remaining``): the slot's ``MaxJobRetirementTime``
(evaluated against the job), lowered - never raised - by the job's own
``MaxJobRetirementTime``, minus the job's run time so far, where time spent suspended
does not count. Vacate time (``max_vacate_time``): ``MachineMaxVacateTime``, or the
job's ``JobMaxVacateTime`` when lower; a larger job value may borrow from retirement
still left. Retirement has *expired* when nothing remains or the vacate time covers
what remains, so that the hard kill lands at the end of retirement.

What a claimed slot publishes of its claim's request (``published_request_attrs``, HTCondor 25's
``Claim::loadRequestInfo`` and ``Claim::publish``): the request's ``RemoteGroup`` and, when the
negotiator named the group it negotiated for, ``RemoteNegotiatingGroup`` and
``RemoteAutoregroup``; and the job's ``ConcurrencyLimits`` evaluated against the slot (MY = job,
TARGET = slot), so the negotiator can count the limits of running jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.classad import ClassAd, ClassAdError, EvalContext, as_number
from htcpool.startd.policy import eval_float

INFINITE = float(2**31 - 1)
NEGATIVE_LEASE_FALLBACK = 1200.0


@dataclass(slots=True)
class Claim:
    """One claim on a slot."""

    id: str
    request: ClassAd | None = None
    schedd: str = ""
    rank: float = 0.0
    begin: float | None = None
    lease: float = 0.0
    lease_expires: float | None = None
    match_deadline: float | None = None
    job: ClassAd | None = None
    job_start: float | None = None
    activations: int = 0
    #: the job last activated on the claim (``cluster.proc``), kept after it exits
    last_job: str = ""
    suspended_since: float | None = None
    suspended_total: float = 0.0
    preempt_was_true: bool = False
    may_unretire: bool = True
    peaceful: bool = False
    vacate_reason: str = ""
    accepted_while_draining: bool = False
    pledged_vacate_time: float = 600.0
    schedd_closed: bool = False
    command_suspended: bool = False
    #: a deferred job's start time while the start is held (``activation``); None once started
    start_at: float | None = None
    #: taken on a Backfill slot whose client is still being killed: the schedd is answered when
    #: the slot is Claimed (HTCondor's request_claim finishes the claiming protocol once the
    #: backfill is gone), or refused if the slot goes to Owner instead
    reply_waiting: bool = False

    def user(self) -> str | None:
        ad = self.job or self.request
        if ad is None:
            return None
        for attr in ("User", "Owner"):
            v = ad.get(attr)
            if isinstance(v, str):
                return v
        return None

    def start_lease(self, alive_interval: float, alives_missed: int, now: float) -> None:
        """Lease = JobLeaseDuration of the request when present, else alives-missed × interval."""
        lease = alive_interval * alives_missed
        if self.request is not None:
            jld = as_number(self.request.get("JobLeaseDuration"))
            if jld:
                lease = float(jld)
        if lease < 0:
            lease = NEGATIVE_LEASE_FALLBACK
        self.lease = lease
        self.lease_expires = now + lease

    def renew(self, now: float) -> None:
        if self.lease_expires is not None:
            self.lease_expires = now + self.lease

    def job_run_time(self, now: float) -> float:
        """Seconds the current job has run, not counting time suspended."""
        if self.job_start is None:
            return 0.0
        suspended = self.suspended_total
        if self.suspended_since is not None:
            suspended += now - self.suspended_since
        return max(0.0, now - self.job_start - suspended)


#: the claim attributes a claimed slot publishes from its request (and removes with the claim)
REQUEST_ATTRS = ("RemoteGroup", "RemoteNegotiatingGroup", "RemoteAutoregroup", "ConcurrencyLimits")


def published_request_attrs(claim: Claim, slot_ad: ClassAd, ctx: EvalContext) -> dict[str, object]:
    """The ``REQUEST_ATTRS`` the claimed slot's ad carries (see the module's rules)."""
    out: dict[str, object] = {}
    request = claim.request
    if request is not None:
        group = request.get("RemoteGroup")
        if isinstance(group, str) and group:
            out["RemoteGroup"] = group
        negotiating = request.get("RemoteNegotiatingGroup")
        if isinstance(negotiating, str) and negotiating:
            out["RemoteNegotiatingGroup"] = negotiating
            out["RemoteAutoregroup"] = request.get("RemoteAutoregroup") is True
    ad = claim.job or request
    if ad is not None and "ConcurrencyLimits" in ad:
        try:
            limits = ad.evaluate("ConcurrencyLimits", ctx, slot_ad)
        except ClassAdError:
            limits = None
        if isinstance(limits, str) and limits:
            out["ConcurrencyLimits"] = limits
    return out


def max_job_retirement_time(slot_ad: ClassAd, job: ClassAd | None, ctx: EvalContext) -> float:
    """The slot's MaxJobRetirementTime against the job, lowered by the job's own value."""
    mjrt = eval_float(slot_ad.evaluate("MaxJobRetirementTime", ctx, job)) or 0.0
    if job is not None and "MaxJobRetirementTime" in job:
        own = eval_float(job.evaluate("MaxJobRetirementTime", ctx, slot_ad))
        if own is not None and own < mjrt:
            mjrt = own
    return mjrt


def retirement_remaining(claim: Claim, mjrt: float, now: float) -> float:
    """Seconds of retirement left for the claim's job (0 when no job is active)."""
    if claim.job is None or claim.job_start is None:
        return 0.0
    return max(0.0, mjrt - claim.job_run_time(now))


def max_vacate_time(claim: Claim, machine_value: float, remaining: float, ctx: EvalContext,
                    slot_ad: ClassAd) -> float:
    """Vacate grace period: the machine's pledge, the job's lower wish, or borrowed retirement."""
    job = claim.job
    if job is None:
        return machine_value
    job_value = None
    for attr in ("JobMaxVacateTime", "KillSigTimeout"):
        if attr in job:
            job_value = eval_float(job.evaluate(attr, ctx, slot_ad))
            if job_value is not None:
                break
    if job_value is None:
        return machine_value
    if job_value <= machine_value:
        return max(0.0, job_value)
    return max(machine_value, min(job_value, remaining))


def retirement_expired(remaining: float, vacate_time: float) -> bool:
    return remaining <= 0 or vacate_time >= remaining
