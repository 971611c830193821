"""Message handlers: one function per message type, collected in ``HANDLERS``.

Each handler takes ``(startd, message, now)``, changes slots through
``transitions.change`` and the claim endings of ``retirement``, and emits actions
with ``startd.emit``; ``Startd.handle`` dispatches by the message's type and sends
the ads of the slots that changed afterwards (``command.cpp`` in HTCondor).

Claims: ``MatchNotification`` moves an idle slot to Matched (6) - not a
partitionable slot, not a Drained one, nor one already heading elsewhere.
``RequestClaim`` is refused while shutting down, for unknown ids, when draining with
less than 20 s of graceful time left, and when START is not true for the request -
while draining, when the advertised Requirements (``<draining START> &&
WithinResourceLimits``, or False) do not hold, as ``willingToRun`` does; a Drained
slot (static, or a partitionable one carving) takes such a claim (HTCondor's
``command.cpp::request_claim`` leaves Drained to ``accept_request_claim``);
on a partitionable slot it carves a dynamic slot (``carving``); with the pre-made
preempting id of a Claimed slot it becomes the pending preempting claim if its Rank
is not lower than the current (and pending) claim's. ``ActivateClaim`` goes to
``activation`` (the job's start, held until its deferral time or refused when missed);
``DeactivateClaim`` of a job whose start is held ends that activation at once.
``ReleaseClaim`` drops a pending preempting claim or kills the current one; ``Alive``
renews the lease. Every claim id is looked up in the startd's claim index, so a message
about a claim that no longer exists finds nothing and does nothing.

Starter messages (``StarterExited``, ``FinalJobUpdate``) are matched by the claim id
the starter ran under: one about a removed dynamic slot's starter (``Startd.dying``)
only ends that starter's KILLING_TIMEOUT, however the slot name has been reused since;
``activation.starter_gone`` moves the slot on.

Administration: ``Vacate`` retires irreversibly (``-fast``: kills), ``Shutdown``
retires every claim (peaceful: with infinite retirement) or kills them (fast),
``SuspendClaim``/``ContinueClaim`` suspend and resume directly (a command-suspended
claim ignores CONTINUE), ``Drain``/``CancelDrain`` go to ``drain``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcpool.classad.match import requirements_hold
from htcpool.protocol.admin import How
from htcpool.protocol.startd import (
    ActivateClaim,
    Alive,
    BackfillClientExited,
    BackfillClientStarted,
    BenchmarksFinished,
    CancelDrain,
    ClaimReply,
    ContinueClaim,
    DeactivateClaim,
    DeactivateReply,
    Drain,
    DrainReply,
    FinalJobUpdate,
    HardKill,
    JobUsage,
    MatchNotification,
    ReleaseClaim,
    RequestClaim,
    SensorReadings,
    Shutdown,
    SoftKill,
    StarterExited,
    SuspendClaim,
    Vacate,
)
from htcpool.startd import (
    activation,
    backfill,
    carving,
    drain,
    dynamic,
    measured,
    retirement,
    transitions,
)
from htcpool.startd.claim import Claim
from htcpool.startd.job_usage import on_job_usage
from htcpool.startd.slot import Slot
from htcpool.startd.states import CLAIMED_LIKE, Activity, Event, State, allowed

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

A, S, E = Activity, State, Event
MIN_DRAINING_CLAIM_TIME = 20.0  # a claim needs this much graceful drain time left


def on_sensors(startd: Startd, msg: SensorReadings, now: float) -> None:
    startd.readings = msg
    if msg.keyboard_idle is not None:
        startd.keyboard_activity = now - msg.keyboard_idle
    if msg.console_idle is not None:
        startd.console_activity = now - msg.console_idle
    measured.on_measured(startd, msg)  # disk and swap, re-measured every poll


def on_match(startd: Startd, msg: MatchNotification, now: float) -> None:
    slot = startd.find_claim(msg.claim_id)
    if slot is None or slot.destination is not None or slot.state is S.DRAINED:
        return
    if slot.state in (S.UNCLAIMED, S.OWNER) and not slot.is_partitionable:
        if slot.activity is A.IDLE or slot.activity is A.BENCHMARKING:
            transitions.change(startd, slot, E.MATCH, now)
    elif slot.state is S.BACKFILL:
        backfill.toward(startd, slot, S.MATCHED, now)


def on_request_claim(startd: Startd, msg: RequestClaim, now: float) -> None:
    if startd.shutdown is not None:
        startd.emit(ClaimReply(msg.claim_id, False, "startd is shutting down"))
        return
    pre_slot = startd.find_preempting_id(msg.claim_id)
    if pre_slot is not None:
        _preempting_request(startd, pre_slot, msg, now)
        return
    found = startd.find_claim(msg.claim_id) or startd.find_spare_claim(msg.claim_id)
    if found is None:
        startd.emit(ClaimReply(msg.claim_id, False, "unknown claim id"))
        return
    slot = found
    if startd.draining is not None and \
            retirement.graceful_time_remaining(startd, now) < MIN_DRAINING_CLAIM_TIME:
        _refuse(startd, slot, msg, "slot is draining", now)
        return
    if slot.is_partitionable:
        carving.claim_partitionable(startd, slot, msg, now)
        return
    rank = startd.rank_of(slot, msg.request)
    if slot.state is S.BACKFILL:  # answered when the slot is Claimed (``Claim.reply_waiting``)
        _take_claim(startd, slot, msg, rank, now)
        slot.claim.reply_waiting = True
        backfill.toward(startd, slot, S.CLAIMED, now)
        return
    if not allowed(slot.state, slot.activity, E.CLAIM):
        startd.emit(ClaimReply(msg.claim_id, False, f"slot is {slot.state.value}/{slot.activity.value}"))
        return
    if startd.draining is not None:
        # willingToRun: while draining the advertised Requirements are the unavailable
        # form, `<draining START> && WithinResourceLimits` or False (Reqexp.cpp)
        dynamic.publish_dynamic(startd, slot, now)
        if not requirements_hold(slot.ad, msg.request, startd.ctx):
            _refuse(startd, slot, msg, "draining: the draining START does not accept this request", now)
            return
    else:
        # willingToRun (Resource.cpp): the slot's START and resource limits, and the request's
        # own Requirements against the slot
        ev = startd.evaluator(slot, msg.request)
        if not ev.true("START"):
            startd.check(slot, ev)
            _refuse(startd, slot, msg, "START is not true for this request", now)
            return
        if "WithinResourceLimits" in slot.ad and not ev.true("WithinResourceLimits"):
            _refuse(startd, slot, msg, "the request does not fit the slot's resources", now)
            return
        if "Requirements" in msg.request and not requirements_hold(msg.request, slot.ad, startd.ctx):
            _refuse(startd, slot, msg, "the request's Requirements do not match the slot", now)
            return
    _take_claim(startd, slot, msg, rank, now)
    startd.emit(ClaimReply(msg.claim_id, True, slot=slot.name))
    transitions.change(startd, slot, E.CLAIM, now)

def _refuse(startd: Startd, slot: Slot, msg: RequestClaim, reason: str, now: float) -> None:
    """The claim request is refused; a Matched slot gives its match up and goes back to Owner
    (transition 8), as HTCondor's startd does when the claiming protocol fails, instead of
    waiting out MATCH_TIMEOUT while it advertises itself as unavailable."""
    startd.emit(ClaimReply(msg.claim_id, False, reason))
    if slot.state is S.MATCHED:
        transitions.change(startd, slot, E.MATCH_GONE, now)


def _take_claim(startd: Startd, slot: Slot, msg: RequestClaim, rank: float, now: float) -> None:
    claim = slot.claim
    claim.request, claim.schedd, claim.rank = msg.request, msg.schedd, rank
    claim.start_lease(msg.alive_interval, startd.settings.max_claim_alives_missed, now)


def _preempting_request(startd: Startd, slot: Slot, msg: RequestClaim, now: float) -> None:
    rank = startd.rank_of(slot, msg.request)
    if rank < slot.claim.rank:
        startd.emit(ClaimReply(msg.claim_id, False, "rank lower than the current claim's"))
        return
    old = slot.preempting
    if old is not None:
        if rank < old.rank:
            startd.emit(ClaimReply(msg.claim_id, False, "rank lower than the pending preempting claim's"))
            return
        startd.emit(ClaimReply(old.id, False, "replaced by a better preempting claim"))
    pre = Claim(msg.claim_id, msg.request, msg.schedd, rank)
    pre.start_lease(msg.alive_interval, startd.settings.max_claim_alives_missed, now)
    pre.lease_expires = None
    slot.preempting = pre
    slot.preempting_id = startd.new_claim_id(slot.id_str)
    slot.claim.vacate_reason = ("preempted by a higher ranked job" if rank > slot.claim.rank
                                else "preempted by a priority user")
    startd.mark_changed(slot)
    startd.eval_slot(slot, now)


def on_deactivate(startd: Startd, msg: DeactivateClaim, now: float) -> None:
    slot = startd.find_claim(msg.claim_id)
    if slot is None:
        return
    if activation.waiting(slot):  # nothing runs yet: the activation just ends
        startd.emit(DeactivateReply(msg.claim_id, not retirement.claim_closing(startd, slot, now)))
        activation.drop_start(startd, slot, now)
        return
    if slot.starter_active:
        job = slot.claim.job
        kill_sig = job.get("KillSig") if job is not None else None
        startd.emit(HardKill(slot.name, msg.claim_id) if msg.forcibly
                    else SoftKill(slot.name, msg.claim_id, kill_sig if isinstance(kill_sig, str) else "SIGTERM",
                                  slot.claim.pledged_vacate_time))
    startd.emit(DeactivateReply(msg.claim_id, not retirement.claim_closing(startd, slot, now)))


def on_release(startd: Startd, msg: ReleaseClaim, now: float) -> None:
    slot = startd.find_pending_preempting(msg.claim_id)
    if slot is not None:
        slot.preempting = None
        startd.mark_changed(slot)
        startd.eval_slot(slot, now)
        return
    found = startd.find_claim(msg.claim_id)
    if found is not None and found.state in CLAIMED_LIKE:
        found.claim.schedd_closed = True
        # HTCondor's RELEASE_CLAIM vacates gracefully (Preempting/Vacating: the job's KillSig)
        retirement.release_claim(startd, found, now, "released by schedd")


def on_alive(startd: Startd, msg: Alive, now: float) -> None:
    slot = startd.find_claim(msg.claim_id)
    if slot is not None:
        slot.claim.renew(now)


def _starter_slot(startd: Startd, name: str, claim_id: str, *, exited: bool) -> Slot | None:
    """The live slot a starter message is about; None when it is about a starter of a
    removed slot (forgotten when ``exited``) or a claim that no longer exists."""
    if claim_id:
        if claim_id in startd.dying:
            if exited:
                startd.reap(name, claim_id)
            return None
        return startd.find_claim(claim_id)
    if any(g.slot_name == name for g in startd.dying.values()):
        if exited:
            startd.reap(name, "")
        return None
    return startd.find_slot(name)


def on_starter_exited(startd: Startd, msg: StarterExited, now: float) -> None:
    slot = _starter_slot(startd, msg.slot, msg.claim_id, exited=True)
    if slot is not None:
        activation.starter_gone(startd, slot, now)


def on_final_update(startd: Startd, msg: FinalJobUpdate, now: float) -> None:
    slot = _starter_slot(startd, msg.slot, msg.claim_id, exited=False)
    if slot is not None and slot.state is S.CLAIMED and slot.activity in (A.BUSY, A.RETIRING, A.SUSPENDED):
        transitions.change(startd, slot, E.FINAL_UPDATE, now)


def on_benchmarks(startd: Startd, msg: BenchmarksFinished, now: float) -> None:
    startd.last_benchmark = now
    startd.mips = msg.mips or startd.mips
    startd.kflops = msg.kflops or startd.kflops
    slot = startd.slot(msg.slot)
    if slot.pair == (S.UNCLAIMED, A.BENCHMARKING):
        transitions.change(startd, slot, E.BENCHMARKS_DONE, now)


def on_backfill_started(startd: Startd, msg: BackfillClientStarted, now: float) -> None:
    backfill.client_started(startd, msg.slot, now)


def on_backfill_exited(startd: Startd, msg: BackfillClientExited, now: float) -> None:
    backfill.client_exited(startd, msg.slot, now)


def on_vacate(startd: Startd, msg: Vacate, now: float) -> None:
    targets = startd.slots if msg.slot is None else [startd.slot(msg.slot)]
    for slot in list(targets):
        if not startd.is_live(slot):
            continue
        if msg.fast:
            retirement.kill_claim(startd, slot, now, "vacated (fast) by administrator")
        else:
            retirement.retire_claim(startd, slot, now, reversible=False, reason="vacated by administrator")


def on_suspend(startd: Startd, msg: SuspendClaim, now: float) -> None:
    slot = startd.find_claim(msg.claim_id) if msg.claim_id else startd.slot(msg.slot)
    if slot is not None and slot.state is S.CLAIMED and slot.activity in (A.BUSY, A.RETIRING):
        slot.claim.command_suspended = True
        transitions.change(startd, slot, E.SUSPEND, now)


def on_continue(startd: Startd, msg: ContinueClaim, now: float) -> None:
    slot = startd.find_claim(msg.claim_id) if msg.claim_id else startd.slot(msg.slot)
    if slot is not None and slot.pair == (S.CLAIMED, A.SUSPENDED):
        slot.claim.command_suspended = False
        in_retirement = slot.preempting is not None or not slot.claim.may_unretire
        transitions.change(startd, slot, E.RETIRE if in_retirement else E.CONTINUE, now)


def on_shutdown(startd: Startd, msg: Shutdown, now: float) -> None:
    how = How(msg.how)
    startd.shutdown = how
    for slot in list(startd.slots):
        if not startd.is_live(slot):
            continue
        startd.mark_changed(slot)
        if how is How.FAST:
            retirement.kill_claim(startd, slot, now, "startd fast shutdown")
        else:
            retirement.retire_claim(startd, slot, now, reversible=False, peaceful=how is How.PEACEFUL,
                                    reason="startd shutdown")


def on_drain(startd: Startd, msg: Drain, now: float) -> None:
    startd.emit(drain.start_drain(startd, msg, now))


def on_cancel_drain(startd: Startd, msg: CancelDrain, now: float) -> None:
    ok = drain.cancel_drain(startd, now, msg.request_id)
    startd.emit(DrainReply(ok, msg.request_id or "", "" if ok else "no matching drain in progress"))


#: messages that change nothing a slot's policy or ad reads (``Alive`` moves a claim's lease, a timer
#: of the machine): the periodic poll goes on skipping the settled slots after them (``settle``)
KEEPS_SETTLED: frozenset[type] = frozenset({Alive})
#: messages about one claim, which change only the slots they mark changed (``Startd.mark_changed``:
#: every transition marks its slot, and a slot whose ad moves must be sent again) and, through
#: them, their p-slot (its resources and ``Child…`` lists): after one, only those are evaluated
#: at the next poll (``settle``). None of them moves anything of the machine's that a settled
#: slot's ad or policy reads (drains, shutdowns, readings, benchmarks and the rest do: after
#: those every slot is evaluated); a flag one sets on a claim without marking it (a release
#: during Cleaning, a soft kill) belongs to a slot in a state that never settles, or is read by
#: no policy.
UNSETTLES_ITS_SLOTS: frozenset[type] = frozenset({
    MatchNotification, RequestClaim, ActivateClaim, DeactivateClaim, ReleaseClaim, StarterExited, FinalJobUpdate,
})

HANDLERS: dict[type, Callable[[Startd, Any, float], None]] = {
    SensorReadings: on_sensors,
    MatchNotification: on_match,
    RequestClaim: on_request_claim,
    ActivateClaim: activation.activate,
    DeactivateClaim: on_deactivate,
    ReleaseClaim: on_release,
    Alive: on_alive,
    StarterExited: on_starter_exited,
    FinalJobUpdate: on_final_update,
    JobUsage: on_job_usage,
    BenchmarksFinished: on_benchmarks,
    BackfillClientStarted: on_backfill_started,
    BackfillClientExited: on_backfill_exited,
    Vacate: on_vacate,
    SuspendClaim: on_suspend,
    ContinueClaim: on_continue,
    Shutdown: on_shutdown,
    Drain: on_drain,
    CancelDrain: on_cancel_drain,
}
