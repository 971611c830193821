"""How claims end: retire, release, kill - and the retirement and vacate timing.

The three primitive claim endings (``Resource::retire_claim``, ``release_claim``,
``kill_claim``):

* ``retire_claim`` - Busy/Suspended go Retiring (13/16) and keep their retirement
  time; an Idle claim is preempted at once (10); *irreversible* retirement forbids
  un-retiring (19); a *peaceful* one makes retirement infinite. Matched goes to Owner
  (8), Backfill toward Owner.
* ``kill_claim`` - Claimed or Preempting/Vacating go Preempting/Killing (hard kill);
  Cleaning only records the request and hard-kills the starter.
* ``release_claim`` - Claimed goes Preempting/Vacating (soft kill); Cleaning records
  the request and soft-kills the starter. After a request recorded in Cleaning, the
  starter's exit leads to Preempting instead of Claimed/Idle.

Retirement (``mjrt``): the slot's ``MaxJobRetirementTime`` against the job (the job's
own value may only lower it), infinite during a peaceful shutdown unless it is -1,
capped by a quick drain, and for jobs accepted while draining stretched to the
longest retirement the drain's original jobs still have (``graceful_time_remaining``).
It has *expired* when nothing is left or the vacate time covers what is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol.admin import How
from htcpool.protocol.startd import HardKill, SoftKill
from htcpool.startd import backfill, transitions
from htcpool.startd.claim import (
    INFINITE,
    max_job_retirement_time,
    max_vacate_time,
    retirement_remaining,
)
from htcpool.startd.claim import (
    retirement_expired as _expired,
)
from htcpool.startd.policy import Evaluator
from htcpool.startd.slot import Slot
from htcpool.startd.states import Activity, Event, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

A, S, E = Activity, State, Event


# ---------------------------------------------------------------------- claim endings
def retire_claim(startd: Startd, slot: Slot, now: float, *, reversible: bool, peaceful: bool = False,
                 reason: str = "") -> None:
    claim = slot.claim
    if slot.state is S.CLAIMED:
        if reason:
            claim.vacate_reason = reason
        if slot.activity is A.CLEANING:
            return
        if not reversible:
            claim.may_unretire = False
        claim.peaceful = claim.peaceful or peaceful
        if slot.activity in (A.BUSY, A.SUSPENDED):
            transitions.change(startd, slot, E.RETIRE, now)
        elif slot.activity is A.IDLE:
            transitions.change(startd, slot, E.PREEMPT_VACATE, now)
        elif slot.activity is A.RETIRING:
            startd.eval_slot(slot, now)
    elif slot.state is S.MATCHED:
        transitions.change(startd, slot, E.MATCH_GONE, now)
    elif slot.state is S.BACKFILL:
        backfill.toward(startd, slot, S.OWNER, now)


def kill_claim(startd: Startd, slot: Slot, now: float, reason: str = "") -> None:
    claim = slot.claim
    if reason:
        claim.vacate_reason = reason
    if slot.state is S.CLAIMED:
        if slot.activity is A.CLEANING:
            slot.preempt_pending = True
            startd.emit(HardKill(slot.name, claim.id))
            return
        transitions.change(startd, slot, E.PREEMPT_KILL, now)
    elif slot.state is S.PREEMPTING and slot.activity is A.VACATING:
        transitions.change(startd, slot, E.PREEMPT_KILL, now)
    elif slot.state is S.MATCHED:
        transitions.change(startd, slot, E.MATCH_GONE, now)
    elif slot.state is S.BACKFILL:
        backfill.toward(startd, slot, S.OWNER, now)


def release_claim(startd: Startd, slot: Slot, now: float, reason: str = "") -> None:
    claim = slot.claim
    if slot.state is S.CLAIMED and slot.activity is A.CLEANING:
        # the starter is exiting already: remember to preempt, ask it to hurry (soft kill)
        claim.vacate_reason = reason or claim.vacate_reason
        slot.preempt_pending = True
        kill_sig = claim.job.get("KillSig") if claim.job is not None else None
        startd.emit(SoftKill(slot.name, claim.id, kill_sig if isinstance(kill_sig, str) else "SIGTERM",
                             claim.pledged_vacate_time))
    elif slot.state is S.CLAIMED:
        claim.vacate_reason = reason or claim.vacate_reason
        transitions.change(startd, slot, E.PREEMPT_VACATE, now)
    else:
        kill_claim(startd, slot, now, reason)


def claim_closing(startd: Startd, slot: Slot, now: float) -> bool:
    """Whether the schedd may not activate the claim again (DEACTIVATE_CLAIM's ``Start``)."""
    ev = startd.evaluator(slot, slot.claim.request)
    return (slot.preempting is not None or slot.activity is A.RETIRING or slot.state is S.PREEMPTING
            or startd.draining is not None or not slot.claim.may_unretire
            or claim_worklife_expired(slot, ev, now))


def claim_worklife_expired(slot: Slot, ev: Evaluator, now: float) -> bool:
    """CLAIM_WORKLIFE passed since the claim began (only once it was activated; -1/undefined: never)."""
    claim = slot.claim
    if claim.activations == 0 or claim.begin is None:
        return False
    worklife = ev.number("CLAIM_WORKLIFE")
    if worklife is None or worklife < 0:
        return False
    return now - claim.begin > worklife


# ---------------------------------------------------------------------- retirement
def mjrt(startd: Startd, slot: Slot, now: float) -> float:
    """The retirement time granted to the slot's job, after shutdown and drain adjustments."""
    claim = slot.claim
    value = max_job_retirement_time(slot.ad, claim.job, startd.ctx)
    if claim.peaceful or startd.shutdown is How.PEACEFUL:
        return value if value == -1 else INFINITE
    d = startd.draining
    if d is not None:
        if d.mjrt_override is not None:
            return min(value, d.mjrt_override)
        if claim.accepted_while_draining:
            return claim.job_run_time(now) + graceful_time_remaining(startd, now)
    return value


def retirement_left(startd: Startd, slot: Slot, now: float) -> float:
    return retirement_remaining(slot.claim, mjrt(startd, slot, now), now)


def retirement_expired(startd: Startd, slot: Slot, now: float) -> bool:
    claim = slot.claim
    if claim.job is None:
        return True
    remaining = retirement_left(startd, slot, now)
    vacate = max_vacate_time(claim, claim.pledged_vacate_time, remaining, startd.ctx, slot.ad)
    return _expired(remaining, vacate)


def may_unretire(startd: Startd, slot: Slot) -> bool:
    return (startd.draining is None and startd.shutdown is None and slot.claim.may_unretire
            and slot.preempting is None)


def graceful_time_remaining(startd: Startd, now: float) -> float:
    """The longest remaining retirement among the drain's original jobs: jobs of claims
    that existed when the drain began, not jobs accepted while draining."""
    d = startd.draining
    if d is None:
        return 0.0
    best = 0.0
    for slot in startd.slots:
        if d.is_original(slot.claim) and slot.claim.job is not None:
            value = max_job_retirement_time(slot.ad, slot.claim.job, startd.ctx)
            if d.mjrt_override is not None:
                value = min(value, d.mjrt_override)
            best = max(best, retirement_remaining(slot.claim, value, now))
    return best


def charge_badput(startd: Startd, slot: Slot, now: float) -> None:
    """Add the job's run time (cpu-seconds) to the drain badput when a drain preempts it."""
    if startd.draining is not None and slot.claim.job is not None:
        startd.drain_totals.badput += slot.resources.cpus * slot.claim.job_run_time(now)


# ---------------------------------------------------------------------- draining estimates
#: an estimate beyond this many seconds (an infinite retirement) is published as this
_LONGEST_ESTIMATE = 10.0 ** 9


def expected_draining(startd: Startd, now: float) -> dict[str, int]:
    """What draining the machine now would cost, for condor_defrag's DEFRAG_RANK and its drain's
    check expression (HTCondor's manual, "Machine ClassAd Attributes", ExpectedMachine*Draining*):
    a graceful drain ends when the longest retirement plus its vacate time is over, a quick one
    after the longest vacate time; badput is each job's cores × (its run time so far + the time
    it would still get: the longer of retirement left and vacate time when graceful, the vacate
    time when quick). Cached per ``now`` on the drain totals, since every slot publishes it."""
    totals = startd.drain_totals
    if totals.expected_at == now:
        return totals.expected
    graceful_end = quick_end = graceful_badput = quick_badput = 0.0
    for slot in startd.slots:
        claim = slot.claim
        if slot.state not in (S.CLAIMED, S.PREEMPTING) or claim.job is None or claim.job_start is None:
            continue
        left = min(retirement_left(startd, slot, now), _LONGEST_ESTIMATE)
        vacate = min(max_vacate_time(claim, claim.pledged_vacate_time, left, startd.ctx, slot.ad), _LONGEST_ESTIMATE)
        run, cpus = claim.job_run_time(now), slot.resources.cpus
        graceful_end, quick_end = max(graceful_end, left + vacate), max(quick_end, vacate)
        graceful_badput += cpus * (run + max(left, vacate))
        quick_badput += cpus * (run + vacate)
    totals.expected_at = now
    totals.expected = {
        "ExpectedMachineGracefulDrainingCompletion": int(now + graceful_end),
        "ExpectedMachineQuickDrainingCompletion": int(now + quick_end),
        "ExpectedMachineGracefulDrainingBadput": int(graceful_badput),
        "ExpectedMachineQuickDrainingBadput": int(quick_badput),
    }
    return totals.expected
