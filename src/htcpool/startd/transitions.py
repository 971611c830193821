"""Applying a transition: the table step plus HTCondor's leave and enter actions.

``change(startd, slot, event, now)`` is the only way a slot's state moves
(``ResState::change``): it looks the event up in ``states.TRANSITIONS`` (an illegal
event raises), runs the *leave* actions of the old pair, records the time spent in it
(``TotalTime<State><Activity>``), sets ``EnteredCurrentState``/``…Activity``, logs
``(slot, number, from, to)`` in ``startd.history`` and runs the *enter* actions of
the new pair. When the slot then sits in an Idle or Retiring activity (outside
Backfill) its policy is evaluated again at once.

Leave: leaving Suspended resumes the job (``ContinueJob``) and closes the suspension
interval; leaving Claimed for a non-claimed state stops the lease; leaving Preempting
drops the claim attributes from the ad.

Enter: Delete returns a dynamic slot's resources; Owner gets a fresh claim id;
Matched arms ``MATCH_TIMEOUT``; Claimed begins the claim (lease, a pre-made
preempting claim id), Suspended suspends the job, Retiring without a starter goes
straight on to Preempting; Preempting holds the job (PREEMPT fired and ``WANT_HOLD``:
``HoldJob`` with code 21) and, held or not, soft-kills it with the vacate time (Vacating)
or hard-kills it and arms ``KILLING_TIMEOUT`` (Killing), or, with no starter, leaves Preempting at once; a job
whose start is still held (``activation``) has no starter to signal: suspending and
resuming it only change the slot, and preempting it drops it;
Backfill moves toward a pending destination or joins, asks for or leaves the
machine's one backfill client (``backfill``).
Nested changes are bounded by ``depth``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol.startd import (
    ClaimReply,
    ContinueJob,
    HardKill,
    HoldJob,
    Notice,
    NotifySchedd,
    SoftKill,
    SuspendJob,
)
from htcpool.startd import activation, backfill, carving, dynamic, retirement
from htcpool.startd.claim import Claim, max_vacate_time, retirement_remaining
from htcpool.startd.slot import Slot
from htcpool.startd.states import CLAIMED_LIKE, Activity, Event, State, step

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd
    from htcpool.startd.policy import Evaluator

STARTD_HELD_JOB = 21  # HTCondor's hold reason code for a job the startd's WANT_HOLD held

A, S, E = Activity, State, Event


def change(startd: Startd, slot: Slot, event: Event, now: float, depth: int = 0) -> None:
    """Apply ``event`` through the table, with leave and enter actions."""
    t = step(slot.state, slot.activity, event)
    old_state, old_act = slot.state, slot.activity
    slot.benchmarked_last = old_act is A.BENCHMARKING
    _leave(startd, slot, old_state, old_act, t.target, now)
    slot.record_history(now)
    dynamic.account_unclaimed(startd, slot, now)
    slot.state, slot.activity = t.target
    if slot.state is not old_state:
        slot.entered_state = now
    slot.entered_activity = now
    if slot.destination is slot.state:
        slot.destination = None
    startd.history.append((slot.name, t.number, f"{old_state.value}/{old_act.value}",
                           f"{slot.state.value}/{slot.activity.value}"))
    startd.mark_changed(slot)
    if _enter(startd, slot, old_state, old_act, now, depth):
        return
    if slot.state not in (S.BACKFILL, S.DELETE) and slot.activity in (A.IDLE, A.RETIRING):
        dynamic.publish_dynamic(startd, slot, now)
        startd.eval_slot(slot, now, depth + 1)


def _leave(startd: Startd, slot: Slot, state: State, act: Activity, target: tuple[State, Activity],
           now: float) -> None:
    claim = slot.claim
    if state is S.CLAIMED and act is A.SUSPENDED:
        if claim.suspended_since is not None:
            claim.suspended_total += now - claim.suspended_since
            claim.suspended_since = None
        if slot.starter_active and target[1] is not A.IDLE and not activation.waiting(slot):
            startd.emit(ContinueJob(slot.name, claim.id))
    if state is S.CLAIMED and target[0] not in CLAIMED_LIKE:
        claim.lease_expires = None
    if state is S.PREEMPTING and target[0] is not S.PREEMPTING:
        dynamic.clear_claim_attrs(slot)


def _enter(startd: Startd, slot: Slot, old_state: State, old_act: Activity, now: float, depth: int) -> bool:
    """Enter actions; True when they already moved the slot on."""
    state, act = slot.state, slot.activity
    claim = slot.claim
    if state is S.DELETE:
        carving.delete_dslot(startd, slot, now)
        return True
    if state is S.OWNER:
        if old_state is not S.OWNER:
            if claim.reply_waiting:  # taken in Backfill, never reached Claimed
                startd.emit(ClaimReply(claim.id, False, "slot no longer willing", slot=slot.name))
            slot.claim = Claim(startd.new_claim_id(slot.id_str))
            slot.preempting = None
            startd.index_claims(slot)
        return False
    if state is S.MATCHED:
        claim.match_deadline = now + startd.settings.match_timeout
        return False
    if state is S.CLAIMED:
        if claim.reply_waiting:  # taken in Backfill: the claiming protocol ends now
            claim.reply_waiting = False
            startd.emit(ClaimReply(claim.id, True, slot=slot.name))
        if old_state is not S.CLAIMED:
            claim.begin = now
            claim.match_deadline = None
            if claim.lease and claim.lease_expires is None:
                claim.lease_expires = now + claim.lease
            slot.preempting_id = startd.new_claim_id(slot.id_str)
            startd.index_claims(slot)
        if act is A.SUSPENDED:
            claim.suspended_since = now
            if slot.starter_active and not activation.waiting(slot):
                startd.emit(SuspendJob(slot.name, claim.id))
        if act is A.RETIRING and not slot.starter_active:
            change(startd, slot, E.PREEMPT_VACATE, now, depth + 1)
            return True
        return False
    if state is S.PREEMPTING:
        return _enter_preempting(startd, slot, old_act, now, depth)
    if state is S.BACKFILL:
        if act is A.IDLE:
            return backfill.enter_idle(startd, slot, now, depth)
        if act is A.KILLING:
            return backfill.enter_killing(startd, slot, now, depth)
        return False
    return False


def _enter_preempting(startd: Startd, slot: Slot, old_act: Activity, now: float, depth: int) -> bool:
    act = slot.activity
    claim = slot.claim
    if act is A.KILLING and old_act is A.VACATING:
        if activation.waiting(slot):
            activation.drop_start(startd, slot, now)
            return True
        if slot.starter_active:
            startd.emit(HardKill(slot.name, claim.id))
            slot.vacate_deadline = None
            if slot.killing_deadline is None:  # the vacate time may have run out already
                slot.killing_deadline = now + startd.settings.killing_timeout
        return False
    if not slot.starter_active:
        leave_preempting(startd, slot, now, depth)
        return True
    ev = startd.evaluator(slot, claim.job)
    hold = claim.preempt_was_true and ev.true("WANT_HOLD")
    if hold:
        startd.emit(hold_job(startd, slot, ev, act is A.KILLING))
    if activation.waiting(slot) and (act is A.KILLING or not hold):
        # no starter to signal: the held job is dropped and the slot leaves Preempting
        activation.drop_start(startd, slot, now)
        return True
    if act is A.VACATING and not activation.waiting(slot):  # held or not, the job is vacated
        remaining = retirement_remaining(claim, retirement.mjrt(startd, slot, now), now)
        vacate = max_vacate_time(claim, claim.pledged_vacate_time, remaining, startd.ctx, slot.ad)
        kill_sig = claim.job.get("KillSig") if claim.job is not None else None
        startd.emit(SoftKill(slot.name, claim.id, kill_sig if isinstance(kill_sig, str) else "SIGTERM", vacate))
        slot.vacate_deadline = now + vacate
    if act is A.KILLING:
        startd.emit(HardKill(slot.name, claim.id))
        slot.killing_deadline = now + startd.settings.killing_timeout
    return False


def hold_job(startd: Startd, slot: Slot, ev: Evaluator, hard: bool) -> HoldJob:
    """WANT_HOLD: the job is held with code 21 (StartdHeldJob), ``WANT_HOLD_REASON`` (else a
    reason naming the WANT_HOLD expression) and ``WANT_HOLD_SUBCODE`` (else 0)."""
    reason = ev.value("WANT_HOLD_REASON")
    if not isinstance(reason, str) or not reason:
        text = slot.policy.texts.get("WANT_HOLD") or "WANT_HOLD"
        reason = f"The startd put this job on hold: its policy WANT_HOLD ({text}) is true"
    sub = ev.number("WANT_HOLD_SUBCODE")
    return HoldJob(slot.name, slot.claim.id, reason, STARTD_HELD_JOB, int(sub or 0), hard)


def leave_preempting(startd: Startd, slot: Slot, now: float, depth: int = 0) -> None:
    """The starter is gone: release the old claim, then Claimed/Idle (23/24) or Owner (22/25)."""
    claim = slot.claim
    slot.vacate_deadline = slot.killing_deadline = None
    if claim.request is not None and not claim.schedd_closed:
        startd.emit(NotifySchedd(claim.schedd, claim.id, Notice.RELEASE, claim.vacate_reason))
    pre = slot.preempting
    if pre is not None and pre.request is not None:
        ev = startd.evaluator(slot, pre.request)
        if not ev.true("IsOwner") and not ev.defined_false("START"):
            slot.claim = pre
            slot.preempting = None
            startd.index_claims(slot)
            pre.lease = pre.lease or 0.0
            startd.emit(ClaimReply(pre.id, True, slot=slot.name))
            change(startd, slot, E.PREEMPTION_DONE_CLAIMED, now, depth + 1)
            return
        startd.emit(ClaimReply(pre.id, False, "slot no longer willing", slot=slot.name))
    change(startd, slot, E.PREEMPTION_DONE_OWNER, now, depth + 1)

