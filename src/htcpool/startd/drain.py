"""Draining: the machine-wide drain request and its accounting.

A drain request (``protocol.startd.Drain``) is graceful, quick or fast. While it lasts every
slot advertises unavailable Requirements (``False``, or the drain's start expression
``&& WithinResourceLimits``), Owner and Unclaimed slots move to Drained/Retiring
(36/37), and every slot's claim ends (graceful: retired reversibly, so running jobs
keep their retirement; quick: retired irreversibly with retirement forced to 0, so jobs
are vacated; fast: killed) - an idle claim is preempted at once, Matched and Backfill
slots go to Owner. A Drained slot may then be claimed by a job the drain's start
expression accepts (``handlers``, ``carving``); such a claim must be activated within
``MAX_DRAINING_ACTIVATION_DELAY``, and its job (accepted while draining) may run as long
as the longest remaining retirement of the original jobs. When every original job is
gone the start expression is cleared and leftover claims are released; when every slot
(dynamic slots included) is Drained the slots go Drained/Idle (33) and the completion
action runs (``resume`` cancels the drain: slots go to Owner, 34; ``exit``, ``restart``
and ``reconfig`` ask the driver, through ``DaemonAction``, to do that to the startd; the exit
is marked ``no_restart``, so the master leaves the startd off, as condor_drain's manual says).

``start_drain`` checks and starts a request, ``check_drain`` (every poll) notices
when the original jobs are gone, ``drain_completion`` runs the completion action once
every slot is Drained/Idle and ``cancel_drain`` ends the drain (condor_drain -cancel).

Accounting, cumulative over drains: ``TotalMachineDrainingBadput`` (cpu-seconds of
job run time lost to draining preemptions) and ``TotalMachineDrainingUnclaimedTime``
(cpu-seconds slots spent Unclaimed or Drained while a drain was in progress,
``ResState::updateHistoryTotals``; counted at every state change and poll by
``dynamic.account_unclaimed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from htcpool.classad import ClassAdError
from htcpool.classad.nodes import Node
from htcpool.protocol.startd import (
    DaemonAction,
    DaemonActionKind,
    Drain,
    DrainCompletion,
    DrainReply,
    DrainSpeed,
)
from htcpool.startd import dynamic, retirement
from htcpool.startd.claim import Claim
from htcpool.startd.policy import parse
from htcpool.startd.states import CLAIMED_LIKE, Activity, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

A, S = Activity, State

#: the completions that ask the driver to do something with the startd itself
DAEMON_ACTIONS = {DrainCompletion.EXIT: DaemonActionKind.EXIT, DrainCompletion.RESTART: DaemonActionKind.RESTART,
                  DrainCompletion.RECONFIG: DaemonActionKind.RECONFIG}


@dataclass(slots=True)
class DrainState:
    """The drain in progress."""

    request_id: str
    how_fast: DrainSpeed
    on_completion: DrainCompletion
    reason: str
    started: float
    start_expr: Node | None = None
    start_text: str | None = None
    original_claims: set[str] = field(default_factory=set)
    mjrt_override: float | None = None
    completed_action_done: bool = False
    originals_gone: bool = False

    def is_original(self, claim: Claim) -> bool:
        """Whether the claim existed when the drain began and its job was not accepted during it."""
        return claim.id in self.original_claims and not claim.accepted_while_draining


@dataclass(slots=True)
class DrainTotals:
    """Accounting kept across drains."""

    badput: float = 0.0
    unclaimed_time: float = 0.0
    last_start: float | None = None
    last_stop: float | None = None
    requests: int = 0
    #: ``retirement.expected_draining``'s last answer and the time it was for
    expected_at: float | None = None
    expected: dict[str, int] = field(default_factory=dict)


def start_drain(startd: Startd, msg: Drain, now: float) -> DrainReply:
    """Start a drain, or say why not (one already running, a bad request, a failed check)."""
    if startd.draining is not None:
        return DrainReply(False, startd.draining.request_id, "DRAINING_ALREADY_IN_PROGRESS")
    try:
        how_fast, on_completion = DrainSpeed(msg.how_fast), DrainCompletion(msg.on_completion)
    except ValueError:
        return DrainReply(False, "", f"bad drain request {msg.how_fast}/{msg.on_completion}")
    start_text = msg.start_expr or startd.settings.default_draining_start_expr
    try:  # expressions that do not parse refuse the drain
        check = parse(msg.check_expr) if msg.check_expr else None
        start = parse(start_text) if start_text else None
    except ClassAdError as e:
        return DrainReply(False, "", f"bad drain expression: {e}")
    if check is not None:
        for slot in startd.slots:
            if slot.ad._evaluate_node(check, None, startd.ctx) is not True:
                return DrainReply(False, "", f"DRAINING_CHECK_EXPR_FAILED on {slot.name}")
    totals = startd.drain_totals
    totals.requests += 1
    rid = msg.request_id or str(totals.requests)
    d = DrainState(rid, how_fast, on_completion, msg.reason, now, start, start_text)
    d.original_claims = {s.claim.id for s in startd.slots if s.state in CLAIMED_LIKE}
    for slot in startd.slots:
        dynamic.account_unclaimed(startd, slot, now)  # unclaimed time counts from now on
    startd.draining = d
    totals.last_start = now
    if how_fast is DrainSpeed.QUICK:
        d.mjrt_override = 0.0
    # every slot's claims end (ResMgr::releaseAllClaimsReversibly, releaseAllClaims,
    # killAllClaims): Busy retires, an idle claim is preempted at once, Matched and
    # Backfill go to Owner; the slots then go Drained (36/37)
    for slot in list(startd.slots):
        if not startd.is_live(slot):
            continue
        startd.mark_changed(slot)
        if how_fast is DrainSpeed.FAST:
            retirement.charge_badput(startd, slot, now)
            retirement.kill_claim(startd, slot, now, "draining (fast)")
        else:
            retirement.retire_claim(startd, slot, now, reversible=how_fast is DrainSpeed.GRACEFUL,
                                    reason=f"draining ({how_fast.value})")
    startd.poll(now)
    return DrainReply(True, rid)


def check_drain(startd: Startd, now: float) -> None:
    """Once every original job is gone: clear the start expression, release leftover claims."""
    d = startd.draining
    if d is None or d.originals_gone:
        return
    if any(d.is_original(s.claim) and s.state in CLAIMED_LIKE for s in startd.slots):
        return
    d.originals_gone = True
    d.start_expr = None
    d.mjrt_override = 0.0
    for slot in list(startd.slots):
        startd.mark_changed(slot)  # START is false from now on: every slot advertises it at once
        if startd.is_live(slot):
            retirement.retire_claim(startd, slot, now, reversible=True, reason="draining completed")


def drain_completion(startd: Startd, now: float) -> None:
    """Every slot is Drained/Idle: run the completion action once."""
    d = startd.draining
    if d is None or d.completed_action_done:
        return
    if not all(s.pair == (S.DRAINED, A.IDLE) for s in startd.slots):
        return
    d.completed_action_done = True
    if d.on_completion is DrainCompletion.RESUME:
        cancel_drain(startd, now, None)
    elif d.on_completion in DAEMON_ACTIONS:
        kind = DAEMON_ACTIONS[d.on_completion]
        startd.emit(DaemonAction(kind, no_restart=kind is DaemonActionKind.EXIT))


def cancel_drain(startd: Startd, now: float, request_id: str | None) -> bool:
    """End the drain (matching ``request_id`` when given); slots go back to Owner (34/35)."""
    d = startd.draining
    if d is None or (request_id is not None and request_id != d.request_id):
        return False
    for slot in startd.slots:
        dynamic.account_unclaimed(startd, slot, now)
    startd.draining = None
    startd.drain_totals.last_stop = now
    for slot in list(startd.slots):
        startd.mark_changed(slot)
        if startd.is_live(slot):
            startd.eval_slot(slot, now)
    return True
