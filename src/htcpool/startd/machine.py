"""``Startd``: the execute point's sans-I/O core.

Entry points all take ``now`` and return a list of actions:

* ``handle(message, now)`` - a message from the negotiator, schedd, starter,
  administrator or sensors (``messages``);
* ``handle_timer(now)`` - fire due timers (match timeouts, claim leases, vacate
  deadlines, KILLING_TIMEOUT) and run the periodic policy evaluation when it is due;
* ``evaluate(now)`` - recompute load/idle/clock and evaluate every slot's policy now.

``next_deadline()`` says when ``handle_timer`` next has work. Every state change goes
through the table in ``states``; ``history`` records ``(slot, number, from, to)``
for each transition taken. Enter/leave actions follow ``ResState::enter_action`` /
``leave_action``; after entering an Idle or Retiring activity (outside Backfill) the
slot's policy is evaluated again at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.classad import ClassAd, EvalContext, fixed_clock
from htcpool.classad.match import requirements_hold
from htcpool.startd import carving, dynamic
from htcpool.startd.ads import (
    NORMAL_REQUIREMENTS,
    UNAVAILABLE,
    publish_static,
    within_resource_limits,
)
from htcpool.startd.claim import (
    INFINITE,
    Claim,
    max_job_retirement_time,
    max_vacate_time,
    retirement_expired,
    retirement_remaining,
)
from htcpool.startd.drain import ON_COMPLETION, DrainState, DrainTotals
from htcpool.startd.errors import StartdUsageError
from htcpool.startd.evaluation import suggest
from htcpool.startd.layout import Inventory, build_layout
from htcpool.startd.messages import (
    Action,
    ActivateClaim,
    ActivateReply,
    Alive,
    BackfillClientExited,
    BackfillClientStarted,
    BenchmarksFinished,
    CancelDrain,
    ClaimReply,
    ContinueClaim,
    ContinueJob,
    DaemonAction,
    DeactivateClaim,
    DeactivateReply,
    Drain,
    DrainReply,
    FinalJobUpdate,
    HardKill,
    HoldJob,
    KillBackfillClient,
    KillStarterFamily,
    MatchNotification,
    Message,
    NotifySchedd,
    PolicyProblem,
    ReleaseClaim,
    RequestClaim,
    RunBenchmarks,
    SendAd,
    SensorReadings,
    Shutdown,
    SoftKill,
    StartBackfillClient,
    StarterExited,
    StartJob,
    SuspendClaim,
    SuspendJob,
    Vacate,
)
from htcpool.startd.policy import CompiledPolicy, Evaluator, compile_policy, parse
from htcpool.startd.settings import StartdSettings
from htcpool.startd.slot import PARTITIONABLE, STATIC, Slot
from htcpool.startd.states import Activity, Event, State, step

A, S, E = Activity, State, Event
CLAIMED_LIKE = (S.CLAIMED, S.PREEMPTING)


class Startd:
    """The startd's decisions for one machine; see the module docstring."""

    def __init__(self, settings: StartdSettings, now: float, *, inventory: Inventory | None = None,
                 disk: int | None = None, local_zone: int = 0) -> None:
        self.settings = settings
        self.start_time = now
        self.local_zone = local_zone
        self.inventory = inventory or Inventory.from_settings(settings)
        self.disk_total = settings.disk if settings.disk is not None else (disk if disk is not None else 10**8)
        self.readings = SensorReadings()
        self.keyboard_activity: float | None = None
        self.console_activity: float | None = None
        self.last_benchmark = 0.0
        self.mips = 0
        self.kflops = 0
        self.draining: DrainState | None = None
        self.drain_totals = DrainTotals()
        self.shutdown: str | None = None
        self.history: list[tuple[str, int, str, str]] = []
        self.slots: list[Slot] = []
        self._seq = 0
        self._actions: list[Action] = []
        self._changed: dict[str, Slot] = {}
        self._next_poll = now
        self._next_update = now
        self._ctx = EvalContext(clock=fixed_clock(now), local_zone=local_zone)
        self.backfill_enabled = settings.enable_backfill and bool(settings.backfill_system)
        custom = self.inventory.names()
        self._wrl = parse(settings.within_resource_limits or within_resource_limits(custom, False))
        self._wrl_cp = parse(settings.within_resource_limits or within_resource_limits(custom, True))
        self._policies: dict[int, CompiledPolicy] = {}
        for number, stype in settings.slot_types.items():
            self._policies[number] = compile_policy(settings.policy, stype.policy)
        self._policies[0] = compile_policy(settings.policy)
        self._modify = {attr: parse(text) for attr, text in settings.modify_request_exprs.items()}
        specs = build_layout(settings, self.disk_total, self.inventory)
        self.totals: dict[str, object] = {
            "TotalCpus": settings.num_cpus, "TotalMemory": settings.memory, "TotalDisk": self.disk_total,
            "TotalVirtualMemory": settings.swap, "DetectedCpus": settings.detected_cpus,
            "DetectedMemory": settings.detected_memory, "DetectedDisk": self.disk_total,
            "TotalSlots": len(specs),
            "MachineResources": " ".join(["Cpus", "Memory", "Disk", "Swap", *custom]),
        }
        for name in custom:
            self.totals[f"Total{name}"] = self.inventory.total(name)
            self.totals[f"Detected{name}"] = self.inventory.total(name)
            if name in self.inventory.ids:
                self.totals[f"Detected{name}"] = ", ".join(self.inventory.ids[name])
        for spec in specs:
            kind = PARTITIONABLE if spec.partitionable else STATIC
            type_settings = settings.slot_types.get(spec.slot_type)
            prefix = (type_settings.name_prefix if type_settings and type_settings.name_prefix else settings.resource_prefix)
            id_str = f"{prefix}{spec.slot_id}"
            slot = Slot(spec.slot_id, spec.slot_type, kind, id_str, f"{id_str}@{settings.hostname}",
                        spec.resources.copy(), spec.resources.copy(), self._policies[spec.slot_type],
                        Claim(self._new_claim_id(id_str)), entered_state=now, entered_activity=now,
                        accounted_at=now)
            slot.consumption_policy = spec.partitionable and (
                type_settings.consumption_policy if type_settings else settings.consumption_policy)
            self._publish_static(slot)
            self.slots.append(slot)
            for attr, problem in slot.policy.problems:
                self._report(slot, attr, problem)
        self.evaluate(now)

    # ------------------------------------------------------------------ public API
    def handle(self, message: Message, now: float) -> list[Action]:
        """Process one message; returns the actions it causes."""
        self._set_now(now)
        handler: Callable[[Startd, Any, float], None] | None = _HANDLERS.get(type(message))
        if handler is None:
            raise StartdUsageError(f"unknown message {type(message).__name__}")
        handler(self, message, now)
        return self._flush(now)

    def handle_timer(self, now: float) -> list[Action]:
        """Fire every timer due at ``now``, then poll if a poll is due."""
        self._set_now(now)
        for slot in list(self.slots):
            if slot not in self.slots:
                continue
            claim = slot.claim
            if claim.match_deadline is not None and now >= claim.match_deadline:
                claim.match_deadline = None
                if slot.state is S.MATCHED:
                    self.change(slot, E.MATCH_GONE, now)
            if claim.lease_expires is not None and now >= claim.lease_expires and slot.state in CLAIMED_LIKE:
                claim.lease_expires = None
                claim.schedd_closed = True
                self.kill_claim(slot, now)
            if slot.vacate_deadline is not None and now >= slot.vacate_deadline:
                slot.vacate_deadline = None
                if slot.starter_active:
                    self._emit(HardKill(slot.name, slot.claim.id))
                    slot.killing_deadline = now + self.settings.killing_timeout
            if slot.killing_deadline is not None and now >= slot.killing_deadline:
                slot.killing_deadline = None
                if slot.starter_active:
                    self._emit(KillStarterFamily(slot.name))
        if now >= self._next_poll:
            self._poll(now)
        return self._flush(now)

    def next_deadline(self) -> float | None:
        """The earliest time ``handle_timer`` has something to do."""
        times = [self._next_poll]
        for slot in self.slots:
            for t in (slot.claim.match_deadline, slot.claim.lease_expires, slot.vacate_deadline,
                      slot.killing_deadline):
                if t is not None:
                    times.append(t)
        return min(times)

    def evaluate(self, now: float) -> list[Action]:
        """Recompute machine values and evaluate every slot's policy now."""
        self._set_now(now)
        self._poll(now)
        return self._flush(now)

    def ads(self) -> dict[str, ClassAd]:
        """Current slot ads by slot name."""
        return {s.name: s.ad for s in self.slots}

    def slot(self, name: str) -> Slot:
        for s in self.slots:
            if s.name == name or s.id_str == name:
                return s
        raise StartdUsageError(f"no slot named {name!r}")

    # ------------------------------------------------------------------ internals
    def _set_now(self, now: float) -> None:
        self._ctx = EvalContext(clock=fixed_clock(now), local_zone=self.local_zone)

    @property
    def ctx(self) -> EvalContext:
        return self._ctx

    def _new_claim_id(self, id_str: str) -> str:
        self._seq += 1
        return f"<{self.settings.hostname}>#{int(self.start_time)}#{self._seq}#{id_str}"

    def _emit(self, action: Action) -> None:
        self._actions.append(action)

    def _report(self, slot: Slot, knob: str, problem: str) -> None:
        if knob not in slot.reported:
            slot.reported.add(knob)
            self._emit(PolicyProblem(slot.name, knob, problem))

    def _publish_static(self, slot: Slot) -> None:
        wrl = self._wrl_cp if slot.consumption_policy else self._wrl
        cons = carving.consumption_nodes(self.settings, slot, self.inventory.names())
        for attr, problem in publish_static(slot, self.settings, self.inventory, self.totals, wrl, cons):
            self._report(slot, attr, problem)

    def _flush(self, now: float) -> list[Action]:
        self._shutdown_check()
        for slot in self._changed.values():
            if slot in self.slots:
                dynamic.publish_dynamic(self, slot, now)
                self._emit(SendAd(slot.name, slot.ad.copy()))
        self._changed.clear()
        out, self._actions = self._actions, []
        return out

    def evaluator(self, slot: Slot, job: ClassAd | None = None) -> Evaluator:
        return Evaluator(slot.ad, job, self._ctx)

    def _check(self, slot: Slot, ev: Evaluator) -> None:
        for knob, problem in ev.errors:
            self._report(slot, knob, problem)
        if not ev.errors:
            return

    def _poll(self, now: float) -> None:
        dynamic.compute_machine(self, now)
        dynamic.publish_all(self, now)
        for slot in list(self.slots):
            if slot in self.slots:
                self.eval_slot(slot, now)
        self._check_drain(now)
        interval = self.settings.polling_interval if dynamic.needs_fast_poll(self) else self.settings.update_interval
        self._next_poll = now + interval
        if now >= self._next_update:
            self._next_update = now + self.settings.update_interval
            for slot in self.slots:
                self._changed[slot.name] = slot

    def eval_slot(self, slot: Slot, now: float, depth: int = 0) -> None:
        """Evaluate one slot's policy and apply the suggested transition (or periodic actions)."""
        if depth > 8 or slot not in self.slots:
            return
        job = slot.claim.job if slot.claim.job is not None else slot.claim.request
        ev = self.evaluator(slot, job)
        event = suggest(self, slot, ev, now)
        self._check(slot, ev)
        if event is not None:
            self.change(slot, event, now, depth + 1)
            return
        if slot.state is S.UNCLAIMED and slot.activity is A.IDLE and not slot.benchmarked_last \
                and not slot.is_dynamic and self.evaluator(slot).true("RunBenchmarks"):
            self.change(slot, E.RUN_BENCHMARKS, now, depth + 1)
            self._emit(RunBenchmarks(slot.name))
        if slot.state is S.DRAINED and slot.activity is A.IDLE and self.draining is not None:
            self._drain_completion(now)

    # ------------------------------------------------------------------ state changes
    def change(self, slot: Slot, event: Event, now: float, depth: int = 0) -> None:
        """Apply ``event`` through the table, with leave and enter actions."""
        t = step(slot.state, slot.activity, event)
        old_state, old_act = slot.state, slot.activity
        slot.benchmarked_last = old_act is A.BENCHMARKING
        self._leave(slot, old_state, old_act, t.target, now)
        slot.record_history(now)
        slot.state, slot.activity = t.target
        if slot.state is not old_state:
            slot.entered_state = now
        slot.entered_activity = now
        if slot.destination is slot.state:
            slot.destination = None
        self.history.append((slot.name, t.number, f"{old_state.value}/{old_act.value}",
                             f"{slot.state.value}/{slot.activity.value}"))
        self._changed[slot.name] = slot
        if self._enter(slot, old_state, old_act, now, depth):
            return
        if slot.state not in (S.BACKFILL, S.DELETE) and slot.activity in (A.IDLE, A.RETIRING):
            dynamic.publish_dynamic(self, slot, now)
            self.eval_slot(slot, now, depth + 1)

    def _leave(self, slot: Slot, state: State, act: Activity, target: tuple[State, Activity], now: float) -> None:
        claim = slot.claim
        if state is S.CLAIMED and act is A.SUSPENDED:
            if claim.suspended_since is not None:
                claim.suspended_total += now - claim.suspended_since
                claim.suspended_since = None
            if slot.starter_active and target[1] is not A.IDLE:
                self._emit(ContinueJob(slot.name, claim.id))
        if state is S.CLAIMED and target[0] not in CLAIMED_LIKE:
            claim.lease_expires = None
        if state is S.PREEMPTING and target[0] is not S.PREEMPTING:
            dynamic.clear_claim_attrs(slot)

    def _enter(self, slot: Slot, old_state: State, old_act: Activity, now: float, depth: int) -> bool:
        """Enter actions; True when they already moved the slot on."""
        state, act = slot.state, slot.activity
        claim = slot.claim
        if state is S.DELETE:
            carving.delete_dslot(self, slot, now)
            return True
        if state is S.OWNER:
            if old_state is not S.OWNER:
                slot.claim = Claim(self._new_claim_id(slot.id_str))
                slot.preempting = None
            return False
        if state is S.MATCHED:
            claim.match_deadline = now + self.settings.match_timeout
            return False
        if state is S.CLAIMED:
            if old_state is not S.CLAIMED:
                claim.begin = now
                claim.match_deadline = None
                if claim.lease and claim.lease_expires is None:
                    claim.lease_expires = now + claim.lease
                slot.preempting_id = self._new_claim_id(slot.id_str)
            if act is A.SUSPENDED:
                claim.suspended_since = now
                if slot.starter_active:
                    self._emit(SuspendJob(slot.name, claim.id))
            if act is A.RETIRING and not slot.starter_active:
                self.change(slot, E.PREEMPT_VACATE, now, depth + 1)
                return True
            return False
        if state is S.PREEMPTING:
            if act is A.KILLING and old_act is A.VACATING:
                if slot.starter_active:
                    self._emit(HardKill(slot.name, claim.id))
                    slot.vacate_deadline = None
                    slot.killing_deadline = now + self.settings.killing_timeout
                return False
            if not slot.starter_active:
                self.leave_preempting(slot, now, depth)
                return True
            ev = self.evaluator(slot, claim.job)
            if claim.preempt_was_true and ev.true("WANT_HOLD"):
                reason = ev.value("WANT_HOLD_REASON")
                sub = ev.number("WANT_HOLD_SUBCODE")
                self._emit(HoldJob(slot.name, claim.id,
                                   reason if isinstance(reason, str) else "The startd put this job on hold (WANT_HOLD)",
                                   21, int(sub or 0), act is A.KILLING))
            elif act is A.VACATING:
                mjrt = self.mjrt(slot, now)
                remaining = retirement_remaining(claim, mjrt, now)
                vacate = max_vacate_time(claim, claim.pledged_vacate_time, remaining, self._ctx, slot.ad)
                kill_sig = claim.job.get("KillSig") if claim.job is not None else None
                self._emit(SoftKill(slot.name, claim.id, kill_sig if isinstance(kill_sig, str) else "SIGTERM",
                                    vacate))
                slot.vacate_deadline = now + vacate
            if act is A.KILLING:
                self._emit(HardKill(slot.name, claim.id))
                slot.killing_deadline = now + self.settings.killing_timeout
            return False
        if state is S.BACKFILL:
            if act is A.IDLE:
                if slot.destination is not None and slot.destination is not S.BACKFILL:
                    dest = {S.OWNER: E.BACKFILL_TO_OWNER, S.CLAIMED: E.BACKFILL_TO_CLAIMED,
                            S.MATCHED: E.BACKFILL_TO_MATCHED}[slot.destination]
                    self.change(slot, dest, now, depth + 1)
                    return True
                if not slot.backfill_client:
                    self._emit(StartBackfillClient(slot.name))
            if act is A.KILLING:
                self._emit(KillBackfillClient(slot.name))
            return False
        return False

    def leave_preempting(self, slot: Slot, now: float, depth: int = 0) -> None:
        """The starter is gone: release the old claim, then Claimed/Idle (23/24) or Owner (22/25)."""
        claim = slot.claim
        slot.vacate_deadline = slot.killing_deadline = None
        if claim.request is not None and not claim.schedd_closed:
            self._emit(NotifySchedd(claim.schedd, claim.id, "release", claim.vacate_reason))
        pre = slot.preempting
        if pre is not None and pre.request is not None:
            ev = self.evaluator(slot, pre.request)
            if not ev.true("IsOwner") and not ev.defined_false("START"):
                slot.claim = pre
                slot.preempting = None
                pre.lease = pre.lease or 0.0
                self._emit(ClaimReply(pre.id, True, slot=slot.name))
                self.change(slot, E.PREEMPTION_DONE_CLAIMED, now, depth + 1)
                return
            self._emit(ClaimReply(pre.id, False, "slot no longer willing", slot=slot.name))
        self.change(slot, E.PREEMPTION_DONE_OWNER, now, depth + 1)

    # ------------------------------------------------------------------ claim endings
    def retire_claim(self, slot: Slot, now: float, *, reversible: bool, peaceful: bool = False,
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
                self.change(slot, E.RETIRE, now)
            elif slot.activity is A.IDLE:
                self.change(slot, E.PREEMPT_VACATE, now)
            elif slot.activity is A.RETIRING:
                self.eval_slot(slot, now)
        elif slot.state is S.MATCHED:
            self.change(slot, E.MATCH_GONE, now)
        elif slot.state is S.BACKFILL:
            self._backfill_toward(slot, S.OWNER, now)

    def kill_claim(self, slot: Slot, now: float, reason: str = "") -> None:
        claim = slot.claim
        if reason:
            claim.vacate_reason = reason
        if slot.state is S.CLAIMED:
            if slot.activity is A.CLEANING:
                slot.preempt_pending = True
                self._emit(HardKill(slot.name, claim.id))
                return
            self.change(slot, E.PREEMPT_KILL, now)
        elif slot.state is S.PREEMPTING and slot.activity is A.VACATING:
            self.change(slot, E.PREEMPT_KILL, now)
        elif slot.state is S.MATCHED:
            self.change(slot, E.MATCH_GONE, now)
        elif slot.state is S.BACKFILL:
            self._backfill_toward(slot, S.OWNER, now)

    def release_claim(self, slot: Slot, now: float, reason: str = "") -> None:
        if slot.state is S.CLAIMED and slot.activity is not A.CLEANING:
            slot.claim.vacate_reason = reason or slot.claim.vacate_reason
            self.change(slot, E.PREEMPT_VACATE, now)
        else:
            self.kill_claim(slot, now, reason)

    def _backfill_toward(self, slot: Slot, dest: State, now: float) -> None:
        slot.destination = dest
        if slot.activity is A.BUSY:
            self.change(slot, E.EVICT_BACKFILL, now)
        elif slot.activity is A.IDLE:
            event = {S.OWNER: E.BACKFILL_TO_OWNER, S.CLAIMED: E.BACKFILL_TO_CLAIMED,
                     S.MATCHED: E.BACKFILL_TO_MATCHED}[dest]
            self.change(slot, event, now)

    # ------------------------------------------------------------------ retirement
    def mjrt(self, slot: Slot, now: float) -> float:
        claim = slot.claim
        mjrt = max_job_retirement_time(slot.ad, claim.job, self._ctx)
        if claim.peaceful or self.shutdown == "peaceful":
            return mjrt if mjrt == -1 else INFINITE
        if self.draining is not None:
            if self.draining.mjrt_override is not None:
                return min(mjrt, self.draining.mjrt_override)
            if claim.accepted_while_draining:
                return claim.job_run_time(now) + self.graceful_time_remaining(now)
        return mjrt

    def retirement_left(self, slot: Slot, now: float) -> float:
        return retirement_remaining(slot.claim, self.mjrt(slot, now), now)

    def retirement_expired(self, slot: Slot, now: float) -> bool:
        claim = slot.claim
        if claim.job is None:
            return True
        remaining = self.retirement_left(slot, now)
        vacate = max_vacate_time(claim, claim.pledged_vacate_time, remaining, self._ctx, slot.ad)
        return retirement_expired(remaining, vacate)

    def may_unretire(self, slot: Slot) -> bool:
        return (self.draining is None and self.shutdown is None and slot.claim.may_unretire
                and slot.preempting is None)

    def graceful_time_remaining(self, now: float) -> float:
        """The longest remaining retirement among the drain's original jobs."""
        if self.draining is None:
            return 0.0
        best = 0.0
        for slot in self.slots:
            if slot.claim.id in self.draining.original_claims and slot.claim.job is not None:
                mjrt = max_job_retirement_time(slot.ad, slot.claim.job, self._ctx)
                if self.draining.mjrt_override is not None:
                    mjrt = min(mjrt, self.draining.mjrt_override)
                best = max(best, retirement_remaining(slot.claim, mjrt, now))
        return best

    def claim_worklife_expired(self, slot: Slot, ev: Evaluator, now: float) -> bool:
        claim = slot.claim
        if claim.activations == 0 or claim.begin is None:
            return False
        worklife = ev.number("CLAIM_WORKLIFE")
        if worklife is None or worklife < 0:
            return False
        return now - claim.begin > worklife

    def charge_badput(self, slot: Slot, now: float) -> None:
        if self.draining is not None and slot.claim.job is not None:
            self.drain_totals.badput += slot.resources.cpus * slot.claim.job_run_time(now)

    # ------------------------------------------------------------------ draining
    def _check_drain(self, now: float) -> None:
        d = self.draining
        if d is None or d.originals_gone:
            return
        if any(s.claim.id in d.original_claims and s.state in CLAIMED_LIKE for s in self.slots):
            return
        d.originals_gone = True
        d.start_expr = None
        d.mjrt_override = 0.0
        for slot in list(self.slots):
            if slot.state is S.CLAIMED:
                self.retire_claim(slot, now, reversible=True, reason="draining completed")

    def _drain_completion(self, now: float) -> None:
        d = self.draining
        if d is None or d.completed_action_done:
            return
        if not all(s.pair == (S.DRAINED, A.IDLE) for s in self.slots if not s.is_dynamic):
            return
        d.completed_action_done = True
        if d.on_completion == "resume":
            self.cancel_drain(now, None)
        elif d.on_completion in ("exit", "restart", "reconfig"):
            self._emit(DaemonAction(d.on_completion))

    def cancel_drain(self, now: float, request_id: str | None) -> bool:
        d = self.draining
        if d is None or (request_id is not None and request_id != d.request_id):
            return False
        self.draining = None
        self.drain_totals.last_stop = now
        for slot in list(self.slots):
            self._changed[slot.name] = slot
            if slot in self.slots:
                self.eval_slot(slot, now)
        return True

    def start_drain(self, msg: Drain, now: float) -> DrainReply:
        if self.draining is not None:
            return DrainReply(False, self.draining.request_id, "DRAINING_ALREADY_IN_PROGRESS")
        if msg.how_fast not in ("graceful", "quick", "fast") or msg.on_completion not in ON_COMPLETION:
            return DrainReply(False, "", f"bad drain request {msg.how_fast}/{msg.on_completion}")
        if msg.check_expr:
            check = parse(msg.check_expr)
            for slot in self.slots:
                if slot.ad._evaluate_node(check, None, self._ctx) is not True:
                    return DrainReply(False, "", f"DRAINING_CHECK_EXPR_FAILED on {slot.name}")
        start_text = msg.start_expr or self.settings.default_draining_start_expr
        self.drain_totals.requests += 1
        rid = msg.request_id or str(self.drain_totals.requests)
        d = DrainState(rid, msg.how_fast, msg.on_completion, msg.reason, now,
                       parse(start_text) if start_text else None, start_text)
        d.original_claims = {s.claim.id for s in self.slots if s.state in CLAIMED_LIKE}
        self.draining = d
        self.drain_totals.last_start = now
        for slot in list(self.slots):
            if slot not in self.slots:
                continue
            self._changed[slot.name] = slot
            if slot.state is S.CLAIMED:
                if msg.how_fast == "fast":
                    self.charge_badput(slot, now)
                    self.kill_claim(slot, now, "draining (fast)")
                elif msg.how_fast == "quick":
                    d.mjrt_override = 0.0
                    self.retire_claim(slot, now, reversible=False, reason="draining (quick)")
                elif slot.activity is A.BUSY:
                    self.retire_claim(slot, now, reversible=True, reason="draining")
        self._poll(now)
        return DrainReply(True, rid)

    def requirements_node(self, slot: Slot) -> object:
        unavailable = (slot.state in (S.MATCHED, S.PREEMPTING, S.DRAINED) or self.draining is not None
                       or self.shutdown is not None or slot.preempting is not None)
        if not unavailable:
            return NORMAL_REQUIREMENTS
        if self.draining is not None and self.draining.start_expr is not None:
            return NORMAL_REQUIREMENTS
        return UNAVAILABLE

    # ------------------------------------------------------------------ message handlers
    def find_claim(self, claim_id: str) -> Slot | None:
        for slot in self.slots:
            if slot.claim.id == claim_id:
                return slot
        return None

    def _on_sensors(self, msg: SensorReadings, now: float) -> None:
        self.readings = msg
        if msg.keyboard_idle is not None:
            self.keyboard_activity = now - msg.keyboard_idle
        if msg.console_idle is not None:
            self.console_activity = now - msg.console_idle
        if msg.disk is not None and self.settings.disk is None:
            self.totals["DetectedDisk"] = msg.disk

    def _on_match(self, msg: MatchNotification, now: float) -> None:
        slot = self.find_claim(msg.claim_id)
        if slot is None or slot.destination is not None or slot.state is S.DRAINED:
            return
        if slot.state in (S.UNCLAIMED, S.OWNER) and not slot.is_partitionable:
            if slot.activity is A.IDLE or slot.activity is A.BENCHMARKING:
                self.change(slot, E.MATCH, now)
        elif slot.state is S.BACKFILL:
            self._backfill_toward(slot, S.MATCHED, now)

    def _on_request_claim(self, msg: RequestClaim, now: float) -> None:
        if self.shutdown is not None:
            self._emit(ClaimReply(msg.claim_id, False, "startd is shutting down"))
            return
        for slot in self.slots:
            if slot.state is S.CLAIMED and slot.preempting_id == msg.claim_id:
                self._preempting_request(slot, msg, now)
                return
        found = self.find_claim(msg.claim_id)
        if found is None:
            self._emit(ClaimReply(msg.claim_id, False, "unknown claim id"))
            return
        slot = found
        if self.draining is not None and self.graceful_time_remaining(now) < 20:
            self._emit(ClaimReply(msg.claim_id, False, "slot is draining"))
            return
        if slot.is_partitionable:
            carving.claim_partitionable(self, slot, msg, now)
            return
        rank = self.rank_of(slot, msg.request)
        if slot.state is S.BACKFILL:
            self._take_claim(slot, msg, rank, now)
            self._backfill_toward(slot, S.CLAIMED, now)
            self._emit(ClaimReply(msg.claim_id, True, slot=slot.name))
            return
        if slot.state not in (S.UNCLAIMED, S.OWNER, S.MATCHED):
            self._emit(ClaimReply(msg.claim_id, False, f"slot is {slot.state.value}"))
            return
        ev = self.evaluator(slot, msg.request)
        if not ev.true("START"):
            self._check(slot, ev)
            self._emit(ClaimReply(msg.claim_id, False, "START is not true for this request"))
            return
        self._take_claim(slot, msg, rank, now)
        self._emit(ClaimReply(msg.claim_id, True, slot=slot.name))
        self.change(slot, E.CLAIM, now)

    def _take_claim(self, slot: Slot, msg: RequestClaim, rank: float, now: float) -> None:
        claim = slot.claim
        claim.request, claim.schedd, claim.rank = msg.request, msg.schedd, rank
        claim.start_lease(msg.alive_interval, self.settings.max_claim_alives_missed, now)

    def rank_of(self, slot: Slot, request: ClassAd) -> float:
        ev = self.evaluator(slot, request)
        value = ev.number("Rank")
        self._check(slot, ev)
        return value or 0.0

    def _preempting_request(self, slot: Slot, msg: RequestClaim, now: float) -> None:
        rank = self.rank_of(slot, msg.request)
        if rank < slot.claim.rank:
            self._emit(ClaimReply(msg.claim_id, False, "rank lower than the current claim's"))
            return
        old = slot.preempting
        if old is not None:
            if rank < old.rank:
                self._emit(ClaimReply(msg.claim_id, False, "rank lower than the pending preempting claim's"))
                return
            self._emit(ClaimReply(old.id, False, "replaced by a better preempting claim"))
        pre = Claim(msg.claim_id, msg.request, msg.schedd, rank)
        pre.start_lease(msg.alive_interval, self.settings.max_claim_alives_missed, now)
        pre.lease_expires = None
        slot.preempting = pre
        slot.preempting_id = self._new_claim_id(slot.id_str)
        slot.claim.vacate_reason = ("preempted by a higher ranked job" if rank > slot.claim.rank
                                    else "preempted by a priority user")
        self._changed[slot.name] = slot
        self.eval_slot(slot, now)

    def _on_activate(self, msg: ActivateClaim, now: float) -> None:
        slot = self.find_claim(msg.claim_id)
        if slot is None or slot.pair != (S.CLAIMED, A.IDLE):
            where = "unknown claim" if slot is None else f"slot is {slot.state.value}/{slot.activity.value}"
            self._emit(ActivateReply(msg.claim_id, False, where))
            return
        dynamic.publish_dynamic(self, slot, now)
        if not requirements_hold(slot.ad, msg.job, self._ctx):
            self._emit(ActivateReply(msg.claim_id, False, "slot Requirements do not match the job"))
            return
        claim = slot.claim
        claim.job = msg.job
        claim.job_start = now
        claim.suspended_total = 0.0
        claim.activations += 1
        claim.rank = self.rank_of(slot, msg.job)
        claim.accepted_while_draining = self.draining is not None
        vacate = self.evaluator(slot, msg.job).number("MachineMaxVacateTime")
        claim.pledged_vacate_time = 600.0 if vacate is None else vacate
        slot.starter_active = True
        self.change(slot, E.ACTIVATE, now)
        self._emit(StartJob(slot.name, claim.id, msg.job))
        self._emit(ActivateReply(msg.claim_id, True))

    def claim_closing(self, slot: Slot, now: float) -> bool:
        ev = self.evaluator(slot, slot.claim.request)
        return (slot.preempting is not None or slot.activity is A.RETIRING or slot.state is S.PREEMPTING
                or self.draining is not None or not slot.claim.may_unretire
                or self.claim_worklife_expired(slot, ev, now))

    def _on_deactivate(self, msg: DeactivateClaim, now: float) -> None:
        slot = self.find_claim(msg.claim_id)
        if slot is None:
            return
        if slot.starter_active:
            self._emit(HardKill(slot.name, msg.claim_id) if msg.forcibly
                       else SoftKill(slot.name, msg.claim_id, "SIGTERM", slot.claim.pledged_vacate_time))
        self._emit(DeactivateReply(msg.claim_id, not self.claim_closing(slot, now)))

    def _on_release(self, msg: ReleaseClaim, now: float) -> None:
        for slot in self.slots:
            if slot.preempting is not None and slot.preempting.id == msg.claim_id:
                slot.preempting = None
                self._changed[slot.name] = slot
                self.eval_slot(slot, now)
                return
        found = self.find_claim(msg.claim_id)
        if found is not None and found.state in CLAIMED_LIKE:
            found.claim.schedd_closed = True
            self.kill_claim(found, now, "released by schedd")

    def _on_alive(self, msg: Alive, now: float) -> None:
        slot = self.find_claim(msg.claim_id)
        if slot is not None:
            slot.claim.renew(now)

    def _on_starter_exited(self, msg: StarterExited, now: float) -> None:
        slot = self.slot(msg.slot)
        slot.starter_active = False
        slot.vacate_deadline = slot.killing_deadline = None
        claim = slot.claim
        if slot.state is S.PREEMPTING:
            claim.job = None
            self.leave_preempting(slot, now)
            return
        if slot.state is not S.CLAIMED or slot.activity is A.IDLE:
            return
        if slot.activity is A.CLEANING and (slot.preempt_pending or slot.preempting is not None):
            slot.preempt_pending = False
            self.change(slot, E.PREEMPT_VACATE, now)
            return
        if slot.activity is A.RETIRING:
            claim.job = None
        self.change(slot, E.STARTER_EXITED, now)
        if slot.state is S.CLAIMED:
            claim.job = None
            claim.job_start = None
            dynamic.clear_job_attrs(slot)
            if slot.activity is A.IDLE:
                self.eval_slot(slot, now)

    def _on_final_update(self, msg: FinalJobUpdate, now: float) -> None:
        slot = self.slot(msg.slot)
        if slot.state is S.CLAIMED and slot.activity in (A.BUSY, A.RETIRING, A.SUSPENDED):
            self.change(slot, E.FINAL_UPDATE, now)

    def _on_benchmarks(self, msg: BenchmarksFinished, now: float) -> None:
        self.last_benchmark = now
        self.mips = msg.mips or self.mips
        self.kflops = msg.kflops or self.kflops
        slot = self.slot(msg.slot)
        if slot.pair == (S.UNCLAIMED, A.BENCHMARKING):
            self.change(slot, E.BENCHMARKS_DONE, now)

    def _on_backfill_started(self, msg: BackfillClientStarted, now: float) -> None:
        slot = self.slot(msg.slot)
        slot.backfill_client = True
        if slot.pair == (S.BACKFILL, A.IDLE):
            self.change(slot, E.BACKFILL_STARTED, now)

    def _on_backfill_exited(self, msg: BackfillClientExited, now: float) -> None:
        slot = self.slot(msg.slot)
        slot.backfill_client = False
        if slot.state is S.BACKFILL and slot.activity in (A.BUSY, A.KILLING):
            self.change(slot, E.BACKFILL_EXITED, now)

    def _on_vacate(self, msg: Vacate, now: float) -> None:
        targets = self.slots if msg.slot is None else [self.slot(msg.slot)]
        for slot in list(targets):
            if slot not in self.slots:
                continue
            if msg.fast:
                self.kill_claim(slot, now, "vacated (fast) by administrator")
            else:
                self.retire_claim(slot, now, reversible=False, reason="vacated by administrator")

    def _on_suspend(self, msg: SuspendClaim, now: float) -> None:
        slot = self.slot(msg.slot)
        if slot.state is S.CLAIMED and slot.activity in (A.BUSY, A.RETIRING):
            slot.claim.command_suspended = True
            self.change(slot, E.SUSPEND, now)

    def _on_continue(self, msg: ContinueClaim, now: float) -> None:
        slot = self.slot(msg.slot)
        if slot.pair == (S.CLAIMED, A.SUSPENDED):
            slot.claim.command_suspended = False
            in_retirement = slot.preempting is not None or not slot.claim.may_unretire
            self.change(slot, E.RETIRE if in_retirement else E.CONTINUE, now)

    def _on_shutdown(self, msg: Shutdown, now: float) -> None:
        self.shutdown = msg.how
        for slot in list(self.slots):
            if slot not in self.slots:
                continue
            self._changed[slot.name] = slot
            if msg.how == "fast":
                self.kill_claim(slot, now, "startd fast shutdown")
            else:
                self.retire_claim(slot, now, reversible=False, peaceful=msg.how == "peaceful",
                                  reason="startd shutdown")
        self._shutdown_check()

    def _shutdown_check(self) -> None:
        if self.shutdown is not None and self.shutdown != "done" and \
                not any(s.state in (S.CLAIMED, S.PREEMPTING, S.MATCHED) for s in self.slots):
            self.shutdown = "done"
            self._emit(DaemonAction("exit"))

    def _on_drain(self, msg: Drain, now: float) -> None:
        self._emit(self.start_drain(msg, now))

    def _on_cancel_drain(self, msg: CancelDrain, now: float) -> None:
        ok = self.cancel_drain(now, msg.request_id)
        self._emit(DrainReply(ok, msg.request_id or "", "" if ok else "no matching drain in progress"))


_HANDLERS: dict[type, Callable[[Startd, Any, float], None]] = {
    SensorReadings: Startd._on_sensors,
    MatchNotification: Startd._on_match,
    RequestClaim: Startd._on_request_claim,
    ActivateClaim: Startd._on_activate,
    DeactivateClaim: Startd._on_deactivate,
    ReleaseClaim: Startd._on_release,
    Alive: Startd._on_alive,
    StarterExited: Startd._on_starter_exited,
    FinalJobUpdate: Startd._on_final_update,
    BenchmarksFinished: Startd._on_benchmarks,
    BackfillClientStarted: Startd._on_backfill_started,
    BackfillClientExited: Startd._on_backfill_exited,
    Vacate: Startd._on_vacate,
    SuspendClaim: Startd._on_suspend,
    ContinueClaim: Startd._on_continue,
    Shutdown: Startd._on_shutdown,
    Drain: Startd._on_drain,
    CancelDrain: Startd._on_cancel_drain,
}


