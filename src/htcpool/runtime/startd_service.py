"""The startd daemon: the startd core driven by real sensors, starters and messages.

Incoming protocol messages (claims from schedds, matches from the negotiator,
administrator commands) go to ``htcpool.startd.Startd.handle``; the core's
actions are carried out here:

* ``StartJob`` spawns a starter (``starter_client.StarterHandle``) in a fresh
  scratch directory under ``execute/``; ``SuspendJob``/``ContinueJob``/
  ``SoftKill``/``HardKill``/``KillStarterFamily`` become starter commands;
* ``SendAd`` goes to the collector with the slot's claim ids as private
  attributes (only the negotiator sees them), ``ClaimReply``/``ActivateReply``/
  ``DeactivateReply``/``NotifySchedd``/``HoldJob`` go to the schedd that holds the
  claim, found by name through the collector (or the pool's address file);
* the starters' events become ``JobUpdate`` messages to that schedd and, on exit,
  ``StarterExited`` to the core. Messages about one claim go to the schedd in
  order (a job's exit is reported before the claim's release), one outbox queue
  per claim; the claims are independent of each other, so a busy claim never
  waits behind another's messages (one queue per schedd made every job's
  start and end wait for the messages of all the others).

Sensors are read every ``POLLING_INTERVAL``: ``sensors.json`` in the pool's local
directory may script any reading (owner activity for tests and demonstrations);
the rest come from the machine. Each slot's ``CondorLoadAvg`` input is the CPU
load its starter measured.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shutil
import signal
import time
from dataclasses import dataclass, field, replace
from typing import Any, cast

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock, quote
from htcpool.clock import local_zone
from htcpool.protocol import (
    AdList,
    DaemonCommand,
    InvalidateAd,
    JobUpdate,
    Ok,
    QueryAds,
    Reconnect,
    ReconnectReply,
    Reschedule,
    UpdateAd,
)
from htcpool.protocol import startd as m
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.launch import LaunchError, launch_spec
from htcpool.runtime.machine_attrs import machine_attributes
from htcpool.runtime.sensors import HostSensors, ScriptedSensors
from htcpool.runtime.starter_client import StarterHandle
from htcpool.startd import ConfigSource, Startd, settings_from_config

log = logging.getLogger("htcpool.startd")

_CORE_MESSAGES = (m.MatchNotification, m.RequestClaim, m.ActivateClaim, m.DeactivateClaim,
                  m.ReleaseClaim, m.Alive, m.Vacate, m.SuspendClaim, m.ContinueClaim, m.Shutdown,
                  m.Drain, m.CancelDrain)


@dataclass
class RunningStarter:
    slot: str
    claim_id: str
    schedd: str
    handle: StarterHandle | None = None
    killed: bool = False
    cpu_load: float = 0.0
    scratch: str = ""
    pending: list[str] = field(default_factory=list)  # commands given before the starter was up


class StartdService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        now = daemon.clock()
        execute = daemon.layout.execute
        execute.mkdir(parents=True, exist_ok=True)
        self.execute = execute
        self.settings = replace(settings_from_config(cast(ConfigSource, config)), machine_attrs=machine_attributes(config))
        disk_kib = int(shutil.disk_usage(execute).free // 1024)
        zone = local_zone()
        self.core = Startd(self.settings, now, disk=disk_kib, local_zone=zone)
        self.sensors = ScriptedSensors(daemon.layout.sensors, HostSensors(str(execute)))
        self.polling = float(config.get_int("POLLING_INTERVAL") or 5)
        self.next_sensing = now
        self.starters: dict[str, RunningStarter] = {}
        self.claim_schedd: dict[str, str] = {}
        self.last_state: dict[str, str] = {}
        self.backfill: dict[str, asyncio.subprocess.Process] = {}
        self.drain_replies: list[m.DrainReply] = []
        self._dirs = itertools.count(1)
        self._schedd_urls: dict[str, tuple[float, str]] = {}

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        await self._apply(self.core.initial_actions)
        await self._apply(self._readings(self.daemon.clock()))
        await self._apply(self.core.evaluate(self.daemon.clock()))
        for name, ad in self.core.ads().items():
            self._advertise(name, ad)

    async def stop(self, how: str) -> None:
        now = self.daemon.clock()
        await self._apply(self.core.handle(m.Shutdown(how if how in ("fast", "peaceful") else "graceful"), now))
        patience = {"fast": 5.0, "graceful": 30.0}.get(how, float("inf"))  # peaceful: jobs finish
        deadline = time.monotonic() + patience
        while any(s.handle is not None and not s.handle.done for s in self.starters.values()) \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for starter in self.starters.values():
            if starter.handle is not None and not starter.handle.done:
                await starter.handle.kill_family()
        for proc in self.backfill.values():
            _kill_group(proc.pid, signal.SIGKILL)
        for name in self.core.ads():
            self.daemon.to_collector(InvalidateAd("Machine", name))
        await asyncio.sleep(0.2)  # let the invalidations and last notices go out

    # ------------------------------------------------------------------ messages in
    async def handle(self, message: Any) -> Any:
        now = self.daemon.clock()
        if isinstance(message, m.RequestClaim):
            self.claim_schedd[message.claim_id] = message.schedd
        if isinstance(message, _CORE_MESSAGES):
            self.drain_replies.clear()
            await self._apply(self.core.handle(message, now))
            if isinstance(message, m.Drain | m.CancelDrain) and self.drain_replies:
                reply = self.drain_replies[-1]
                if not reply.accepted:
                    raise RequestRefused(409, reply.reason or "drain refused")
                return Ok(reply.request_id)
            return Ok()
        if isinstance(message, Reconnect):
            slot = self.core.find_claim(message.claim_id)
            if slot is None:
                return ReconnectReply(message.claim_id, False)
            self.claim_schedd[message.claim_id] = message.schedd
            running = self.starters.get(message.claim_id)
            if running is not None:
                running.schedd = message.schedd
            await self._apply(self.core.handle(m.Alive(message.claim_id), now))
            return ReconnectReply(message.claim_id, True, slot.name, slot.activity.value)
        if isinstance(message, DaemonCommand):
            return await self._command(message, now)
        if isinstance(message, QueryAds):  # condor_status -direct
            return AdList(tuple(self._direct_query(message, now)))
        raise RequestRefused(400, f"the startd does not take {type(message).__name__}")

    def _direct_query(self, message: QueryAds, now: float) -> list[ClassAd]:
        if message.my_type.lower() not in ("machine", "any"):
            return []
        try:
            test = ExprTree(message.constraint) if message.constraint else None
        except ClassAdError as e:
            raise RequestRefused(400, f"the constraint {message.constraint!r} does not parse: {e}") from None
        ctx = EvalContext(clock=fixed_clock(now))
        out = []
        for ad in self.core.ads().values():
            ad = ad.copy()
            ad.update(self.settings.machine_attrs)
            ad["MyAddress"] = self.daemon.url
            if test is None or test.evaluate(ad, None, ctx) is True:
                out.append(ad)
        return out

    async def _command(self, message: DaemonCommand, now: float) -> Any:
        if message.command == "off":
            self.daemon.request_stop(message.how)
            return Ok("shutting down")
        if message.command == "reconfig":
            if any(slot.state.value in ("Claimed", "Preempting", "Matched") for slot in self.core.slots):
                log.warning("reconfig: the new configuration takes effect when the startd next starts "
                            "without running jobs")
                return Ok("deferred while jobs run")
            raise RequestRefused(409, "restart to reconfigure")  # the master restarts an idle startd
        if message.command == "vacate":
            await self._apply(self.core.handle(m.Vacate(None, message.how == "fast"), now))
            return Ok()
        raise RequestRefused(400, f"unknown command {message.command!r}")

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        core = self.core.next_deadline()
        return min(t for t in (core, self.next_sensing) if t is not None)

    def _readings(self, now: float) -> list[Any]:
        readings = self.sensors.read(now)
        loads = {s.slot: s.cpu_load for s in self.starters.values()}
        return self.core.handle(replace(readings, condor_load=loads), now)

    async def on_timer(self, now: float) -> None:
        if now >= self.next_sensing:
            self.next_sensing = now + self.polling
            await self._apply(self._readings(now))
        await self._apply(self.core.handle_timer(now))

    # ------------------------------------------------------------------ actions out
    def _schedd_key(self, schedd: str, message: Any) -> str:
        return f"schedd:{schedd}:{getattr(message, 'claim_id', '')}"

    async def _resolve_schedd(self, schedd: str) -> str | None:
        cached = self._schedd_urls.get(schedd)
        now = time.monotonic()
        if cached is not None and now - cached[0] < 2.0:
            return cached[1]
        ads = await self.daemon.collector_query(
            QueryAds("Scheduler", f"Name == {quote(schedd)}", ("MyAddress",)))
        url = next((str(ad["MyAddress"]) for ad in ads if "MyAddress" in ad), None)
        url = url or self.daemon.address_of("schedd")
        if url:
            self._schedd_urls[schedd] = (now, url)
        return url

    def to_schedd(self, schedd: str, message: Any) -> None:
        if not schedd:
            log.warning("no schedd known for %s", type(message).__name__)
            return
        async def resolve() -> str | None:
            return await self._resolve_schedd(schedd)
        self.daemon.outbox.post(self._schedd_key(schedd, message), message, resolve)

    def _sinful(self) -> str:
        """The address in HTCondor's ``<host:port>`` form."""
        return self.daemon.sinful

    def _freed(self, name: str, ad: ClassAd) -> None:
        """A slot that becomes Unclaimed asks the negotiator for a cycle soon (freed resources)."""
        state = ad.get("State")
        before = self.last_state.get(name)
        self.last_state[name] = state if isinstance(state, str) else ""
        if state == "Unclaimed" and before not in (None, "Unclaimed"):
            url = self.daemon.address_of("negotiator")
            if url is not None:
                self.daemon.outbox.post(url, Reschedule(f"{name} is free"))

    def _advertise(self, name: str, ad: ClassAd) -> None:
        self._freed(name, ad)
        ad = ad.copy()
        ad["MyAddress"] = self.daemon.url
        ad["StartdIpAddr"] = self._sinful()
        ad["TargetType"] = "Job"
        schedd = ad.get("RemoteScheddName")
        if isinstance(schedd, str) and schedd:
            ad["ClientMachine"] = schedd.rpartition("@")[2]
        private = ClassAd()
        slot = self.core.find_slot(name)
        if slot is not None:
            private["ClaimId"] = slot.claim.id
            if slot.preempting_id:
                private["PreemptClaimId"] = slot.preempting_id
        self.daemon.to_collector(UpdateAd(ad, private))

    async def _apply(self, actions: list[Any]) -> None:
        for action in actions:
            try:
                await self._act(action)
            except Exception:
                log.exception("carrying out %s failed", action)
        if actions:
            self.daemon.poke()

    async def _act(self, a: Any) -> None:
        if isinstance(a, m.SendAd):
            if a.invalidate or a.ad is None:
                self.daemon.to_collector(InvalidateAd("Machine", a.name))
            else:
                self._advertise(a.name, a.ad)
        elif isinstance(a, m.StartJob):
            await self._start_job(a)
        elif isinstance(a, m.SuspendJob | m.ContinueJob | m.SoftKill | m.HardKill):
            await self._starter_command(a)
        elif isinstance(a, m.KillStarterFamily):
            starter = self.starters.get(a.claim_id) or self._starter_of_slot(a.slot)
            if starter is not None and starter.handle is not None:
                starter.killed = True
                await starter.handle.kill_family()
        elif isinstance(a, m.ClaimReply):
            reply = a
            if a.accepted and a.leftovers is not None:
                pslot = self.core.find_slot(str(a.leftovers.get("Name", "")))
                if pslot is not None:
                    leftovers = a.leftovers.copy()
                    leftovers["ClaimId"] = pslot.claim.id
                    leftovers["MyAddress"] = self.daemon.url
                    leftovers["StartdIpAddr"] = self._sinful()
                    reply = replace(a, leftovers=leftovers)
            self.to_schedd(self.claim_schedd.get(a.claim_id, ""), reply)
        elif isinstance(a, m.ActivateReply) and a.accepted:
            schedd = self.claim_schedd.get(a.claim_id, "")
            self.to_schedd(schedd, JobUpdate(a.claim_id, "", "provisioned",
                                             resources=self._provisioned(a.claim_id)))
            self.to_schedd(schedd, a)
        elif isinstance(a, m.ActivateReply | m.DeactivateReply):
            self.to_schedd(self.claim_schedd.get(a.claim_id, ""), a)
        elif isinstance(a, m.HoldJob):
            self.to_schedd(self.claim_schedd.get(a.claim_id, ""), a)
        elif isinstance(a, m.NotifySchedd):
            self.to_schedd(a.schedd or self.claim_schedd.get(a.claim_id, ""), a)
            if a.kind == "release":
                self.claim_schedd.pop(a.claim_id, None)
        elif isinstance(a, m.RunBenchmarks):
            mips, kflops = _benchmark()
            await self._apply(self.core.handle(m.BenchmarksFinished(a.slot, mips, kflops),
                                               self.daemon.clock()))
        elif isinstance(a, m.StartBackfillClient):
            await self._start_backfill(a.slot)
        elif isinstance(a, m.KillBackfillClient):
            proc = self.backfill.get(a.slot)
            if proc is not None:
                _kill_group(proc.pid, signal.SIGTERM)
        elif isinstance(a, m.DrainReply):
            self.drain_replies.append(a)
        elif isinstance(a, m.DaemonAction):
            if a.kind == "exit":
                self.daemon.request_stop("graceful")
        elif isinstance(a, m.PolicyProblem):
            log.warning("policy problem in %s, %s: %s", a.slot, a.knob, a.problem)

    def _provisioned(self, claim_id: str) -> dict[str, Any]:
        """What the claimed slot gives its job, as the job ad's ``…Provisioned`` attributes."""
        out: dict[str, Any] = {}
        slot = self.core.find_claim(claim_id)
        if slot is not None:
            names = [n for n in ("Cpus", "Disk", "Memory", "GPUs") if n in slot.ad]
            for name in names:
                value = slot.ad.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    out[f"{name}Provisioned"] = value
            out["ProvisionedResources"] = ",".join(names)
        starter = self.starters.get(claim_id)
        if starter is not None and starter.scratch:
            out["CondorScratchDir"] = starter.scratch
        return out

    def _starter_of_slot(self, slot: str) -> RunningStarter | None:
        return next((s for s in self.starters.values() if s.slot == slot), None)

    async def _starter_command(self, a: Any) -> None:
        starter = self.starters.get(a.claim_id) or self._starter_of_slot(a.slot)
        if starter is None:
            return
        if isinstance(a, m.SoftKill | m.HardKill):
            starter.killed = True
        handle = starter.handle
        if handle is None:
            starter.pending.append(type(a).__name__)
            return
        if isinstance(a, m.SuspendJob):
            await handle.suspend()
        elif isinstance(a, m.ContinueJob):
            await handle.continue_()
        elif isinstance(a, m.SoftKill):
            await handle.soft_kill(a.kill_sig)
        else:
            await handle.hard_kill()

    async def _start_job(self, a: m.StartJob) -> None:
        schedd = self.claim_schedd.get(a.claim_id, "")
        starter = RunningStarter(a.slot, a.claim_id, schedd)
        self.starters[a.claim_id] = starter
        starter.scratch = str(self.execute / f"dir_{int(self.daemon.clock())}_{next(self._dirs)}")
        try:
            spec = launch_spec(a.job, starter.scratch, a.slot, {})
        except LaunchError as e:
            self._job_failed(starter, str(e))
            return
        asyncio.get_running_loop().create_task(self._launch(starter, spec, a.job))

    async def _launch(self, starter: RunningStarter, spec: Any, job: ClassAd) -> None:
        """Wait for the job's deferral time (seed: job deferral), then start its starter."""
        now = self.daemon.clock()
        ctx = EvalContext(clock=fixed_clock(now))
        when = job.evaluate("DeferralTime", ctx) if "DeferralTime" in job else None
        if isinstance(when, int | float) and not isinstance(when, bool):
            window = job.evaluate("DeferralWindow", ctx) if "DeferralWindow" in job else 0
            window = window if isinstance(window, int | float) and not isinstance(window, bool) else 0
            if now > when + window:
                self._job_failed(starter, "Job missed its deferral time", missed_deferral=True)
                return
            while self.daemon.clock() < when and not starter.pending:
                await asyncio.sleep(min(1.0, when - self.daemon.clock()))
        if starter.pending:  # vacated or killed while waiting
            self._job_failed(starter, "", killed=True)
            return

        def on_event(event: dict[str, Any]) -> None:
            asyncio.get_running_loop().create_task(self._starter_event(starter, event))

        try:
            starter.handle = await StarterHandle.spawn(
                spec, on_event, stderr_path=str(self.daemon.layout.log / "StarterLog"))
        except OSError as e:
            self._job_failed(starter, f"could not start the starter: {e}")
            return
        for command in starter.pending:
            if command in ("HardKill", "SoftKill"):
                await starter.handle.hard_kill()

    def _job_failed(self, starter: RunningStarter, message: str, *, killed: bool = False,
                    missed_deferral: bool = False) -> None:
        """The job never started: tell the schedd (error → hold), then end the starter's turn."""
        schedd = self.claim_schedd.get(starter.claim_id, starter.schedd)
        if killed:
            self.to_schedd(schedd, JobUpdate(starter.claim_id, starter.slot, "exited", killed=True))
        else:
            event = "missed_deferral" if missed_deferral else "error"
            self.to_schedd(schedd, JobUpdate(starter.claim_id, starter.slot, event, message=message))
        self.starters.pop(starter.claim_id, None)
        asyncio.get_running_loop().create_task(
            self._apply(self.core.handle(m.StarterExited(starter.slot, starter.claim_id), self.daemon.clock())))

    async def _starter_event(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        kind = event.get("event")
        schedd = self.claim_schedd.get(starter.claim_id, starter.schedd)
        if kind == "usage":
            starter.cpu_load = float(event.get("cpu_load", 0.0) or 0.0)
            self.to_schedd(schedd, JobUpdate(
                starter.claim_id, starter.slot, "usage", user_cpu=float(event.get("user_cpu", 0) or 0),
                sys_cpu=float(event.get("sys_cpu", 0) or 0), rss_kb=int(event.get("rss_kb", 0) or 0),
                image_size_kb=int(event.get("image_size_kb", 0) or 0)))
        elif kind in ("started", "suspended", "continued"):
            processes = event.get("processes")
            self.to_schedd(schedd, JobUpdate(starter.claim_id, starter.slot, str(kind),
                                             processes=processes if isinstance(processes, int) else 0))
        elif kind == "error":
            self.to_schedd(schedd, JobUpdate(starter.claim_id, starter.slot, "error",
                                             message=str(event.get("message", ""))))
        elif kind == "exited":
            self.starters.pop(starter.claim_id, None)
            if not event.get("reported_error"):
                self.to_schedd(schedd, JobUpdate(
                    starter.claim_id, starter.slot, "exited", exit_code=_int_or_none(event.get("exit_code")),
                    exit_signal=_int_or_none(event.get("exit_signal")),
                    killed=starter.killed or bool(event.get("killed")), wall=float(event.get("wall", 0) or 0),
                    user_cpu=float(event.get("user_cpu", 0) or 0), sys_cpu=float(event.get("sys_cpu", 0) or 0),
                    rss_kb=int(event.get("rss_kb", 0) or 0)))
            await self._apply(self.core.handle(m.StarterExited(starter.slot, starter.claim_id),
                                               self.daemon.clock()))

    async def _start_backfill(self, slot: str) -> None:
        command = self.daemon.config.get_str("BOINC_Executable", subsystem="STARTD")
        if not command:
            log.warning("START_BACKFILL is true but BOINC_Executable names no backfill command")
            return
        args = (self.daemon.config.get_str("BOINC_Arguments", subsystem="STARTD") or "").split()
        try:
            proc = await asyncio.create_subprocess_exec(command, *args, start_new_session=True,
                                                        stdout=asyncio.subprocess.DEVNULL,
                                                        stderr=asyncio.subprocess.DEVNULL)
        except OSError as e:
            log.warning("backfill command %s failed: %s", command, e)
            return
        self.backfill[slot] = proc
        await self._apply(self.core.handle(m.BackfillClientStarted(slot), self.daemon.clock()))

        async def reap() -> None:
            await proc.wait()
            self.backfill.pop(slot, None)
            await self._apply(self.core.handle(m.BackfillClientExited(slot), self.daemon.clock()))

        asyncio.get_running_loop().create_task(reap())


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _benchmark() -> tuple[int, int]:
    """A rough integer and floating-point speed (Mips and KFlops) from two short timed loops."""
    start = time.perf_counter()
    total = 0
    for i in range(100_000):
        total += i ^ (i >> 3)
    seconds = max(time.perf_counter() - start, 1e-6)
    mips = int(100_000 * 10 / seconds / 1e6) or 1
    start = time.perf_counter()
    x = 1.0
    for _ in range(100_000):
        x = x * 1.000001 + 0.5
    seconds = max(time.perf_counter() - start, 1e-6)
    return mips, int(100_000 * 2 / seconds / 1e3) or 1
