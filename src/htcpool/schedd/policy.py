"""The job policy expressions, the job's own and the pool's, evaluated at the schedd.

``periodic_action`` follows HTCondor's order ("Job Policy" in the manual's user
guide and the ``SYSTEM_PERIODIC_*`` knobs of the schedd's configuration); the
first rule that fires decides:

1. Running or suspended jobs: ``AllowedJobDuration`` (code 46),
   ``AllowedExecuteDuration`` (code 47), then ``PeriodicVacate`` and the system's
   vacate expressions.
2. ``TimerRemove``: a time after which the job leaves the queue.
3. Jobs neither held nor completed: ``PeriodicHold``, then the system's holds.
4. Held jobs not held by their owner (code 1), while ``NumHolds`` is below
   ``SYSTEM_MAX_RELEASES`` when that is set: ``PeriodicRelease``, then the system's.
5. Any job: ``PeriodicRemove``, then the system's removes.

At each step the job's own attribute is evaluated before the configuration's
expressions (``SYSTEM_PERIODIC_<K>_<Name>`` in ``SYSTEM_PERIODIC_<K>_NAMES``
order, then the nameless ``SYSTEM_PERIODIC_<K>``): a number or boolean other
than zero fires, anything else (undefined, a string, an error) does not. A job
expression that fires gives code 3 (JobPolicy) with the job's ``<Attr>Reason``
and ``<Attr>SubCode`` when it has them; a system expression gives code 26
(SystemPolicy) with its ``_REASON`` and ``_SUBCODE`` knobs, evaluated against
the job. Without a reason the text names the expression and what it said.

``exit_action`` adds ``OnExitHold`` then ``OnExitRemove`` at job exit after the
periodic hold and remove: only an ``OnExitRemove`` that is false keeps the job
(requeue).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import Node
from htcpool.classad.unparse import unparse_old
from htcpool.schedd.states import ACTIVE, JobStatus

USER_REQUEST = 1
JOB_POLICY = 3
SYSTEM_POLICY = 26
JOB_DURATION_EXCEEDED = 46
EXECUTE_DURATION_EXCEEDED = 47


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


@dataclass(frozen=True)
class SystemExpression:
    """One ``SYSTEM_PERIODIC_<K>[_<Name>]`` knob, parsed, with its ``_REASON``/``_SUBCODE``."""

    knob: str  # the knob the expression came from
    label: str  # the name HTCondor's default reason gives it (the nameless knob's)
    text: str
    expr: Node
    reason: Node | None = None
    subcode: Node | None = None


@dataclass
class SystemPolicy:
    """The configuration's periodic expressions, each kind in evaluation order."""

    hold: list[SystemExpression] = field(default_factory=list)
    release: list[SystemExpression] = field(default_factory=list)
    remove: list[SystemExpression] = field(default_factory=list)
    vacate: list[SystemExpression] = field(default_factory=list)


NO_SYSTEM_POLICY = SystemPolicy()


def _true(value: object) -> bool:
    """HTCondor's test: a number (booleans included) that is not zero once truncated."""
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and int(value) != 0


def _fires(ad: ClassAd, attr: str, context: EvalContext) -> bool:
    if attr.lower() not in ad._exprs:
        return False
    try:
        return _true(ad.evaluate(attr, context))
    except ClassAdError:
        return False


def _job_rule(ad: ClassAd, attr: str, kind: PolicyKind, context: EvalContext) -> PolicyAction | None:
    """The job's own ``attr`` as a decision of ``kind`` when it fires."""
    if not _fires(ad, attr, context):
        return None
    reason = f"The job attribute {attr} expression '{unparse_old(ad._exprs[attr.lower()])}' evaluated to TRUE"
    try:
        custom = ad.evaluate(attr + "Reason", context) if (attr + "reason").lower() in ad._exprs else None
        sub = ad.evaluate(attr + "SubCode", context) if (attr + "subcode").lower() in ad._exprs else 0
    except ClassAdError:
        custom, sub = None, 0
    return _action(kind, reason, JOB_POLICY, custom, sub)


def _action(kind: PolicyKind, reason: str, code: int, custom: object, sub: object) -> PolicyAction:
    """A decision with the default ``reason`` unless the policy gave a text, and its subcode."""
    if isinstance(custom, str) and custom:
        reason = custom
    subcode = int(sub) if isinstance(sub, (int, float)) and not isinstance(sub, bool) else 0
    return PolicyAction(kind, reason, code, subcode)


def _system_rule(ad: ClassAd, rules: list[SystemExpression], kind: PolicyKind,
                 context: EvalContext) -> PolicyAction | None:
    """The first of the configuration's ``rules`` that fires for the job, as a decision."""
    for rule in rules:
        try:
            if not _true(ad._evaluate_node(rule.expr, None, context)):
                continue
        except ClassAdError:
            continue
        reason = f"The system macro {rule.label} expression '{rule.text}' evaluated to TRUE"
        try:
            custom = ad._evaluate_node(rule.reason, None, context) if rule.reason is not None else None
            sub = ad._evaluate_node(rule.subcode, None, context) if rule.subcode is not None else 0
        except ClassAdError:
            custom, sub = None, 0
        return _action(kind, reason, SYSTEM_POLICY, custom, sub)
    return None


def _either(ad: ClassAd, attr: str, rules: list[SystemExpression], kind: PolicyKind,
            context: EvalContext) -> PolicyAction | None:
    """The job's own expression first, then the system's (HTCondor's order)."""
    return _job_rule(ad, attr, kind, context) or (
        _system_rule(ad, rules, kind, context) if rules else None)


def _durations(ad: ClassAd, now: float, context: EvalContext) -> PolicyAction | None:
    started = ad.evaluate("JobCurrentStartDate", context)
    for attr, code, what in (("AllowedJobDuration", JOB_DURATION_EXCEEDED, "job"),
                             ("AllowedExecuteDuration", EXECUTE_DURATION_EXCEEDED, "execute")):
        limit = ad.evaluate(attr, context)
        if isinstance(limit, int) and isinstance(started, int) and now - started > limit:
            return PolicyAction(PolicyKind.HOLD, f"The job exceeded allowed {what} duration of {limit}", code)
    return None


def _timer_remove(ad: ClassAd, now: float, context: EvalContext) -> PolicyAction | None:
    if "timerremove" not in ad._exprs:
        return None
    when = ad.evaluate("TimerRemove", context)
    if isinstance(when, int) and not isinstance(when, bool) and 0 <= when < now:
        text = unparse_old(ad._exprs["timerremove"])
        return PolicyAction(PolicyKind.REMOVE, f"The job attribute TimerRemove expression '{text}' evaluated to TRUE",
                            JOB_POLICY)
    return None


def periodic_action(ad: ClassAd, now: float, context: EvalContext, system_max_releases: int = -1,
                    system: SystemPolicy = NO_SYSTEM_POLICY) -> PolicyAction | None:
    """The periodic decision for one job at ``now`` (see the module docstring), or None."""
    status = JobStatus(ad.evaluate("JobStatus", context))
    if status == JobStatus.REMOVED:
        return None
    if status in ACTIVE:
        action = _durations(ad, now, context) or _either(ad, "PeriodicVacate", system.vacate,
                                                         PolicyKind.VACATE, context)
        if action is not None:
            return action
    action = _timer_remove(ad, now, context)
    if action is not None:
        return action
    if status not in (JobStatus.HELD, JobStatus.COMPLETED):
        action = _either(ad, "PeriodicHold", system.hold, PolicyKind.HOLD, context)
        if action is not None:
            return action
    if status == JobStatus.HELD and ad.evaluate("HoldReasonCode", context) != USER_REQUEST:
        holds = ad.evaluate("NumHolds", context)
        if system_max_releases < 0 or not isinstance(holds, int) or holds < system_max_releases:
            action = _either(ad, "PeriodicRelease", system.release, PolicyKind.RELEASE, context)
            if action is not None:
                return action
    return _either(ad, "PeriodicRemove", system.remove, PolicyKind.REMOVE, context)


def exit_action(ad: ClassAd, now: float, context: EvalContext, system_max_releases: int = -1,
                system: SystemPolicy = NO_SYSTEM_POLICY) -> PolicyAction:
    """What happens when the job exits: hold, requeue (back to Idle) or complete."""
    periodic = periodic_action(ad, now, context, system_max_releases, system)
    if periodic is not None and periodic.kind in (PolicyKind.HOLD, PolicyKind.REMOVE):
        return periodic
    held = _job_rule(ad, "OnExitHold", PolicyKind.HOLD, context)
    if held is not None:
        return held
    if "onexitremove" in ad._exprs:
        try:
            value = ad.evaluate("OnExitRemove", context)
        except ClassAdError:
            value = True
        if value is False or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
            return PolicyAction(PolicyKind.REQUEUE)
    return PolicyAction(PolicyKind.COMPLETE)


__all__ = ["JOB_POLICY", "NO_SYSTEM_POLICY", "SYSTEM_POLICY", "PolicyAction", "PolicyKind",
           "SystemExpression", "SystemPolicy", "exit_action", "periodic_action"]
