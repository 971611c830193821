"""The per-slot policy evaluation, in HTCondor's order (``ResState::eval_policy``).

``suggest(startd, slot, now)`` returns the one event the slot's policy asks for,
or None. The first matching rule wins:

Claimed: Cleaning - nothing. In retirement (a preempting claim, or no un-retiring)
with retirement expired, from Retiring or Suspended - preempt (17/18; PREEMPT is
evaluated once first so WANT_VACATE/WANT_HOLD apply). PREEMPT true while Busy without
WANT_SUSPEND, Retiring, or Suspended - irreversible retirement (13/16). Retiring:
un-retire when allowed (19), else preempt when expired (18). Busy/Retiring with
WANT_SUSPEND and SUSPEND - suspend (14/20). Suspended with CONTINUE - Busy (15) or
Retiring (16). Busy with a preempting claim - retire (13). Idle with a preempting
claim, IS_OWNER, CLAIM_WORKLIFE expired, or draining past the activation delay -
preempt (10).

Preempting/Vacating: KILL - Killing (21). Unclaimed: dynamic - delete; draining -
Drained (37); IS_OWNER - Owner (2); START_BACKFILL - Backfill (7). Owner: dynamic -
delete; draining - Drained (36); not IS_OWNER - Unclaimed (1). Matched: nothing
(HTCondor's code ignores START here, although the manual says otherwise).
Backfill: EVICT_BACKFILL - Owner (30) or Killing (28). Drained: not draining - Owner
(34/35); Retiring with every slot drained (a dynamic slot never is: it is deleted
instead, so one still running keeps the drain going) - Idle (33).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.startd import retirement
from htcpool.startd.policy import Evaluator
from htcpool.startd.states import Activity, Event, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd
    from htcpool.startd.slot import Slot

A, S, E = Activity, State, Event


def preempt_event(ev: Evaluator, slot: Slot) -> Event:
    """Vacating unless PREEMPT fired on this claim and WANT_VACATE is false."""
    if slot.claim.preempt_was_true and slot.claim.job is not None and not ev.true("WANT_VACATE"):
        return E.PREEMPT_KILL
    return E.PREEMPT_VACATE


def suggest(startd: Startd, slot: Slot, ev: Evaluator, now: float) -> Event | None:
    state, act = slot.state, slot.activity
    if state is S.CLAIMED:
        return _claimed(startd, slot, ev, now)
    if state is S.PREEMPTING:
        if act is A.VACATING and ev.true("KILL"):
            return E.KILL
        return None
    if state is S.UNCLAIMED:
        if slot.is_dynamic:
            return E.DELETE if act is A.IDLE else None
        if startd.draining is not None:
            return E.DRAIN_START
        if act is A.IDLE and ev.true("IsOwner"):
            return E.IS_OWNER_TRUE
        if act is A.IDLE and startd.backfill_enabled and ev.true("START_BACKFILL"):
            return E.START_BACKFILL
        return None
    if state is S.OWNER:
        if slot.is_dynamic:
            return E.DELETE
        if startd.draining is not None:
            return E.DRAIN_START
        if not ev.true("IsOwner"):
            return E.IS_OWNER_FALSE
        return None
    if state is S.BACKFILL:
        if act is A.KILLING:
            return None
        if ev.true("EVICT_BACKFILL"):
            slot.destination = S.OWNER
            return E.BACKFILL_TO_OWNER if act is A.IDLE else E.EVICT_BACKFILL
        return None
    if state is S.DRAINED:
        if startd.draining is None:
            return E.DRAIN_END
        if act is A.RETIRING and all(s.state is S.DRAINED for s in startd.slots):
            return E.ALL_DRAINED
        return None
    return None


def _claimed(startd: Startd, slot: Slot, ev: Evaluator, now: float) -> Event | None:
    act = slot.activity
    claim = slot.claim
    if act is A.CLEANING:
        return None
    in_retirement = slot.preempting is not None or not claim.may_unretire
    if in_retirement and act in (A.RETIRING, A.SUSPENDED) and retirement.retirement_expired(startd, slot, now):
        if not claim.preempt_was_true and ev.true("PREEMPT"):
            claim.preempt_was_true = True
        retirement.charge_badput(startd, slot, now)
        return preempt_event(ev, slot)
    want_suspend = ev.true("WANT_SUSPEND")
    if ((act is A.BUSY and not want_suspend)
            or (act is A.RETIRING and not claim.preempt_was_true and not want_suspend)
            or (act is A.SUSPENDED and not claim.preempt_was_true)):
        if ev.true("PREEMPT"):
            claim.preempt_was_true = True
            claim.may_unretire = False
            claim.vacate_reason = "PREEMPT expression evaluated to True"
            if act is not A.RETIRING:
                return E.RETIRE
            in_retirement = True
    if act is A.RETIRING:
        if retirement.may_unretire(startd, slot):
            return E.UNRETIRE
        if retirement.retirement_expired(startd, slot, now):
            retirement.charge_badput(startd, slot, now)
            return preempt_event(ev, slot)
    if act in (A.BUSY, A.RETIRING) and want_suspend and ev.true("SUSPEND"):
        return E.SUSPEND
    if act is A.SUSPENDED and not claim.command_suspended and ev.true("CONTINUE"):
        return E.RETIRE if in_retirement else E.CONTINUE
    if act is A.BUSY and slot.preempting is not None:
        claim.vacate_reason = "preempted by a higher ranked job or a priority user"
        return E.RETIRE
    if act is A.IDLE:
        if slot.preempting is not None or not claim.may_unretire:
            return E.PREEMPT_VACATE
        if ev.true("IsOwner"):
            return E.PREEMPT_VACATE
        if retirement.claim_worklife_expired(slot, ev, now):
            return E.PREEMPT_VACATE
        if startd.draining is not None and \
                now - (claim.begin or now) >= startd.settings.max_draining_activation_delay:
            return E.PREEMPT_VACATE
    return None
