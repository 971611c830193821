"""The job's own policy expressions, evaluated at the schedd.

``periodic_action`` follows HTCondor's order (first that fires decides):
for running or suspended jobs ``AllowedJobDuration``, ``AllowedExecuteDuration``
and ``PeriodicVacate``; then ``PeriodicHold`` (jobs neither held nor completed);
``PeriodicRelease`` (held jobs not held by their owner, while ``NumHolds`` is
below ``SYSTEM_MAX_RELEASES`` when that is set); ``PeriodicRemove``.
``exit_action`` adds ``OnExitHold`` then ``OnExitRemove`` at job exit: only
a value that is false keeps the job (requeue). An undefined result never fires.
Hold reasons are HTCondor's wording with code 3 (JobPolicy) unless the job
gives ``…HoldReason``/``…HoldSubCode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.errors import ClassAdError
from htcpool.classad.unparse import unparse_old
from htcpool.schedd.states import ACTIVE, JobStatus

JOB_POLICY = 3
USER_REQUEST = 1


class PolicyKind(StrEnum):
    """What a policy expression decides for a job."""

    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    VACATE = "vacate"
    REQUEUE = "requeue"  # at exit only: back to Idle
    COMPLETE = "complete"  # at exit only: the job is done


@dataclass(frozen=True)
class PolicyAction:
    kind: PolicyKind
    reason: str = ""
    code: int = 0
    subcode: int = 0


def _fires(ad: ClassAd, attr: str, context: EvalContext) -> bool:
    if attr.lower() not in ad._exprs:
        return False
    try:
        value = ad.evaluate(attr, context)
    except ClassAdError:
        return False
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value != 0


def _reason(ad: ClassAd, attr: str, context: EvalContext) -> str:
    return f"The job attribute {attr} expression '{unparse_old(ad._exprs[attr.lower()])}' evaluated to TRUE"


def _hold(ad: ClassAd, attr: str, context: EvalContext) -> PolicyAction:
    reason = _reason(ad, attr, context)
    custom = ad.evaluate(attr + "Reason", context) if (attr + "reason").lower() in ad._exprs else None
    if isinstance(custom, str) and custom:
        reason = custom
    sub = ad.evaluate(attr + "SubCode", context) if (attr + "subcode").lower() in ad._exprs else 0
    return PolicyAction(PolicyKind.HOLD, reason, JOB_POLICY, sub if isinstance(sub, int) else 0)


def periodic_action(ad: ClassAd, now: float, context: EvalContext,
                    system_max_releases: int = -1) -> PolicyAction | None:
    status = JobStatus(ad.evaluate("JobStatus", context))
    if status in ACTIVE:
        started = ad.evaluate("JobCurrentStartDate", context)
        for attr, code in (("AllowedJobDuration", 46), ("AllowedExecuteDuration", 47)):
            limit = ad.evaluate(attr, context)
            if isinstance(limit, int) and isinstance(started, int) and now - started > limit:
                what = "job" if code == 46 else "execute"
                return PolicyAction(PolicyKind.HOLD, f"The job exceeded allowed {what} duration of {limit}", code)
        if _fires(ad, "PeriodicVacate", context):
            return PolicyAction(PolicyKind.VACATE, _reason(ad, "PeriodicVacate", context), JOB_POLICY)
    if status not in (JobStatus.HELD, JobStatus.COMPLETED, JobStatus.REMOVED) and _fires(ad, "PeriodicHold", context):
        return _hold(ad, "PeriodicHold", context)
    if status == JobStatus.HELD and ad.evaluate("HoldReasonCode", context) != USER_REQUEST:
        holds = ad.evaluate("NumHolds", context)
        if (system_max_releases < 0 or not isinstance(holds, int) or holds < system_max_releases) \
                and _fires(ad, "PeriodicRelease", context):
            return PolicyAction(PolicyKind.RELEASE, _reason(ad, "PeriodicRelease", context))
    if status != JobStatus.REMOVED and _fires(ad, "PeriodicRemove", context):
        return PolicyAction(PolicyKind.REMOVE, _reason(ad, "PeriodicRemove", context), JOB_POLICY)
    return None


def exit_action(ad: ClassAd, now: float, context: EvalContext) -> PolicyAction:
    """What happens when the job exits: hold, requeue (back to Idle) or complete."""
    periodic = periodic_action(ad, now, context)
    if periodic is not None and periodic.kind in (PolicyKind.HOLD, PolicyKind.REMOVE):
        return periodic
    if _fires(ad, "OnExitHold", context):
        return _hold(ad, "OnExitHold", context)
    if "onexitremove" in ad._exprs:
        try:
            value = ad.evaluate("OnExitRemove", context)
        except ClassAdError:
            value = True
        if value is False or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
            return PolicyAction(PolicyKind.REQUEUE)
    return PolicyAction(PolicyKind.COMPLETE)


__all__ = ["JOB_POLICY", "PolicyAction", "PolicyKind", "exit_action", "periodic_action"]
