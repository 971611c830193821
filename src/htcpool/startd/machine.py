"""``Startd``: the execute point's sans-I/O core - machine state and entry points.

Entry points all take ``now`` and return a list of actions:

* ``handle(message, now)`` - a message from the negotiator, schedd, starter,
  administrator or sensors; dispatched through ``handlers.HANDLERS``;
* ``handle_timer(now)`` - fire due timers (match timeouts, claim leases, vacate
  deadlines, KILLING_TIMEOUT, held starts of deferred jobs) and run the periodic
  policy evaluation when it is due;
* ``evaluate(now)`` - recompute load/idle/clock and evaluate every slot's policy now.

``next_deadline()`` says when ``handle_timer`` next has work. The work is spread over
modules of one concept each: ``evaluation`` decides which event a slot's policy asks
for, ``transitions`` applies it through the table with enter/leave actions,
``retirement`` ends claims and does the retirement/vacate arithmetic, ``activation``
starts jobs (at once or at their deferral time) and ends activations, ``drain`` runs
drains, ``carving`` partitionable slots, ``dynamic`` the moving slot attributes.
This class holds the machine's state and the services those modules share (the
action list, the live-slot index, evaluators, claim ids).

Slots live in ``slots`` (advertising order) and in a set and a name index kept in
step with it (``add_slot``/``remove_slot``), so "is this slot still here" and "which
slot is this" cost O(1) however many slots the machine has. Claim ids are indexed
too (``index_claims``, called wherever a slot's claim, preempting-claim id or pending
preempting claim changes): every message that names a claim finds its slot in O(1),
and every hit is checked against the slot's live claim, so a stale id never matches.
Starters of removed dynamic slots are tracked by claim id in ``dying``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from htcpool.classad import ClassAd, EvalContext, fixed_clock
from htcpool.classad.nodes import Node
from htcpool.protocol.admin import How
from htcpool.protocol.startd import (
    Action,
    DaemonAction,
    DaemonActionKind,
    HardKill,
    KillStarterFamily,
    Message,
    PolicyProblem,
    RunBenchmarks,
    SendAd,
    SensorReadings,
)
from htcpool.startd import activation, carving, dynamic, settle, transitions
from htcpool.startd.ads import machine_totals, publish_static, within_resource_limits
from htcpool.startd.claim import Claim
from htcpool.startd.claim_ids import ClaimSecrets, make_claim_id, seeded_secrets
from htcpool.startd.drain import DrainState, DrainTotals, check_drain, drain_completion
from htcpool.startd.errors import StartdUsageError
from htcpool.startd.evaluation import suggest
from htcpool.startd.handlers import HANDLERS, KEEPS_SETTLED, UNSETTLES_ITS_SLOTS
from htcpool.startd.layout import Inventory, ResourceConstraintError, SlotSpec, build_layout
from htcpool.startd.policy import CompiledPolicy, Evaluator, compile_policy, parse
from htcpool.startd.quiet import QuietSpell, quiet_spell
from htcpool.startd.retirement import kill_claim, retirement_left
from htcpool.startd.settings import StartdSettings
from htcpool.startd.slot import PARTITIONABLE, STATIC, DyingStarter, Slot
from htcpool.startd.states import CLAIMED_LIKE, CLAIMED_OR_MATCHED, Activity, Event, State

A, S, E = Activity, State, Event


class Startd:
    """The startd's decisions for one machine; see the module docstring."""

    def __init__(self, settings: StartdSettings, now: float, *, inventory: Inventory | None = None,
                 disk: int | None = None, local_zone: int = 0,
                 claim_secrets: ClaimSecrets | None = None) -> None:
        self.settings = settings
        #: the secret part of each claim id (startd.claim_ids): the live startd injects the
        #: ``secrets`` module; by default a generator seeded from the host and start time
        self._claim_secrets = claim_secrets or seeded_secrets(f"{settings.hostname}#{now!r}")
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
        #: how the startd is shutting down (None: it is not); ``shutdown_done`` once no claim is left
        self.shutdown: How | None = None
        self.shutdown_done = False
        self.history: list[tuple[str, int, str, str]] = []
        self.slots: list[Slot] = []
        self._live: set[Slot] = set()
        self._by_name: dict[str, Slot] = {}
        self._by_claim: dict[str, Slot] = {}
        self._claim_keys: dict[Slot, tuple[str, ...]] = {}
        self.dying: dict[str, DyingStarter] = {}
        self.changed: dict[str, Slot] = {}
        self.last_load_time: float | None = None
        self.cross_attrs: set[str] = set()
        #: slots the periodic poll may skip until something happens to the machine (``settle``)
        self.settled: set[Slot] = set()
        #: while every slot is settled and nothing moves, what a poll still changes (``quiet``)
        self._quiet: QuietSpell | None = None
        #: ``timers_deadline()``, kept during a quiet spell: a quiet poll moves no other timer, and
        #: anything else that reaches the machine (a keep-alive too) forgets it
        self._timers_at: float | None = None
        #: ``quiet_deadline()`` of the spell it was worked out for
        self._woken: tuple[QuietSpell | None, float] = (None, 0.0)
        #: how many times a slot was marked changed (``mark_changed``), and the slots the poll just
        #: published that ``_flush`` need not publish again (``_poll``)
        self._marks = 0
        self._fresh: frozenset[Slot] = frozenset()
        self._seq = 0
        self._actions: list[Action] = []
        self._next_poll = now
        self._poll_interval = 0.0
        self._next_update = now
        self._ctx = EvalContext(clock=fixed_clock(now), local_zone=local_zone)
        self.backfill_enabled = settings.enable_backfill and bool(settings.backfill_system)
        #: the machine's one backfill client: the slot name it runs under, and whether it runs
        self.backfill_client: str | None = None
        self.backfill_running = False
        #: resources the machine was left without, and why (a device constraint that cannot be met)
        self.resource_problems: list[ResourceConstraintError] = []
        specs = self._layout()
        self._compile_policies()
        self.totals = machine_totals(settings, self.inventory, self.disk_total, len(specs))
        for spec in specs:
            self._create_slot(spec, now)
        #: what the first evaluation asked for (ads, a backfill client …): the driver carries it out
        self.initial_actions: list[Action] = [
            PolicyProblem(settings.hostname, f"SLOT_TYPE_{e.slot_type}", f"{e}; the machine runs without its {e.resource}")
            for e in self.resource_problems]
        self.initial_actions += self.evaluate(now)

    def _layout(self) -> list[SlotSpec]:
        """The slot layout; a custom resource whose ``: constraint`` cannot be met is dropped
        (recorded in ``resource_problems``) rather than stopping the startd, and so is one whose
        inventory command reported nothing usable (the driver logged why)."""
        missing = [tag for tag in self.settings.resource_inventory if tag not in self.inventory.names()]
        while True:
            ignore = missing + [e.resource for e in self.resource_problems]
            try:
                return build_layout(self.settings, self.disk_total, self.inventory, self._ctx, ignore)
            except ResourceConstraintError as e:
                if e.resource in ignore:
                    raise
                self.resource_problems.append(e)
                self.inventory = self.inventory.without(e.resource)

    def _compile_policies(self) -> None:
        """Parse WithinResourceLimits, every slot type's policy and MODIFY_REQUEST_EXPR_* once."""
        settings = self.settings
        custom = self.inventory.names()
        self._wrl = parse(settings.within_resource_limits
                          or within_resource_limits(custom, False, settings.catalog_space))
        self._wrl_cp = parse(settings.within_resource_limits or within_resource_limits(custom, True))
        self._policies: dict[int, CompiledPolicy] = {}
        for number, stype in settings.slot_types.items():
            self._policies[number] = compile_policy(settings.policy, stype.policy)
        self._policies[0] = compile_policy(settings.policy)
        self.modify_request: dict[str, Node] = {
            attr: parse(text) for attr, text in settings.modify_request_exprs.items()}

    def _create_slot(self, spec: SlotSpec, now: float) -> None:
        """Make the static or partitionable slot ``spec`` describes, publish and index it."""
        settings = self.settings
        kind = PARTITIONABLE if spec.partitionable else STATIC
        type_settings = settings.slot_types.get(spec.slot_type)
        prefix = (type_settings.name_prefix if type_settings and type_settings.name_prefix
                  else settings.resource_prefix)
        id_str = f"{prefix}{spec.slot_id}"
        slot = Slot(spec.slot_id, spec.slot_type, kind, id_str, f"{id_str}@{settings.hostname}",
                    spec.resources.copy(), spec.resources.copy(), self._policies[spec.slot_type],
                    Claim(self.new_claim_id(id_str)), entered_state=now, entered_activity=now,
                    accounted_at=now)
        slot.consumption_policy = spec.partitionable and (
            type_settings.consumption_policy if type_settings else settings.consumption_policy)
        if slot.consumption_policy:
            wanted = type_settings.num_claims if type_settings else settings.num_claims
            count = math.ceil(slot.resources.cpus) if wanted is None else wanted
            slot.spare_claims = [Claim(self.new_claim_id(id_str)) for _ in range(count)]
        self.publish_static(slot)
        self.add_slot(slot)
        for attr, problem in slot.policy.problems:
            self.report(slot, attr, problem)

    # ------------------------------------------------------------------ public API
    def handle(self, message: Message, now: float) -> list[Action]:
        """Process one message; returns the actions it causes."""
        self._set_now(now)
        self._timers_at = None
        self._fresh = frozenset()
        kind = type(message)
        if kind not in KEEPS_SETTLED:
            if kind not in UNSETTLES_ITS_SLOTS:
                self.settled.clear()
            # a quiet spell ends too; one that outlives a renewed lease ends at the old lease time
            self._quiet = None
        handler: Callable[[Startd, Any, float], None] | None = HANDLERS.get(kind)
        if handler is None:
            raise StartdUsageError(f"unknown message {kind.__name__}")
        handler(self, message, now)
        if kind in UNSETTLES_ITS_SLOTS:
            self._unsettle_changed()
        return self._flush(now)

    def _unsettle_changed(self) -> None:
        """The slots marked changed since the last flush, and their p-slots, are evaluated at the
        next poll (``handlers.UNSETTLES_ITS_SLOTS``)."""
        settled = self.settled
        if settled:
            for slot in self.changed.values():
                settled.discard(slot)
                if slot.parent is not None:
                    settled.discard(slot.parent)

    def handle_timer(self, now: float) -> list[Action]:
        """Fire every timer due at ``now``, then poll if a poll is due."""
        self._set_now(now)
        self._fresh = frozenset()
        spell = self._quiet
        if spell is not None and self._next_poll <= now < spell.until and now < self._next_update:
            self._quiet_poll(now, spell)
            return []
        self._quiet = None
        self._timers_at = None
        for slot in list(self.slots):
            if not self.is_live(slot):
                continue
            claim = slot.claim
            if self.settled and self._timer_due(slot, now):
                self.settled.clear()
            if claim.start_at is not None:
                activation.start_due(self, slot, now)
            if claim.match_deadline is not None and now >= claim.match_deadline:
                claim.match_deadline = None
                if slot.state is S.MATCHED:
                    transitions.change(self, slot, E.MATCH_GONE, now)
            if claim.lease_expires is not None and now >= claim.lease_expires and slot.state in CLAIMED_LIKE:
                claim.lease_expires = None
                claim.schedd_closed = True
                kill_claim(self, slot, now)
            if slot.vacate_deadline is not None and now >= slot.vacate_deadline:
                # the vacate time ran out: escalate to a hard kill, without changing the
                # activity (Starter::softkillTimeout); KILL may still move it to Killing (21)
                slot.vacate_deadline = None
                if slot.starter_active:
                    self.emit(HardKill(slot.name, slot.claim.id))
                    slot.killing_deadline = now + self.settings.killing_timeout
            if slot.killing_deadline is not None and now >= slot.killing_deadline:
                slot.killing_deadline = None
                if slot.starter_active:
                    self.emit(KillStarterFamily(slot.name, slot.claim.id))
        for gone in self.dying.values():
            if gone.killing_deadline is not None and now >= gone.killing_deadline:
                gone.killing_deadline = None
                self.emit(KillStarterFamily(gone.slot_name, gone.claim_id))
        polled = now >= self._next_poll
        if polled:
            self._poll(now, incremental=True)
        out = self._flush(now)
        if polled and not out:
            self._quiet = quiet_spell(self, self._poll_interval)
        return out

    def _quiet_poll(self, now: float, spell: QuietSpell) -> None:
        """A due poll of a quiet machine (``quiet``): what ``_poll`` would change, and no more."""
        self.last_load_time = now
        for slot in self.slots:
            slot.accounted_at = now
        self.drain_totals.expected_at = None
        self._next_poll = now + spell.interval

    def quiet_deadline(self) -> float | None:
        """The earliest time ``handle_timer`` has more to do than a quiet poll (``quiet``): the
        first poll of the spell at or after the periodic update, or the end of the spell, if that
        comes first. A driver that leaves the quiet polls out (``catch_up``) wakes the machine
        then; ``next_deadline`` outside a spell."""
        spell = self._quiet
        if spell is None:
            return self.next_deadline()
        woken = self._woken
        # the same all through one spell: its polls keep to the same times, and a keep-alive (the one
        # message that keeps the spell) moves neither the spell's end nor the periodic update
        if woken[0] is spell:
            return woken[1]
        due, end = self._next_poll, min(spell.until, self._next_update)
        while due < end:  # the polls' times as the polls add them up, one interval at a time
            due += spell.interval
        self._woken = (spell, min(due, spell.until))
        return self._woken[1]

    def catch_up(self, now: float, inclusive: bool) -> None:
        """The quiet polls a driver left out (``quiet_deadline``), due before ``now``, or at
        ``now`` too when ``inclusive`` (they would have come before the event at hand): each
        changes only what the next one changes again, so only the last is made."""
        spell = self._quiet
        if spell is None:
            return
        due, last = self._next_poll, None
        while (due < now or (inclusive and due == now)) and due < spell.until and due < self._next_update:
            last = due
            due += spell.interval
        if last is not None:
            self._set_now(last)
            self._fresh = frozenset()
            self._quiet_poll(last, spell)

    def next_deadline(self) -> float | None:
        """The earliest time ``handle_timer`` has something to do."""
        timers = self._timers_at
        if timers is None:
            timers = self.timers_deadline()
            if self._quiet is not None:
                self._timers_at = timers
        return min(self._next_poll, timers)

    def timers_deadline(self) -> float:
        """The earliest of the machine's timers other than the poll (a claim's match deadline or
        lease, a vacate or kill deadline, a held start, a dying starter's kill); inf when none."""
        times = [math.inf]
        for slot in self.slots:
            for t in (slot.claim.match_deadline, slot.claim.lease_expires, slot.vacate_deadline,
                      slot.killing_deadline, activation.next_start(slot)):
                if t is not None:
                    times.append(t)
        times += [g.killing_deadline for g in self.dying.values() if g.killing_deadline is not None]
        return min(times)

    def evaluate(self, now: float) -> list[Action]:
        """Recompute machine values and evaluate every slot's policy now."""
        self._set_now(now)
        self.settled.clear()
        self._quiet = None
        self._timers_at = None
        self._poll(now)
        return self._flush(now)

    def ads(self) -> dict[str, ClassAd]:
        """Current slot ads by slot name."""
        return {s.name: s.ad for s in self.slots}

    def slot(self, name: str) -> Slot:
        """The slot called ``name`` (``slot1@host``) or with id string ``name`` (``slot1``)."""
        found = self._by_name.get(name)
        if found is None:
            raise StartdUsageError(f"no slot named {name!r}")
        return found

    def retirement_left(self, slot: Slot, now: float) -> float:
        """Seconds of retirement the slot's job has left (``retirement.retirement_left``)."""
        return retirement_left(self, slot, now)

    # ------------------------------------------------------------------ slot index
    def is_live(self, slot: Slot) -> bool:
        """Whether ``slot`` still exists (a deleted dynamic slot does not)."""
        return slot in self._live

    def add_slot(self, slot: Slot, index: int | None = None) -> None:
        if index is None:
            self.slots.append(slot)
        else:
            self.slots.insert(index, slot)
        self._live.add(slot)
        self._by_name[slot.name] = slot
        self._by_name.setdefault(slot.id_str, slot)
        self.index_claims(slot)

    def remove_slot(self, slot: Slot) -> None:
        self.slots.remove(slot)
        self._live.discard(slot)
        for key in (slot.name, slot.id_str):
            if self._by_name.get(key) is slot:
                del self._by_name[key]
        self.index_claims(slot)

    def index_claims(self, slot: Slot) -> None:
        """(Re)index the claim ids ``slot`` answers to; a removed slot answers to none."""
        for key in self._claim_keys.pop(slot, ()):
            if self._by_claim.get(key) is slot:
                del self._by_claim[key]
        if not self.is_live(slot):
            return
        keys = tuple(k for k in (slot.claim.id, slot.preempting_id,
                                 slot.preempting.id if slot.preempting is not None else "",
                                 *(c.id for c in slot.spare_claims)) if k)
        for key in keys:
            self._by_claim[key] = slot
        self._claim_keys[slot] = keys

    def _claim_slot(self, claim_id: str) -> Slot | None:
        slot = self._by_claim.get(claim_id) if claim_id else None
        return slot if slot is not None and self.is_live(slot) else None

    def find_claim(self, claim_id: str) -> Slot | None:
        """The live slot whose current claim has this id."""
        slot = self._claim_slot(claim_id)
        return slot if slot is not None and slot.claim.id == claim_id else None

    def find_spare_claim(self, claim_id: str) -> Slot | None:
        """The consumption-policy p-slot that offers this claim id (in its ClaimIdList)."""
        slot = self._claim_slot(claim_id)
        return slot if slot is not None and any(c.id == claim_id for c in slot.spare_claims) else None

    def find_preempting_id(self, claim_id: str) -> Slot | None:
        """The Claimed slot whose pre-made preempting-claim id this is."""
        slot = self._claim_slot(claim_id)
        return slot if slot is not None and slot.state is S.CLAIMED and slot.preempting_id == claim_id else None

    def find_pending_preempting(self, claim_id: str) -> Slot | None:
        """The slot holding a pending preempting claim with this id."""
        slot = self._claim_slot(claim_id)
        pre = slot.preempting if slot is not None else None
        return slot if pre is not None and pre.id == claim_id else None

    def find_slot(self, name: str) -> Slot | None:
        """Like ``slot`` but None for a name that does not exist (any more)."""
        return self._by_name.get(name)

    def bury(self, slot: Slot, now: float) -> None:
        """``slot`` is being removed while its starter runs: hard-kill it if that has not
        happened yet and keep its KILLING_TIMEOUT until the starter is reported gone."""
        if activation.waiting(slot):  # its job never started: there is no starter to wait for
            activation.forget_start(self, slot)
            return
        deadline = slot.killing_deadline
        if deadline is None:
            self.emit(HardKill(slot.name, slot.claim.id))
            deadline = now + self.settings.killing_timeout
        self.dying[slot.claim.id] = DyingStarter(slot.name, slot.claim.id, deadline)
        slot.starter_active = False
        slot.vacate_deadline = slot.killing_deadline = None

    def reap(self, slot_name: str, claim_id: str) -> bool:
        """A starter message about a removed slot's starter: forget it; True if it was one.
        Without a claim id the oldest dying starter of that slot name is taken."""
        if not claim_id:
            claim_id = next((g.claim_id for g in self.dying.values() if g.slot_name == slot_name), "")
        return self.dying.pop(claim_id, None) is not None if claim_id else False

    # ------------------------------------------------------------------ shared services
    def _set_now(self, now: float) -> None:
        self._ctx = EvalContext(clock=fixed_clock(now), local_zone=self.local_zone)

    @property
    def ctx(self) -> EvalContext:
        return self._ctx

    def new_claim_id(self, id_str: str) -> str:
        self._seq += 1
        return make_claim_id(self.settings.hostname, self.start_time, self._seq, self._claim_secrets(), id_str)

    def emit(self, action: Action) -> None:
        self._actions.append(action)

    def report(self, slot: Slot, knob: str, problem: str) -> None:
        if knob not in slot.reported:
            slot.reported.add(knob)
            self.emit(PolicyProblem(slot.name, knob, problem))

    def mark_changed(self, slot: Slot) -> None:
        """The slot's ad must be sent to the collector with the next batch of actions."""
        self.changed[slot.name] = slot
        self._marks += 1
        self.index_claims(slot)

    def publish_static(self, slot: Slot) -> None:
        wrl = self._wrl_cp if slot.consumption_policy else self._wrl
        cons = carving.consumption_nodes(self.settings, slot, self.inventory.names())
        for attr, problem in publish_static(slot, self.settings, self.inventory, self.totals, wrl, cons):
            self.report(slot, attr, problem)

    def evaluator(self, slot: Slot, job: ClassAd | None = None) -> Evaluator:
        return Evaluator(slot.ad, job, self._ctx)

    def check(self, slot: Slot, ev: Evaluator) -> None:
        """Report the ERRORs an evaluator met (once per slot and knob)."""
        for knob, problem in ev.errors:
            self.report(slot, knob, problem)

    def rank_of(self, slot: Slot, request: ClassAd) -> float:
        ev = self.evaluator(slot, request)
        value = ev.number("Rank")
        self.check(slot, ev)
        return value or 0.0

    def _flush(self, now: float) -> list[Action]:
        self._shutdown_check()
        fresh, self._fresh = self._fresh, frozenset()
        for slot in self.changed.values():
            if self.is_live(slot):
                if slot not in fresh:
                    dynamic.publish_dynamic(self, slot, now)
                self.emit(SendAd(slot.name, slot.ad.copy()))
        self.changed.clear()
        out, self._actions = self._actions, []
        return out

    def _shutdown_check(self) -> None:
        if self.shutdown is not None and not self.shutdown_done and \
                not any(s.state in CLAIMED_OR_MATCHED for s in self.slots):
            self.shutdown_done = True
            self.emit(DaemonAction(DaemonActionKind.EXIT))

    # ------------------------------------------------------------------ policy evaluation
    def poll(self, now: float) -> None:
        """Recompute machine values, publish every slot and evaluate every slot's policy."""
        self.settled.clear()
        self._quiet = None
        self._timers_at = None
        self._poll(now)
        self._fresh = frozenset()  # no flush follows: what comes next may move the slots

    def _poll(self, now: float, incremental: bool = False) -> None:
        """Publish and evaluate every slot; a periodic poll (``incremental``) skips the settled
        ones, whose evaluation cannot ask for anything new (``settle``)."""
        quiet = incremental and self.draining is None and self.shutdown is None
        skip = self.settled if quiet else set()
        dynamic.compute_machine(self, now)
        dynamic.publish_all(self, now, skip)
        marks = self._marks
        settled: set[Slot] = set()
        acted = False
        for slot in list(self.slots):
            if slot in skip:
                settled.add(slot)
            elif self.is_live(slot):
                if self.eval_slot(slot, now):
                    acted = True
                elif settle.settles(self, slot):
                    settled.add(slot)
        # a slot's transition can change its neighbours (a p-slot's resources): all are evaluated next time
        self.settled = set() if acted else {s for s in settled if self.is_live(s)}
        check_drain(self, now)
        # nothing moved since the publication (no transition, nothing marked) and a settled slot's
        # evaluation changes nothing: those the poll published are current for ``_flush``
        self._fresh = frozenset(settled - skip) if not acted and self._marks == marks else frozenset()
        interval = self.settings.polling_interval if dynamic.needs_fast_poll(self) else self.settings.update_interval
        self._poll_interval = interval
        self._next_poll = now + interval
        if now >= self._next_update:
            self._next_update = now + self.settings.update_interval
            for slot in self.slots:
                self.mark_changed(slot)

    def eval_slot(self, slot: Slot, now: float, depth: int = 0) -> bool:
        """Evaluate one slot's policy and apply the suggested transition (or periodic actions);
        True when anything was done."""
        if depth > 8 or not self.is_live(slot):
            return False
        job = slot.claim.job if slot.claim.job is not None else slot.claim.request
        ev = self.evaluator(slot, job)
        event = suggest(self, slot, ev, now)
        self.check(slot, ev)
        if event is not None:
            transitions.change(self, slot, event, now, depth + 1)
            return True
        # RunBenchmarks is not re-tested in the evaluation that follows the end of a
        # benchmark run (HTCondor skips it when the previous activity was Benchmarking);
        # a later poll runs benchmarks again whenever the expression is true.
        just_benchmarked = slot.benchmarked_last and depth > 0
        if slot.state is S.UNCLAIMED and slot.activity is A.IDLE and not just_benchmarked \
                and not slot.is_dynamic and self.evaluator(slot).true("RunBenchmarks"):
            transitions.change(self, slot, E.RUN_BENCHMARKS, now, depth + 1)
            self.emit(RunBenchmarks(slot.name))
            return True
        if slot.state is S.DRAINED and slot.activity is A.IDLE and self.draining is not None:
            drain_completion(self, now)
            return True
        return False

    def _timer_due(self, slot: Slot, now: float) -> bool:
        """Whether a timer of ``slot`` other than the poll fires at ``now`` (or a held start waits)."""
        claim = slot.claim
        return claim.start_at is not None or any(
            t is not None and now >= t
            for t in (claim.match_deadline, claim.lease_expires, slot.vacate_deadline, slot.killing_deadline))
