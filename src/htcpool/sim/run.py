"""``simulate(options)``: replay a workload against a pool on the virtual clock.

A run builds the pool (``setup``: the configuration each daemon reads; ``machines``: the
execute machines), the drivers of the real cores (``central``: collector and negotiator;
``schedd_driver``; ``startd_driver``, one per machine) joined by the in-memory ``transport``
on one ``events.EventLoop``, with ``defrag_driver`` when ``DAEMON_LIST`` names ``DEFRAG``, and then
runs the loop. The workload (``workload``) is read one
arrival ahead: an arrival is an event that submits its jobs to the schedd and reads the next.

The virtual clock starts at the workload's epoch (``; UnixStartTime`` of an SWF trace, the
first ``QDate`` of a history file, else 2026-01-01), so the cores' ClassAd ``time()`` reads
realistic dates; every time written is in seconds from that start.

The run ends at ``until`` (seconds from the start) when given. Otherwise it ends when the whole
workload has been submitted and no job is idle or running (held jobs are left where they are),
or when it is stalled: nothing runs, and three negotiation cycles in a row matched nothing
while no queued job waits for a deferral or crontab time and no SWF job waits for its think
time after the job it follows (``dependencies``): jobs no machine will ever take, and those
that follow them. Where machines have owners (``owner``), whose comings and goings change what
``START`` allows, the cycles must have been fruitless for a whole day.
A crontab job runs again and again: give ``until`` for such a workload. ``seed`` seeds the
configuration's and the submit language's random choices (``$RANDOM_INTEGER``); the cores
themselves draw no random numbers, and ties are broken in a fixed order (``events``), so a run is
reproducible.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd, as_number
from htcpool.negotiator import CycleOutcome
from htcpool.runtime.confinement import update_intervals
from htcpool.schedd import LogEvent
from htcpool.sim.central import COLLECTOR, NEGOTIATOR, CollectorDriver, NegotiatorDriver
from htcpool.sim.defrag_driver import DefragDriver
from htcpool.sim.dependencies import Dependencies
from htcpool.sim.errors import SimInputError
from htcpool.sim.events import EventLoop, Priority
from htcpool.sim.machines import read_machines
from htcpool.sim.metrics import ABORTED, SUBMIT, TERMINATED, Recorder
from htcpool.sim.options import Progress, SimOptions
from htcpool.sim.schedd_driver import SCHEDD, ScheddDriver
from htcpool.sim.setup import read_pool_config, startd_settings
from htcpool.sim.startd_driver import StartdDriver
from htcpool.sim.summary import build_summary, write_summary
from htcpool.sim.transport import Transport
from htcpool.sim.userprio_file import read_userprio
from htcpool.sim.workload import Arrival, Workload
from htcpool.startd import StartdSettings

#: events between two progress reports
PROGRESS_EVERY = 20_000
#: negotiation cycles in a row without a match, with nothing running, that end a stalled run
STALL_CYCLES = 3
#: with owners on machines (``owner``), how long fruitless cycles must last before a run is stalled
OWNER_DAY = 86400.0
#: new objects between two collections of the youngest generation during a run (Python's: 700).
#: A run's cycles and evaluations leave almost no reference loops (``NegotiationCycle.close``), so
#: the collector's passes find next to nothing and only walk the ads that live on: 500,000 took
#: 2.4 CPU s of the first hour on 10,000 cpus where 50,000 took 5.8 (docs/performance.md)
GC_YOUNG_THRESHOLD = 500_000
#: job attributes that make an idle job wait for a time rather than a machine
TIMED_ATTRS = ("DeferralTime", "CronMinute", "CronHour", "CronDayOfMonth", "CronMonth", "CronDayOfWeek")


def pool_notes(total_cpus: float, max_jobs_running: int) -> list[str]:
    """What an administrator should know of the simulated pool before reading its results: the
    access point's MAX_JOBS_RUNNING below the pool's cpus (HTCondor's default is
    ``MIN({$(DETECTED_MEMORY), 10000})``, 8,192 on the simulator's fixed machine facts, whatever
    the real access point's memory) caps the running jobs below what the pool could run."""
    if max_jobs_running < total_cpus:
        return [f"MAX_JOBS_RUNNING is {max_jobs_running}, below the pool's {total_cpus:.0f} cpus: the schedd "
                f"runs at most {max_jobs_running} jobs at once; set MAX_JOBS_RUNNING (in the "
                f"configuration or with --set) to the real access point's value"]
    return []


class Simulation:
    """One run; see the module docstring."""

    def __init__(self, options: SimOptions) -> None:
        self.options = options
        self.workload = Workload(options.workload, options.skip_bad, options.seed)
        self.epoch = self.workload.epoch
        self.loop = EventLoop(self.epoch)
        self.transport = Transport(self.loop, options.message_delay)
        config = options.config
        self.collector = CollectorDriver(self.loop, self.transport,
                                         read_pool_config(config, options.overrides, "COLLECTOR", self.epoch))
        self.schedd = ScheddDriver(self.loop, self.transport,
                                   read_pool_config(config, options.overrides, "SCHEDD", self.epoch))
        userprio = read_userprio(options.userprio, self.epoch) if options.userprio is not None else None
        self.negotiator = NegotiatorDriver(self.loop, self.transport,
                                           read_pool_config(config, options.overrides, "NEGOTIATOR", self.epoch),
                                           self.schedd.core.settings.accounting_domain, userprio)
        classes = read_machines(options.machines)
        if not classes:
            raise SimInputError(options.machines, None, "no machines")
        total_cpus = 0.0
        settings = [(c, startd_settings(config, options.overrides, c, self.epoch)) for c in classes]
        reports = update_intervals(read_pool_config(config, options.overrides, "STARTD", self.epoch))
        Path(options.out).mkdir(parents=True, exist_ok=True)
        self.recorder = Recorder(options.out, self.epoch, 0.0)
        self.startds: list[StartdDriver] = []
        numbers = itertools.count(1)
        for machine, base in settings:
            names = machine.names or tuple(f"exec{next(numbers):05d}.sim" for _ in range(machine.count))
            for name in names:
                driver = StartdDriver(self.loop, self.transport, _named(base, name), collector=COLLECTOR,
                                      negotiator=NEGOTIATOR, schedd_address=self._schedd_address,
                                      hooks=self.recorder, disk=None, owner=machine.owner, reports=reports)
                total_cpus += float(as_number(driver.core.totals.get("TotalCpus")) or 0)
                self.startds.append(driver)
        self.recorder.total_cpus = total_cpus
        self.notes = pool_notes(total_cpus, self.schedd.core.settings.limits.max_jobs_running)
        defrag_config = read_pool_config(config, options.overrides, "DEFRAG", self.epoch)
        daemons = (defrag_config.get_str("DAEMON_LIST") or "").replace(",", " ").upper().split()
        self.defrag = DefragDriver(self.loop, self.transport, defrag_config, options.seed) \
            if "DEFRAG" in daemons else None
        self.schedd.on_events.append(self._events)
        self.negotiator.on_cycle.append(self._cycle)
        self.arrivals: Iterator[Arrival] = iter(self.workload)
        self.dependencies = Dependencies(self._submit_later)
        self.exhausted = False
        self.stalled = 0
        self.stalled_since = 0.0  # when the current run of fruitless cycles began
        #: machines whose owners come and go: their START may become true with the clock alone
        self.owned = any(d.owner is not None for d in self.startds)
        self.stop_reason = ""

    def _schedd_address(self, name: str) -> str | None:
        return SCHEDD if name == self.schedd.name or not name else None

    # ------------------------------------------------------------------ arrivals
    def _next_arrival(self) -> None:
        arrival = next(self.arrivals, None)
        if arrival is None:
            self.exhausted = True
            return
        self.loop.at(self.epoch + arrival.time, Priority.ARRIVAL, lambda: self._arrive(arrival))

    def _arrive(self, arrival: Arrival) -> None:
        if self.dependencies.arrive(arrival, self.loop.now - self.epoch):
            self.schedd.submit(arrival.owner, arrival.ads)
        self._next_arrival()

    def _submit_later(self, at: float, arrival: Arrival) -> None:
        """Submit an arrival that waited for the job it follows, at ``at`` (from the start)."""
        def submit() -> None:
            self.dependencies.submitting(arrival)
            self.schedd.submit(arrival.owner, arrival.ads)
        self.loop.at(self.epoch + at, Priority.ARRIVAL, submit)

    # ------------------------------------------------------------------ observers
    def _events(self, pairs: list[tuple[LogEvent, ClassAd | None]]) -> None:
        self.recorder.observe_events(pairs)
        for event, ad in pairs:
            if event.code == SUBMIT and ad is not None and "SwfJobNumber" in ad:
                number = as_number(ad.get("SwfJobNumber"))
                if number is not None:
                    self.dependencies.submitted(int(number), (event.cluster, event.proc))
            elif event.code in (TERMINATED, ABORTED):
                self.dependencies.left((event.cluster, event.proc), event.time - self.epoch)

    def _cycle(self, now: float, outcome: CycleOutcome) -> None:
        self.recorder.observe_cycle(now, self.negotiator.accountant)
        idle_pool = self.recorder.counts["running"] == 0 and self.recorder.busy_cpus == 0
        waiting = bool(self.dependencies.scheduled)  # an SWF job to come after its think time
        fruitless = self.exhausted and idle_pool and not outcome.result.matches and not waiting
        if fruitless and self.stalled == 0:
            self.stalled_since = now
        self.stalled = self.stalled + 1 if fruitless else 0

    def _done(self) -> bool:
        if not self.exhausted:
            return False
        if self.recorder.active == 0 and not self.dependencies.pending:
            self.stop_reason = "all jobs done"
            return True
        owners_may_leave = self.owned and self.loop.now - self.stalled_since < OWNER_DAY
        if self.stalled >= STALL_CYCLES and not self._timed_jobs() and not owners_may_leave:
            self.stop_reason = "stalled: no job can run"
            return True
        return False

    def _timed_jobs(self) -> bool:
        return any(any(a in ad for a in TIMED_ATTRS) for ad in self.schedd.core.queue.jobs.values())

    # ------------------------------------------------------------------ the run
    def run(self) -> dict[str, Any]:
        started = time.perf_counter()
        until = None if self.options.until is None else self.epoch + self.options.until
        on_progress = self.options.on_progress

        def tick() -> None:
            if on_progress is not None:
                wall = time.perf_counter() - started
                on_progress(Progress(self.loop.now - self.epoch, self.options.until, self.loop.events,
                                     self.loop.events / wall if wall > 0 else 0.0, self.recorder.completed,
                                     self.workload.jobs_read))

        self._next_arrival()
        with _fewer_collections():
            self.loop.run(until=until, stop=self._done if until is None else None, every=PROGRESS_EVERY, tick=tick)
        if until is not None:
            self.stop_reason = "until"
        elif not self.stop_reason:
            self.stop_reason = "no events left"
        tick()
        now = self.loop.now
        self.recorder.finish(now)
        self.recorder.close()
        wall = time.perf_counter() - started
        summary = build_summary(self.recorder, simulated_s=now - self.epoch, cycles=self.negotiator.cycles,
                                matches=self.negotiator.matches, skipped=self.workload.skipped,
                                drains=self.defrag.drains if self.defrag is not None else 0,
                                warnings=self.schedd.warning_count, notes=self.notes,
                                stop_reason=self.stop_reason, wall_s=wall)
        write_summary(self.options.out / "summary.json", summary)
        return summary


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector, made to run less often during the run: the pool built
    before it (every machine's ads and policies) is moved out of the collector's sight
    (``gc.freeze``), and a collection starts after ``GC_YOUNG_THRESHOLD`` new objects instead of
    700. The cores allocate many short-lived ads and tuples; with the default thresholds the
    collector's passes over the whole pool took a third of a run (docs/performance.md,
    "Simulator"). Nothing the simulation computes depends on it."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _named(settings: StartdSettings, hostname: str) -> StartdSettings:
    return replace(settings, hostname=hostname)


def simulate(options: SimOptions) -> dict[str, Any]:
    """Run the simulation, write summary.json and the CSVs into options.out, return the summary."""
    return Simulation(options).run()


__all__ = ["Simulation", "simulate"]
