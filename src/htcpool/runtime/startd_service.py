"""The startd daemon: the startd core driven by real sensors, starters and messages.

Every decision is the core's (``htcpool.startd.Startd``); this service carries
messages in and actions out, arms the core's timers and measures the machine.

Messages in go through ``MESSAGES`` (message type -> handler): claims from schedds
and matches from the negotiator go to the core, as do administrators' ``Vacate``,
``Drain`` and ``CancelDrain`` (a refused drain is answered 409 with the core's
reason); ``Reconnect`` tells a restarted schedd whether its claim lives, and an ``Alive`` for
a claim the startd does not hold is answered ``unknown claim`` (a restarted startd); a job's
exit is kept on disk until its schedd has it and sent again by a restarted startd, which answers
for that claim meanwhile (``pending_exits``);
``DaemonCommand`` is ``off``, ``reconfig`` or ``vacate``; ``QueryAds`` answers
condor_status -direct (a constraint that does not parse is answered 400).

Actions out go through ``ACTIONS`` (action type -> handler):

* ``StartJob`` starts a starter and ``SuspendJob`` … ``KillStarterFamily`` signal it
  (``starters.Starters``); the starters' events become ``JobUpdate`` messages to the
  claim's schedd and, at the end, ``StarterExited`` to the core;
* ``SendAd`` goes to the collector with the startd's addresses and, as private
  attributes only the negotiator sees, the slot's claim ids (``startd_ads``); a slot
  that becomes Unclaimed asks the negotiator for a cycle;
* ``ClaimReply``, ``ActivateReply`` (an accepted one with what the slot gives the job),
  ``DeactivateReply``, ``NotifySchedd``, ``HoldJob`` and the core's own ``JobUpdate``
  (a missed deferral time, a held start ended) go to the schedd that holds the claim
  (``startd_schedds``: found by name through the collector, one ordered outbox queue per
  claim, a job's exit on disk (its starter's note, or the startd's table) before it leaves and
  the next activation taken from its answer);
* ``DaemonAction`` (a drain's completion, the end of a shutdown) is asked of the master or
  stops the daemon (``startd_admin``, which also answers condor_status -direct);
* ``RunBenchmarks`` times the machine (``sensors.benchmark``); ``StartBackfillClient``
  and ``KillBackfillClient`` run and stop the backfill client (``backfill``); both
  report back to the core.

Several startds may run under one master (``STARTD_B = $(STARTD)`` with
``-local-name B``): each reads its configuration with its local name, names its
slots ``slotN@<STARTD_NAME>`` and keeps its own execute directory and starter
log (``local_names``).

Sensors are read every ``POLLING_INTERVAL``: ``sensors.json`` in the pool's local
directory may script any reading (owner activity for tests and demonstrations);
the rest come from the machine. Each slot's ``CondorLoadAvg`` input is the CPU
load its starter measured.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, cast

from htcpool.classad import ClassAd
from htcpool.clock import local_zone
from htcpool.protocol import (
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    JobEvent,
    JobUpdate,
    Ok,
    QueryAds,
    Reconnect,
    ReconnectReply,
    Reschedule,
)
from htcpool.protocol import startd as m
from htcpool.runtime.backfill import BackfillClients
from htcpool.runtime.confinement import enforcement_from_config
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.device_env import DeviceEnvironment
from htcpool.runtime.exit_notes import ExitNote
from htcpool.runtime.forkserver import ForkServer
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.job_setup import slot_execute_dirs, slot_number, startd_execute
from htcpool.runtime.local_names import startd_name, starter_log
from htcpool.runtime.machine_attrs import machine_attributes
from htcpool.runtime.pending_exits import PendingExits
from htcpool.runtime.resource_inventory import run_inventories
from htcpool.runtime.runas import run_as_settings
from htcpool.runtime.sensors import HostSensors, ScriptedSensors, benchmark
from htcpool.runtime.startd_admin import carry_daemon_action, direct_query
from htcpool.runtime.startd_ads import FreedSlots, leftovers, provisioned, slot_update
from htcpool.runtime.startd_log import log_action, log_command, log_transitions
from htcpool.runtime.startd_schedds import ScheddLink
from htcpool.runtime.starter_client import child_environment
from htcpool.runtime.starters import (
    Starters,
    exit_update,
    forked_starters,
    spawn_starter,
    warm_starters,
)
from htcpool.startd import (
    CLAIMED_OR_MATCHED,
    ConfigSource,
    Startd,
    StartdUsageError,
    settings_from_config,
)
from htcpool.startd.claim_ids import SECRET_BITS
from htcpool.startd.layout import with_inventory
from htcpool.startd.retirement import claim_closing

log = logging.getLogger("htcpool.startd")

#: how long a stopping startd lets its jobs end before it kills them (peaceful: as long as they run)
PATIENCE = {How.FAST: 5.0, How.GRACEFUL: 30.0, How.PEACEFUL: float("inf")}
#: the ends of an activation that the core reports itself (its job never started)
UNSTARTED = (JobEvent.MISSED_DEFERRAL, JobEvent.EXITED)


def claim_secret() -> str:
    """The secret part of a new claim id (startd.claim_ids), from the operating system's
    cryptographic source: the one place the live startd's randomness comes from."""
    return secrets.token_hex(SECRET_BITS // 8)


class StartdService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        now = daemon.clock()
        execute = startd_execute(daemon.layout, config, daemon.local_name)
        execute.mkdir(parents=True, exist_ok=True)
        settings = replace(settings_from_config(cast(ConfigSource, config)), machine_attrs=machine_attributes(config),
                           hostname=startd_name(config, daemon.local_name))
        self.settings, inventory = with_inventory(settings, run_inventories(settings, os.environ))
        for knob in settings.obsolete_knobs:
            new = knob.replace("STARTD_EXPRS", "STARTD_ATTRS")
            log.warning("%s is obsolete; it is read as %s (rename it in the configuration)", knob, new)
        disk_kib = int(shutil.disk_usage(execute).free // 1024)
        self.core = Startd(self.settings, now, inventory=inventory, disk=disk_kib, local_zone=local_zone(),
                           claim_secrets=claim_secret)
        self.device_env = DeviceEnvironment.from_config(config, self.core.inventory.names())
        daemon.layout.spool.mkdir(parents=True, exist_ok=True)
        notes = daemon.layout.spool / f"{daemon.name}.exits.d"  # the starters' exit notes (runtime/exit_notes.py)
        notes.mkdir(exist_ok=True)
        self.exits = PendingExits(daemon.layout.spool / f"{daemon.name}.exits.json", daemon.clock, notes, _from_note)
        self.exits.adopt()  # notes a killed startd's starters left
        self.schedds = ScheddLink(daemon, self.exits, self.handle)
        self.sensors = ScriptedSensors(daemon.layout.sensors, HostSensors(str(execute)))
        self.polling = float(config.get_int("POLLING_INTERVAL") or 5)
        self.next_sensing = now
        # starters are forked from a server that has imported them (STARTER_FORK_SERVER, htcpool's own knob)
        self.forkserver = ForkServer(child_environment()) if config.get_bool("STARTER_FORK_SERVER", default=True) else None
        self.starters = Starters(execute, starter_log(daemon.layout, daemon.local_name), self._report,
                                 self._starter_exited, clock=daemon.clock, wrapper=config.get_str("USER_JOB_WRAPPER"),
                                 spawn=forked_starters(self.forkserver) if self.forkserver else spawn_starter,
                                 warm=warm_starters(self.forkserver) if self.forkserver else None,
                                 report_started=False,
                                 enforcement=enforcement_from_config(config), tell_core=self._to_core,
                                 renice=config.get_str("JOB_RENICE_INCREMENT"))
        self.starters.notes = notes
        self.starters.slot_execute = slot_execute_dirs(config.get_str, [n for s in self.core.slots
                                                                              if (n := slot_number(s.name))])
        if os.geteuid() == 0 and not config.get_bool("DISABLE_SETUID", default=False):  # runtime/runas.py
            self.starters.run_as = run_as_settings(config.get_str, [n for s in self.core.slots
                                                                    if (n := slot_number(s.name))])
        self.claim_schedd = self.schedds.claim_schedd  # claim id -> the schedd that holds it
        self.askers: dict[str, str] = {}  # claim id -> a schedd asking for it while another holds it
        self.answers: dict[str, m.ClaimReply | None] = {}  # claim id -> its reply, while its request is handled
        self.freed = FreedSlots()
        self.backfill = BackfillClients(self._backfill_started, self._backfill_exited)
        self.drain_replies: list[m.DrainReply] = []

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self.forkserver is not None:  # the first jobs find starters waiting (runtime/forkserver.py)
            self.forkserver.warm_up(str(self.starters.starter_log))
        for pending in list(self.exits.items.values()):  # left by the startd before this one
            self.schedds.post_exit(pending.schedd, pending.update)
        await self._apply(self.core.initial_actions)
        await self._apply(self._readings(self.daemon.clock()))
        await self._apply(self.core.evaluate(self.daemon.clock()))
        for name, ad in self.core.ads().items():
            self._advertise(name, ad)

    async def stop(self, how: How) -> None:
        how = How(how)
        await self._apply(self.core.handle(m.Shutdown(how), self.daemon.clock()))
        await self.starters.stop(PATIENCE[how])
        self.backfill.kill_all()
        for name in self.core.ads():
            self.daemon.to_collector(InvalidateAd("Machine", name))
        if self.forkserver is not None:
            await self.forkserver.close()
        await asyncio.sleep(0.2)  # let the invalidations and last notices go out
        await asyncio.to_thread(self.exits.close)

    # ------------------------------------------------------------------ messages in
    async def handle(self, message: Any) -> Any:
        handler = MESSAGES.get(type(message))
        log_command(message)
        if handler is None:
            raise RequestRefused(400, f"the startd does not take {type(message).__name__}")
        try:
            return await handler(self, message)
        except StartdUsageError as e:
            raise RequestRefused(400, str(e)) from None

    async def _to_core(self, message: Any) -> Any:
        await self._apply(self.core.handle(message, self.daemon.clock()))
        return Ok()

    async def _request_claim(self, message: m.RequestClaim) -> Any:
        """A schedd asks for a claim. An id that another schedd's live claim holds comes from a
        match made on an out-of-date slot ad (a p-slot's id before its split reached the
        collector): the core refuses it, and the answer goes to the schedd that asked, while the
        claim's own schedd goes on hearing about its job."""
        holder = self.claim_schedd.get(message.claim_id)
        if holder in (None, message.schedd) or self.core.find_claim(message.claim_id) is None:
            self.claim_schedd[message.claim_id] = message.schedd
            return await self._answered_at_once(message)
        self.askers[message.claim_id] = message.schedd
        try:
            return await self._answered_at_once(message)
        finally:
            self.askers.pop(message.claim_id, None)

    async def _answered_at_once(self, message: m.RequestClaim) -> Any:
        """The core's claim reply, when it decides at once, is the answer to the request itself
        (the schedd takes it as if posted: one message fewer per claim); else ``Ok``, and the reply
        is posted when the core decides (a slot vacated first)."""
        self.answers[message.claim_id] = None
        try:
            await self._to_core(message)
            return self.answers[message.claim_id] or Ok()
        finally:
            del self.answers[message.claim_id]

    async def _drain(self, message: m.Drain | m.CancelDrain) -> Any:
        self.drain_replies.clear()
        await self._to_core(message)
        if not self.drain_replies:
            return Ok()
        reply = self.drain_replies[-1]
        if not reply.accepted:
            raise RequestRefused(409, reply.reason or "drain refused")
        return Ok(reply.request_id)

    async def _alive(self, message: m.Alive) -> Any:
        """A schedd's keep-alive; a claim this startd does not hold (it restarted since, or
        the claim ended) is answered ``unknown claim``, so the schedd lets its job go at once
        instead of at the end of its lease."""
        if self.core.find_claim(message.claim_id) is None:
            return Ok() if self.schedds.exit_of(message.claim_id) is not None else Ok(m.UNKNOWN_CLAIM)
        return await self._to_core(message)

    def _ours(self, claim_id: str) -> bool:
        return self.core.find_claim(claim_id) is not None or claim_id in self.starters.running

    async def _reconnect(self, message: Reconnect) -> Any:
        slot = self.core.find_claim(message.claim_id)
        if slot is None:
            pending = self.schedds.exit_of(message.claim_id)  # its job exited; the schedd has not heard
            if pending is not None:
                return ReconnectReply(message.claim_id, True, pending.slot, "Idle", pending.job)
            return ReconnectReply(message.claim_id, False)
        self.claim_schedd[message.claim_id] = message.schedd
        running = self.starters.running.get(message.claim_id)
        if running is not None:
            running.schedd = message.schedd
        await self._apply(self.core.handle(m.Alive(message.claim_id), self.daemon.clock()))
        return ReconnectReply(message.claim_id, True, slot.name, slot.activity.value, slot.claim.last_job)

    async def _query(self, message: QueryAds) -> Any:
        """condor_status -direct (``startd_admin.direct_query``)."""
        return direct_query(self.core, self.settings.machine_attrs, self.daemon, message)

    async def _command(self, message: DaemonCommand) -> Any:
        return await self.daemon.command_handler(COMMANDS, message)(self, message)

    async def _off(self, message: DaemonCommand) -> Any:
        return self.daemon.stop_on_command(message)

    async def _reconfig(self, message: DaemonCommand) -> Any:
        if any(slot.state in CLAIMED_OR_MATCHED for slot in self.core.slots):
            log.warning("reconfig: the new configuration takes effect when the startd next starts "
                        "without running jobs")
            return Ok("deferred while jobs run")
        raise RequestRefused(409, "restart to reconfigure")  # the master restarts an idle startd

    async def _vacate(self, message: DaemonCommand) -> Any:
        return await self._to_core(m.Vacate(None, message.how == How.FAST))

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        core = self.core.next_deadline()
        return min(t for t in (core, self.next_sensing) if t is not None)

    def _readings(self, now: float) -> list[Any]:
        readings = self.sensors.read(now)
        return self.core.handle(replace(readings, condor_load=self.starters.loads()), now)

    async def on_timer(self, now: float) -> None:
        if now >= self.next_sensing:
            self.next_sensing = now + self.polling
            self.schedds.late_notes(self._ours)
            await self._apply(self._readings(now))
        await self._apply(self.core.handle_timer(now))

    # ------------------------------------------------------------------ the schedds and the collector
    def to_schedd(self, schedd: str, message: Any,
                  on_reply: Callable[[Any], Awaitable[None]] | None = None) -> None:
        self.schedds.to_schedd(schedd, message, on_reply)

    def _to_claim_schedd(self, claim_id: str, message: Any, fallback: str = "") -> None:
        self.schedds.to_claim_schedd(claim_id, message, fallback)

    def _report(self, update: JobUpdate, schedd: str) -> None:
        """A starter's news for the schedd of its claim (the one it started for, if released since).
        A job's exit is kept on disk until the schedd has it (``pending_exits``)."""
        schedd = self.claim_schedd.get(update.claim_id, schedd)
        if update.event != JobEvent.EXITED or update.killed or not schedd:
            self.to_schedd(schedd, update)
            if update.event == JobEvent.EXITED:  # not kept: its starter's note is not needed either
                self.exits.drop_note(update.claim_id)
            return
        slot = self.core.find_claim(update.claim_id)
        if slot is not None and not claim_closing(self.core, slot, self.daemon.clock()):
            update = replace(update, claim_open=True)  # the schedd activates it again at once
        self.schedds.record_exit(schedd, slot.claim.last_job if slot is not None else "", update)

    async def _starter_exited(self, slot: str, claim_id: str) -> None:
        await self._apply(self.core.handle(m.StarterExited(slot, claim_id), self.daemon.clock()))

    def _freed(self, name: str, ad: ClassAd) -> None:
        """A slot that becomes Unclaimed asks the negotiator for a cycle soon (freed resources),
        once its ad saying so is with the collector, where the cycle reads it."""
        if self.freed.freed(name, ad):
            self.daemon.to_negotiator(Reschedule(f"{name} is free"), after_ads=True)

    def _advertise(self, name: str, ad: ClassAd) -> None:
        if self.daemon.withdrawn("Machine", name):  # the daemon stops: nor may a freed slot ask for a cycle
            return
        self.daemon.to_collector(slot_update(ad, self.core.find_slot(name), self.daemon.url, self.daemon.sinful))
        self._freed(name, ad)

    # ------------------------------------------------------------------ actions out
    async def _apply(self, actions: list[Any]) -> None:
        log_transitions(self.core)
        for action in actions:
            log_action(self.core, action)
            handler = ACTIONS.get(type(action))
            if handler is None:
                log.warning("the startd core asked for %s, which this driver does not carry out", action)
                continue
            try:
                await handler(self, action)
            except Exception:
                log.exception("carrying out %s failed", action)
        if actions:
            self.daemon.poke()

    async def _send_ad(self, a: m.SendAd) -> None:
        if a.invalidate or a.ad is None:
            self.daemon.to_collector(InvalidateAd("Machine", a.name))
        else:
            self._advertise(a.name, a.ad)

    async def _start_job(self, a: m.StartJob) -> None:
        slot = self.core.find_slot(a.slot)
        machine_ad = None
        if slot is not None:
            machine_ad = slot.ad.copy()
            machine_ad.update(self.settings.machine_attrs)
        env = self.device_env.for_slot(machine_ad) if machine_ad is not None else {}
        self.starters.start(a, self.claim_schedd.get(a.claim_id, ""), machine_ad, extra_env=env)

    async def _starter_command(self, a: m.SuspendJob | m.ContinueJob | m.SoftKill | m.HardKill) -> None:
        await self.starters.command(a)

    async def _kill_starter_family(self, a: m.KillStarterFamily) -> None:
        await self.starters.kill_family(a)

    async def _claim_reply(self, a: m.ClaimReply) -> None:
        reply = a
        if a.accepted and a.leftovers is not None:
            pslot = self.core.find_slot(str(a.leftovers.get("Name", "")))
            if pslot is not None:
                reply = replace(a, leftovers=leftovers(a.leftovers, pslot, self.daemon.url, self.daemon.sinful))
        asker = self.askers.get(a.claim_id)
        if asker is not None and a.accepted:
            self.claim_schedd[a.claim_id] = asker
        if a.claim_id in self.answers and self.answers[a.claim_id] is None:
            self.answers[a.claim_id] = reply  # the answer to its request, to the schedd that asked
        elif asker is not None:
            self.to_schedd(asker, reply)
        else:
            self._to_claim_schedd(a.claim_id, reply)

    async def _activate_reply(self, a: m.ActivateReply) -> None:
        if a.accepted:  # with what the slot gives the job: one message, not a provisioned update before it
            a = replace(a, resources=provisioned(self.core.find_claim(a.claim_id),
                                                 self.starters.scratch_dir(a.claim_id, _slot_of(self.core, a.claim_id))))
        self._to_claim_schedd(a.claim_id, a)

    async def _claim_message(self, a: m.DeactivateReply | m.HoldJob) -> None:
        self._to_claim_schedd(a.claim_id, a)

    async def _job_update(self, a: JobUpdate) -> None:
        """The core's own report of a job it did not start (a missed deferral, a held start ended)."""
        self._to_claim_schedd(a.claim_id, a)
        if a.event in UNSTARTED:
            self.starters.activation_ended(a.claim_id)

    async def _notify_schedd(self, a: m.NotifySchedd) -> None:
        self.to_schedd(a.schedd or self.claim_schedd.get(a.claim_id, ""), a)
        if a.kind is m.Notice.RELEASE:
            self.claim_schedd.pop(a.claim_id, None)

    async def _run_benchmarks(self, a: m.RunBenchmarks) -> None:
        mips, kflops = benchmark()
        await self._apply(self.core.handle(m.BenchmarksFinished(a.slot, mips, kflops), self.daemon.clock()))

    async def _start_backfill(self, a: m.StartBackfillClient) -> None:
        await self.backfill.start(a.slot, self.daemon.config)

    async def _kill_backfill(self, a: m.KillBackfillClient) -> None:
        self.backfill.evict(a.slot)

    async def _backfill_started(self, slot: str) -> None:
        await self._apply(self.core.handle(m.BackfillClientStarted(slot), self.daemon.clock()))

    async def _backfill_exited(self, slot: str) -> None:
        await self._apply(self.core.handle(m.BackfillClientExited(slot), self.daemon.clock()))

    async def _drain_reply(self, a: m.DrainReply) -> None:
        self.drain_replies.append(a)

    async def _daemon_action(self, a: m.DaemonAction) -> None:
        carry_daemon_action(self.daemon, a)

    async def _policy_problem(self, a: m.PolicyProblem) -> None:
        log.warning("policy problem in %s, %s: %s", a.slot, a.knob, a.problem)


def _slot_of(core: Startd, claim_id: str) -> str:
    slot = core.find_claim(claim_id)
    return slot.name if slot is not None else ""


Handler = Callable[[StartdService, Any], Awaitable[Any]]

#: message type -> what the startd does with it (the answer goes back to the sender)
MESSAGES: dict[type, Handler] = {
    **{kind: StartdService._to_core for kind in (
        m.MatchNotification, m.ActivateClaim, m.DeactivateClaim, m.ReleaseClaim, m.Vacate,
        m.SuspendClaim, m.ContinueClaim, m.Shutdown)},
    m.Alive: StartdService._alive,
    m.RequestClaim: StartdService._request_claim,
    m.Drain: StartdService._drain,
    m.CancelDrain: StartdService._drain,
    Reconnect: StartdService._reconnect,
    DaemonCommand: StartdService._command,
    QueryAds: StartdService._query,
}

#: DaemonCommand.command -> its handler
COMMANDS: dict[Command, Handler] = {
    Command.OFF: StartdService._off,
    Command.RECONFIG: StartdService._reconfig,
    Command.VACATE: StartdService._vacate,
}

#: the core's action type -> how the driver carries it out
ACTIONS: dict[type, Handler] = {
    m.SendAd: StartdService._send_ad,
    m.StartJob: StartdService._start_job,
    m.SuspendJob: StartdService._starter_command,
    m.ContinueJob: StartdService._starter_command,
    m.SoftKill: StartdService._starter_command,
    m.HardKill: StartdService._starter_command,
    m.KillStarterFamily: StartdService._kill_starter_family,
    m.ClaimReply: StartdService._claim_reply,
    m.ActivateReply: StartdService._activate_reply,
    m.DeactivateReply: StartdService._claim_message,
    m.HoldJob: StartdService._claim_message,
    m.NotifySchedd: StartdService._notify_schedd,
    JobUpdate: StartdService._job_update,
    m.RunBenchmarks: StartdService._run_benchmarks,
    m.StartBackfillClient: StartdService._start_backfill,
    m.KillBackfillClient: StartdService._kill_backfill,
    m.DrainReply: StartdService._drain_reply,
    m.DaemonAction: StartdService._daemon_action,
    m.PolicyProblem: StartdService._policy_problem,
}


def _from_note(note: ExitNote) -> JobUpdate:
    """A starter's note of its job's exit as the report the startd would have sent."""
    return exit_update(note.context["claim_id"], note.context["slot"], note.event, killed=False)
