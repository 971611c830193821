"""One simulated execute machine: the startd core (``htcpool.startd.Startd``) with modelled jobs.

The driver does what ``runtime/startd_service.py`` does, on the virtual clock and nothing more:

* messages from the schedd and the negotiator go to the core (a ``RequestClaim`` also tells
  which schedd holds the claim), and the core's timer is armed from its ``next_deadline``;
* ``SendAd`` goes to the collector as the live startd sends it (``runtime.startd_ads``: the
  address and, as private attributes, the claim ids); a slot that becomes Unclaimed asks the
  negotiator for a cycle (``startd_ads.FreedSlots``), as the live startd does;
* ``StartJob`` starts a ``ModelledJob`` that "runs" for the job ad's ``SimRuntime`` seconds:
  it reports ``started`` at once and, at its end, ``exited`` (exit code 0) followed by
  ``StarterExited`` to the core, the events of a live starter. In between it reports its usage
  (``usage``, the CPU time so far) to the schedd when the live starter's reports would go
  (``reports``: STARTER_INITIAL_UPDATE_INTERVAL after the start, then every
  STARTER_UPDATE_INTERVAL, read from the pool's configuration as the live startd reads them,
  ``runtime.confinement.update_intervals``), suspended or not: each report renews the schedd's
  lease on the claim (``JobLeaseDuration``), so a job longer than its lease runs through. (The
  live starter's readings between two reports stay inside its startd.)
  That report chain is the job's one timer besides its end. ``SuspendJob`` stops its clock,
  ``ContinueJob`` restarts it; ``SoftKill`` (signal 15), ``HardKill`` and ``KillStarterFamily``
  (signal 9) end it at once, reported ``killed``;
* claim replies (with the partitionable slot's leftovers), activation replies (preceded by the
  ``provisioned`` update), deactivation replies, holds, notices and the core's own job updates
  go to the schedd of the claim;
* a quiet machine's polls (``startd.quiet``: every slot settled, nothing moving) are left out of
  the event loop: the machine's timer is armed for the first poll that does more
  (``Startd.quiet_deadline``), and whatever reaches the machine before then first makes the polls
  it missed (``Startd.catch_up``), the one of its own instant too when that poll would have
  fired before (``EventLoop.passed``); a third of a busy pool's events were such polls
  (``quiet_polls=False`` keeps them, for the test that compares the two);
* sensors are fixed: no load, and no owner activity for a year (``IDLE_FOR``) unless the machine
  file gives the machine an owner (``owner``: the readings follow the owner's hours); benchmarks give
  ``MIPS`` and ``KFLOPS``; a backfill client starts and stops at once. Drain replies and the
  core's daemon actions are recorded (``notes``, the first ``KEPT_NOTES``), as are policy problems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from htcpool.classad import as_number
from htcpool.protocol import InvalidateAd, JobEvent, JobUpdate, Reschedule, UpdateAd
from htcpool.protocol import startd as m
from htcpool.runtime.launch import DEFAULT_USAGE_INTERVAL
from htcpool.runtime.startd_ads import FreedSlots, leftovers, provisioned, slot_update
from htcpool.sim.events import EventLoop, Priority
from htcpool.sim.owner import TOUCH_INTERVAL, OwnerActivity
from htcpool.sim.transport import Transport
from htcpool.startd import Startd, StartdSettings

IDLE_FOR = 365 * 86400.0  # seconds since the owner last touched a simulated machine
MIPS = 20_000
KFLOPS = 2_000_000
SOFT_KILL_SIGNAL = 15
HARD_KILL_SIGNAL = 9
KEPT_NOTES = 100  # drain replies, daemon actions and policy problems kept per machine
#: seconds between two usage reports of a running job where the driver is not told
#: (``reports``); a local-universe job's reports (``schedd_driver``) keep this interval
USAGE_INTERVAL = DEFAULT_USAGE_INTERVAL


@dataclass
class ModelledJob:
    """A job that runs for ``remaining`` more seconds from ``resumed`` (None while suspended)."""

    slot: str
    claim_id: str
    schedd: str
    owner: str
    group: str
    cpus: float
    runtime: float
    remaining: float
    resumed: float | None
    generation: int = 0
    killed: bool = False


class Hooks(Protocol):
    """What the simulation measures of the machines (``metrics.Recorder`` implements it)."""

    def job_running(self, job: ModelledJob, now: float) -> None: ...

    def job_stopped(self, job: ModelledJob, now: float) -> None: ...


class StartdDriver:
    """One machine of the simulated pool."""

    def __init__(self, loop: EventLoop, transport: Transport, settings: StartdSettings, *,
                 collector: str, negotiator: str, schedd_address: Callable[[str], str | None],
                 hooks: Hooks, disk: int | None = None, owner: OwnerActivity | None = None,
                 reports: tuple[float, float] = (USAGE_INTERVAL, USAGE_INTERVAL), quiet_polls: bool = False) -> None:
        self.loop = loop
        self.quiet_polls = quiet_polls  # whether a quiet machine's polls are events of their own
        self.reports = reports  # (first, every): seconds between a job's start and its usage reports
        self.transport = transport
        self.collector = collector
        self.negotiator = negotiator
        self.schedd_address = schedd_address
        self.hooks = hooks
        self.address = f"sim://startd/{settings.hostname}"
        self.sinful = f"<{settings.hostname}:9618>"
        self.claim_schedd: dict[str, str] = {}
        self.freed = FreedSlots()
        self.jobs: dict[str, ModelledJob] = {}
        self.notes: list[str] = []
        transport.register(self.address, self.receive)
        now = loop.now
        self.core = Startd(settings, now, disk=disk)
        self.owner = owner
        self.apply(self.core.initial_actions)
        self.apply(self.core.handle(self._readings(now), now))
        if owner is not None:
            self.loop.at(self._next_touch(now), Priority.JOB, self._owner_touch)
        self.apply(self.core.evaluate(now))
        for name, ad in self.core.ads().items():
            self._advertise(name, ad)
        self.arm()

    # ------------------------------------------------------------------ messages and timers
    def receive(self, message: Any) -> Any:
        """A message for the core; a drain request is answered with the core's ``DrainReply``."""
        if isinstance(message, m.RequestClaim):
            self.claim_schedd[message.claim_id] = message.schedd
        self._catch_up()
        actions = self.core.handle(message, self.loop.now)
        self.apply(actions)
        self.arm()
        return next((a for a in reversed(actions) if isinstance(a, m.DrainReply)), None)

    def arm(self) -> None:
        core = self.core
        self.loop.arm(self, core.next_deadline() if self.quiet_polls else core.quiet_deadline(), self.on_timer)

    def _catch_up(self) -> None:
        """The quiet polls left out before the event at hand (see the module docstring)."""
        if not self.quiet_polls:
            self.core.catch_up(self.loop.now, self.loop.passed(self))

    # ------------------------------------------------------------------ the owner (``owner``)
    def _readings(self, now: float) -> m.SensorReadings:
        touched = self.owner.last_touch(now) if self.owner is not None else None
        idle = IDLE_FOR if touched is None else now - touched
        return m.SensorReadings(load_avg=0.0, keyboard_idle=idle, console_idle=idle)

    def _next_touch(self, now: float) -> float:
        assert self.owner is not None
        change = self.owner.next_change(now)
        return min(change, now + TOUCH_INTERVAL) if self.owner.active(now) else change

    def _owner_touch(self) -> None:
        """What the sensors see at a touch of the owner, or at the end of the owner's period."""
        now = self.loop.now
        self._catch_up()
        self.apply(self.core.handle(self._readings(now), now))
        self.arm()
        self.loop.at(self._next_touch(now), Priority.JOB, self._owner_touch)

    def on_timer(self, now: float) -> None:
        self._catch_up()
        self.apply(self.core.handle_timer(now))
        self.arm()

    def apply(self, actions: list[Any]) -> None:
        for action in actions:
            ACTIONS[type(action)](self, action)

    # ------------------------------------------------------------------ the schedd and the collector
    def to_schedd(self, schedd: str, message: Any) -> None:
        address = self.schedd_address(schedd)
        if address is not None:
            self.transport.send(address, message)

    def _to_claim_schedd(self, claim_id: str, message: Any, fallback: str = "") -> None:
        self.to_schedd(self.claim_schedd.get(claim_id, fallback), message)

    def _advertise(self, name: str, ad: Any) -> None:
        if self.freed.freed(name, ad):
            self.transport.send(self.negotiator, Reschedule(f"{name} is free"))
        update: UpdateAd = slot_update(ad, self.core.find_slot(name), self.address, self.sinful)
        self.transport.send(self.collector, update)

    # ------------------------------------------------------------------ the core's actions
    def _send_ad(self, a: m.SendAd) -> None:
        if a.invalidate or a.ad is None:
            self.transport.send(self.collector, InvalidateAd("Machine", a.name))
        else:
            self._advertise(a.name, a.ad)

    def _start_job(self, a: m.StartJob) -> None:
        now = self.loop.now
        runtime = as_number(a.job.evaluate("SimRuntime")) if "SimRuntime" in a.job else None
        runtime = max(0.0, float(runtime)) if runtime is not None else 0.0
        owner, group = a.job.get("Owner"), a.job.get("AccountingGroup")
        slot = self.core.find_claim(a.claim_id)
        cpus = as_number(slot.ad.get("Cpus")) if slot is not None else None
        job = ModelledJob(a.slot, a.claim_id, self.claim_schedd.get(a.claim_id, ""),
                          owner if isinstance(owner, str) else "", group if isinstance(group, str) else "",
                          float(cpus or 1), runtime, runtime, now)
        self.jobs[a.claim_id] = job
        self.hooks.job_running(job, now)
        self._schedule_end(job)
        self.loop.at(now + self.reports[0], Priority.JOB, lambda: self._report_usage(job))

    def _report_usage(self, job: ModelledJob) -> None:
        """The starter's periodic usage report (while the job is this machine's), and the next one."""
        if self.jobs.get(job.claim_id) is not job:
            return
        now = self.loop.now
        ran = job.runtime - self._remaining(job, now)
        self._to_claim_schedd(job.claim_id, JobUpdate(job.claim_id, job.slot, JobEvent.USAGE,
                                                      user_cpu=ran * job.cpus), job.schedd)
        self.loop.at(now + self.reports[1], Priority.JOB, lambda: self._report_usage(job))

    def _schedule_end(self, job: ModelledJob) -> None:
        generation = job.generation
        self.loop.at(self.loop.now + job.remaining, Priority.JOB, lambda: self._job_ends(job, generation))

    def _job_ends(self, job: ModelledJob, generation: int) -> None:
        if job.generation != generation or self.jobs.get(job.claim_id) is not job:
            return
        self._finish(job, exit_code=0, exit_signal=None)

    def _finish(self, job: ModelledJob, exit_code: int | None, exit_signal: int | None) -> None:
        now = self.loop.now
        if job.resumed is not None:
            self.hooks.job_stopped(job, now)
        del self.jobs[job.claim_id]
        self._catch_up()
        wall = job.runtime - self._remaining(job, now)
        self._to_claim_schedd(job.claim_id, JobUpdate(
            job.claim_id, job.slot, JobEvent.EXITED, exit_code=exit_code, exit_signal=exit_signal,
            killed=job.killed, wall=wall, user_cpu=wall * job.cpus), job.schedd)
        self.apply(self.core.handle(m.StarterExited(job.slot, job.claim_id), now))
        self.arm()

    @staticmethod
    def _remaining(job: ModelledJob, now: float) -> float:
        return job.remaining if job.resumed is None else max(0.0, job.remaining - (now - job.resumed))

    def _find(self, claim_id: str, slot: str) -> ModelledJob | None:
        job = self.jobs.get(claim_id)
        return job or next((j for j in self.jobs.values() if j.slot == slot), None)

    def _suspend(self, a: m.SuspendJob) -> None:
        job = self._find(a.claim_id, a.slot)
        if job is None or job.resumed is None:
            return
        now = self.loop.now
        job.remaining = self._remaining(job, now)
        job.resumed = None
        job.generation += 1
        self.hooks.job_stopped(job, now)
        self._to_claim_schedd(job.claim_id, JobUpdate(job.claim_id, job.slot, JobEvent.SUSPENDED, processes=1),
                              job.schedd)

    def _continue(self, a: m.ContinueJob) -> None:
        job = self._find(a.claim_id, a.slot)
        if job is None or job.resumed is not None:
            return
        job.resumed = self.loop.now
        self.hooks.job_running(job, self.loop.now)
        self._to_claim_schedd(job.claim_id, JobUpdate(job.claim_id, job.slot, JobEvent.CONTINUED, processes=1),
                              job.schedd)
        self._schedule_end(job)

    def _kill(self, a: m.SoftKill | m.HardKill | m.KillStarterFamily) -> None:
        job = self._find(a.claim_id, a.slot)
        if job is None:
            return
        job.killed = True
        job.remaining = self._remaining(job, self.loop.now)
        self._finish(job, None, SOFT_KILL_SIGNAL if isinstance(a, m.SoftKill) else HARD_KILL_SIGNAL)

    def _claim_reply(self, a: m.ClaimReply) -> None:
        reply = a
        if a.accepted and a.leftovers is not None:
            pslot = self.core.find_slot(str(a.leftovers.get("Name", "")))
            if pslot is not None:
                reply = replace(a, leftovers=leftovers(a.leftovers, pslot, self.address, self.sinful))
        self._to_claim_schedd(a.claim_id, reply)

    def _activate_reply(self, a: m.ActivateReply) -> None:
        if a.accepted:  # as the live startd: what the slot gives the job, in the reply
            a = replace(a, resources=provisioned(self.core.find_claim(a.claim_id), f"/sim/execute/{a.claim_id}"))
        self._to_claim_schedd(a.claim_id, a)

    def _claim_message(self, a: m.DeactivateReply | m.HoldJob | JobUpdate) -> None:
        self._to_claim_schedd(a.claim_id, a)

    def _notify_schedd(self, a: m.NotifySchedd) -> None:
        self.to_schedd(a.schedd or self.claim_schedd.get(a.claim_id, ""), a)
        if a.kind is m.Notice.RELEASE:
            self.claim_schedd.pop(a.claim_id, None)

    def _benchmarks(self, a: m.RunBenchmarks) -> None:
        self.apply(self.core.handle(m.BenchmarksFinished(a.slot, MIPS, KFLOPS), self.loop.now))

    def _backfill_start(self, a: m.StartBackfillClient) -> None:
        self.apply(self.core.handle(m.BackfillClientStarted(a.slot), self.loop.now))

    def _backfill_kill(self, a: m.KillBackfillClient) -> None:
        self.apply(self.core.handle(m.BackfillClientExited(a.slot), self.loop.now))

    def _note(self, a: m.DrainReply | m.DaemonAction | m.PolicyProblem) -> None:
        if len(self.notes) < KEPT_NOTES:
            self.notes.append(repr(a))


ACTIONS: dict[type, Callable[[StartdDriver, Any], None]] = {
    m.SendAd: StartdDriver._send_ad,
    m.StartJob: StartdDriver._start_job,
    m.SuspendJob: StartdDriver._suspend,
    m.ContinueJob: StartdDriver._continue,
    m.SoftKill: StartdDriver._kill,
    m.HardKill: StartdDriver._kill,
    m.KillStarterFamily: StartdDriver._kill,
    m.ClaimReply: StartdDriver._claim_reply,
    m.ActivateReply: StartdDriver._activate_reply,
    m.DeactivateReply: StartdDriver._claim_message,
    m.HoldJob: StartdDriver._claim_message,
    JobUpdate: StartdDriver._claim_message,
    m.NotifySchedd: StartdDriver._notify_schedd,
    m.RunBenchmarks: StartdDriver._benchmarks,
    m.StartBackfillClient: StartdDriver._backfill_start,
    m.KillBackfillClient: StartdDriver._backfill_kill,
    m.DrainReply: StartdDriver._note,
    m.DaemonAction: StartdDriver._note,
    m.PolicyProblem: StartdDriver._note,
}

__all__ = ["ACTIONS", "Hooks", "ModelledJob", "StartdDriver"]
