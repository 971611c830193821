"""The simulated access point: the schedd core (``htcpool.schedd.Schedd``) on the virtual clock.

As ``runtime/schedd_service.py`` does, the driver hands every message to the core with the
time, carries out the core's actions in order (messages to a claim's startd, to the negotiator
and to the collector; a reconnection question, which a simulation starting with an empty queue never
asks, is answered "unreachable") and arms the core's timer from its ``next_deadline``. The queue is kept in memory
(``NullStore``: nothing is written, and finished jobs are not kept, so memory follows the
queue, not the trace). The workload's arrivals are ``Submit`` messages at their times. The
core's job events (submit, execute, evicted, terminated, aborted, held …) go to the observers
(``on_events``), which is how the simulation measures jobs; its warnings (a failed transform, a
periodic expression that cannot be evaluated) are counted and the first ``KEPT_WARNINGS`` kept.

Local and scheduler universe jobs run on the access point (``schedd/localjobs.py``): the core's
``StartLocalJob`` starts a ``LocalRun`` that "runs" for the job's ``SimRuntime`` seconds, as a
modelled job on an execute machine does, and reports what the live driver's starter reports
(``runtime/local_universe.py``), each as a ``LocalJobReport`` handed back to the core as a later
event of its instant (the live driver queues them): ``started`` at once, ``usage`` (the CPU time
so far) every ``USAGE_INTERVAL`` seconds, and ``exited`` with exit code 0 at its end.
``StopLocalJob`` ends the run at once, reported ``exited``, killed by the stop's signal (the
job's own kill signal: a modelled job has nothing to clean up, so the grace never runs out).
These runs use no slot of the pool: they count as jobs, not in the pool's utilization.

The core advertises its ads whenever the queue changes (on most submits, as HTCondor's schedd
does), every Submitter ad each time; the core hands an unchanged submitter's ad back as the very
same object (``schedd.ads.SubmitterAds``). The driver does not carry such a repeat to the
collector unless it last carried that ad at least the core's advertising pace ago
(``Schedd.advertising_pace``: ``SCHEDD_INTERVAL``, at most ``PERIODIC_INTERVAL_CAP``): the
collector would store the same attributes, only a newer ``LastHeardFrom``, which nothing in a
simulation reads, and the ad is still refreshed well within its ``ClassAdLifetime`` (``3 × SCHEDD_INTERVAL + 60``). A simulated
collector never restarts, so no ad needs resending for that (the live driver sends every one).
On a 10,000-cpu pool with 100 users the repeats were 93 % of the collector's updates.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from htcpool.classad import ClassAd, as_number
from htcpool.classad.nodes import Literal
from htcpool.config import Config
from htcpool.protocol import JobEvent, JobUpdate, Submit, UpdateAd
from htcpool.runtime.schedd_service import settings_for_schedd
from htcpool.schedd import (
    Action,
    AskStartd,
    LocalJobReport,
    LogEvent,
    NullStore,
    Schedd,
    ScheddError,
    StartdUnreachable,
    StartLocalJob,
    StopLocalJob,
    ToCollector,
    ToNegotiator,
    ToStartd,
)
from htcpool.sim.central import COLLECTOR, NEGOTIATOR
from htcpool.sim.events import EventLoop, Priority
from htcpool.sim.startd_driver import USAGE_INTERVAL
from htcpool.sim.transport import Transport

SCHEDD = "sim://schedd"
SCHEDD_NAME = "schedd@sim"
KEPT_WARNINGS = 100
DEFAULT_KILL_SIGNAL = signal.SIGTERM


@dataclass
class LocalRun:
    """A local or scheduler universe job running on the access point since ``started``."""

    run_id: str
    runtime: float
    started: float
    cpus: float


def _literal_value(node: object) -> object:
    return node.value if type(node) is Literal else None


def kill_signal(name: str) -> int:
    """The number of a signal named as a job's ``KillSig`` (``SIGTERM``, ``TERM`` or ``15``)."""
    text = name.strip().upper()
    if text.isdigit():
        return int(text)
    try:
        return int(signal.Signals[text if text.startswith("SIG") else f"SIG{text}"])
    except KeyError:
        return int(DEFAULT_KILL_SIGNAL)


class ScheddDriver:
    def __init__(self, loop: EventLoop, transport: Transport, config: Config) -> None:
        self.loop = loop
        self.transport = transport
        settings = settings_for_schedd(config, SCHEDD_NAME, "", 0)
        self.core = Schedd(settings, loop.now, store=NullStore(), host="sim")
        self.on_events: list[Callable[[list[tuple[LogEvent, ClassAd | None]]], None]] = []
        self.refused: list[str] = []
        self.warnings: list[str] = []  # the first KEPT_WARNINGS of the core's warnings
        self.warning_count = 0
        self.local_runs: dict[str, LocalRun] = {}
        #: per (MyType, Name), the ad object last carried to the collector and when
        self._carried: dict[tuple[object, object], tuple[ClassAd, float]] = {}
        transport.register(SCHEDD, self.receive)
        self._carry(self.core.start(loop.now, SCHEDD, "<sim:9618>").actions)
        self.arm()

    @property
    def name(self) -> str:
        return self.core.name

    def receive(self, message: Any) -> Any:
        try:
            outcome = self.core.handle(message, self.loop.now)
        except ScheddError as e:
            self.refused.append(f"{type(message).__name__}: {e}")
            return None
        finally:
            self._events()
        self._carry(outcome.actions)
        self.arm()
        return outcome.reply

    def submit(self, owner: str, ads: tuple[Any, ...]) -> Any:
        return self.receive(Submit(owner, ads))

    def arm(self) -> None:
        self.loop.arm(self, self.core.next_deadline(self.loop.now), self.on_timer)

    def on_timer(self, now: float) -> None:
        self._carry(self.core.handle_timer(now).actions)
        self._events()
        self.arm()

    def _events(self) -> None:
        for warning in self.core.take_warnings():
            self.warning_count += 1
            if len(self.warnings) < KEPT_WARNINGS:
                self.warnings.append(warning)
        events = self.core.take_log_events()
        if events:
            for observer in self.on_events:
                observer(events)

    def _carry(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToStartd):
                if action.address:
                    self.transport.send(action.address, action.message)
            elif isinstance(action, ToNegotiator):
                self.transport.send(NEGOTIATOR, action.message)
            elif isinstance(action, ToCollector):
                if not self._repeat(action.message):
                    self.transport.send(COLLECTOR, action.message)
            elif isinstance(action, AskStartd):  # a simulation starts with an empty queue: nothing to find
                self._carry(self.core.handle(StartdUnreachable(action.message.claim_id), self.loop.now).actions)
            elif isinstance(action, StartLocalJob):
                self._start_local(action)
            elif isinstance(action, StopLocalJob):
                self._stop_local(action)

    def _repeat(self, message: object) -> bool:
        """Whether ``message`` is an update of the very ad object carried less than the pace ago
        (see the module docstring); records what is carried."""
        if type(message) is not UpdateAd or message.private is not None:
            return False
        ad, now = message.ad, self.loop.now
        exprs = ad._exprs
        key = (_literal_value(exprs.get("mytype")), _literal_value(exprs.get("name")))
        last = self._carried.get(key)
        if last is not None and last[0] is ad and now - last[1] < self.core.advertising_pace:
            return True
        self._carried[key] = (ad, now)
        return False

    # ------------------------------------------------------------------ local and scheduler universe
    def _start_local(self, action: StartLocalJob) -> None:
        now = self.loop.now
        job = action.job
        runtime = as_number(job.evaluate("SimRuntime")) if "SimRuntime" in job else None
        cpus = as_number(job.evaluate("RequestCpus")) if "RequestCpus" in job else None
        run = LocalRun(action.run_id, max(0.0, float(runtime or 0.0)), now, float(cpus or 1))
        self.local_runs[run.run_id] = run
        self._report_local(JobUpdate(run.run_id, run.run_id, JobEvent.STARTED, processes=1))
        self.loop.at(now + run.runtime, Priority.JOB, lambda: self._end_local(run, None))
        self.loop.at(now + USAGE_INTERVAL, Priority.JOB, lambda: self._local_usage(run))

    def _local_usage(self, run: LocalRun) -> None:
        if self.local_runs.get(run.run_id) is not run:
            return
        now = self.loop.now
        self._deliver(LocalJobReport(JobUpdate(run.run_id, run.run_id, JobEvent.USAGE,
                                               user_cpu=(now - run.started) * run.cpus)))
        self.loop.at(now + USAGE_INTERVAL, Priority.JOB, lambda: self._local_usage(run))

    def _stop_local(self, action: StopLocalJob) -> None:
        run = self.local_runs.get(action.run_id)
        if run is not None:
            self._end_local(run, kill_signal(action.kill_sig), later=True)

    def _end_local(self, run: LocalRun, killed_by: int | None, later: bool = False) -> None:
        """The run's end: its job exited (``killed_by`` None, exit code 0) or was killed."""
        if self.local_runs.get(run.run_id) is not run:
            return
        del self.local_runs[run.run_id]
        wall = self.loop.now - run.started
        update = JobUpdate(run.run_id, run.run_id, JobEvent.EXITED, exit_code=0 if killed_by is None else None,
                           exit_signal=killed_by, killed=killed_by is not None, wall=wall, user_cpu=wall * run.cpus)
        if later:
            self._report_local(update)
        else:
            self._deliver(LocalJobReport(update))

    def _report_local(self, update: JobUpdate) -> None:
        """A report handed to the core after the actions being carried out now (the live driver
        queues its starters' reports the same way)."""
        self.loop.at(self.loop.now, Priority.JOB, lambda: self._deliver(LocalJobReport(update)))

    def _deliver(self, report: LocalJobReport) -> None:
        self.receive(report)


__all__ = ["SCHEDD", "SCHEDD_NAME", "ScheddDriver"]
