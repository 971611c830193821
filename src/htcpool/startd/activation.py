"""Activations: a claim's job is accepted, started (at once or at its deferral time) and ended.

``activate`` handles ACTIVATE_CLAIM: the slot must be Claimed/Idle and its
Requirements must match the job; the claim then records the job, pledges
``MachineMaxVacateTime``, recomputes Rank, and the slot goes Claimed/Busy (11). What
happens next follows the job's deferral (``htcpool.deferral``, evaluated at activation):

* no deferral, or a deferral time already reached: ``StartJob`` at once;
* a deferral time still ahead: the start is *held* (``Claim.start_at``). The slot is
  Busy as if the job ran - HTCondor's starter waits on the execute point, and the job
  shows as running - and ``next_deadline`` includes the start time, when
  ``start_due`` emits ``StartJob``. A held start fires only while the slot is
  Claimed/Busy or Claimed/Retiring: a slot Suspended at that moment starts its job
  when it resumes;
* past ``DeferralTime + DeferralWindow``: the job is not started. The schedd hears
  ``JobUpdate(missed_deferral)`` (it holds the job with code 20) and the activation
  ends as if the starter had exited: Claimed/Idle (12).

A held start has no starter, so whatever would signal one ends the activation instead
(``drop_start``): the schedd hears that the job exited killed, as it would of a starter
killed before it ran the job, and the slot moves on as when a starter exits. Suspend
and continue touch only the slot's state.

``starter_gone`` is the end of every activation (``StarterExited``, a missed or
dropped start): Preempting leaves for Owner or the preempting claim (22-25), Busy,
Suspended and Cleaning go Claimed/Idle (12), Retiring goes Preempting (18).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool import deferral
from htcpool.classad import ClassAdError
from htcpool.classad.match import requirements_hold
from htcpool.protocol.schedd import JobEvent, JobUpdate
from htcpool.protocol.startd import ActivateClaim, ActivateReply, StartJob
from htcpool.startd import dynamic, transitions
from htcpool.startd.slot import Slot
from htcpool.startd.states import Activity, Event, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

A, S, E = Activity, State, Event

#: the activities in which a held start may fire
STARTABLE = frozenset({A.BUSY, A.RETIRING})


def activate(startd: Startd, msg: ActivateClaim, now: float) -> None:
    """ACTIVATE_CLAIM: accept the job, then start it, hold its start, or refuse a missed one."""
    slot = startd.find_claim(msg.claim_id)
    if slot is None or slot.pair != (S.CLAIMED, A.IDLE):
        where = "unknown claim" if slot is None else f"slot is {slot.state.value}/{slot.activity.value}"
        startd.emit(ActivateReply(msg.claim_id, False, where))
        return
    dynamic.publish_dynamic(startd, slot, now)
    if not requirements_hold(slot.ad, msg.job, startd.ctx):
        startd.emit(ActivateReply(msg.claim_id, False, "slot Requirements do not match the job"))
        return
    try:  # decided before the slot changes, so a job whose deferral fails leaves it as it was
        missed, when = deferral.missed(msg.job, now), deferral.start_time(msg.job, now)
    except ClassAdError as e:
        startd.emit(ActivateReply(msg.claim_id, False, f"the job's deferral time cannot be evaluated: {e}"))
        return
    claim = slot.claim
    claim.job = msg.job
    claim.job_start = now
    claim.suspended_total = 0.0
    claim.activations += 1
    claim.last_job = f"{msg.job.get('ClusterId')}.{msg.job.get('ProcId')}"
    claim.rank = startd.rank_of(slot, msg.job)
    claim.accepted_while_draining = startd.draining is not None
    vacate = startd.evaluator(slot, msg.job).number("MachineMaxVacateTime")
    claim.pledged_vacate_time = 600.0 if vacate is None else vacate
    slot.starter_active = True
    transitions.change(startd, slot, E.ACTIVATE, now)
    if missed:
        startd.emit(ActivateReply(msg.claim_id, True))
        startd.emit(JobUpdate(claim.id, slot.name, JobEvent.MISSED_DEFERRAL,
                              message=deferral.MISSED_DEFERRAL_REASON))
        starter_gone(startd, slot, now)
        return
    if when > now:
        claim.start_at = when
    else:
        startd.emit(StartJob(slot.name, claim.id, msg.job))
    startd.emit(ActivateReply(msg.claim_id, True))


def waiting(slot: Slot) -> bool:
    """Whether the slot's job is activated but its start is still held."""
    return slot.starter_active and slot.claim.start_at is not None


def next_start(slot: Slot) -> float | None:
    """When the slot's held start is due, if it may fire now (see ``STARTABLE``)."""
    if waiting(slot) and slot.state is S.CLAIMED and slot.activity in STARTABLE:
        return slot.claim.start_at
    return None


def start_due(startd: Startd, slot: Slot, now: float) -> None:
    """Start the slot's held job if its time has come."""
    when = next_start(slot)
    job = slot.claim.job
    if when is not None and now >= when and job is not None:
        slot.claim.start_at = None
        startd.emit(StartJob(slot.name, slot.claim.id, job))


def drop_start(startd: Startd, slot: Slot, now: float) -> None:
    """End an activation whose start is held, without starting its job (a vacate, a kill,
    a deactivation): the job exited killed, and the slot moves on as when a starter exits."""
    forget_start(startd, slot)
    starter_gone(startd, slot, now)


def forget_start(startd: Startd, slot: Slot) -> None:
    """Tell the schedd the held job exited killed and forget it, leaving the slot where it
    is (a dynamic slot being removed)."""
    claim = slot.claim
    claim.start_at = None
    slot.starter_active = False
    startd.emit(JobUpdate(claim.id, slot.name, JobEvent.EXITED, killed=True))


def starter_gone(startd: Startd, slot: Slot, now: float) -> None:
    """The activation of ``slot`` is over: its starter exited or its job never started."""
    slot.starter_active = False
    slot.vacate_deadline = slot.killing_deadline = None
    claim = slot.claim
    claim.start_at = None
    if slot.state is S.PREEMPTING:
        claim.job = None
        transitions.leave_preempting(startd, slot, now)
        return
    if slot.state is not S.CLAIMED or slot.activity is A.IDLE:
        return
    if slot.activity is A.CLEANING and (slot.preempt_pending or slot.preempting is not None):
        slot.preempt_pending = False
        transitions.change(startd, slot, E.PREEMPT_VACATE, now)
        return
    if slot.activity is A.RETIRING:
        claim.job = None
    transitions.change(startd, slot, E.STARTER_EXITED, now)
    if slot.state is S.CLAIMED:
        claim.job = None
        claim.job_start = None
        dynamic.clear_job_attrs(slot)
        if slot.activity is A.IDLE:
            startd.eval_slot(slot, now)
