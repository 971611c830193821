"""What a simulation measures, and the files it writes (the contract read by ``sim.report``).

The ``Recorder`` hears three things: the schedd core's job events (``observe_events``), the
modelled jobs starting and stopping on the machines (``job_running``/``job_stopped``, the
``startd_driver.Hooks``), and each negotiation cycle (``observe_cycle``). From them it keeps

* per job, while the job is queued: owner, group, ``QDate``, first and latest start, cpus,
  evictions. A job that leaves the queue is written to ``jobs.csv`` at once and forgotten, so
  memory follows the queue; only each user's and group's wait times stay (8 bytes a job, for
  the percentiles);
* counts of idle, running (suspended included) and held jobs, from the events;
* busy cpus and cpu-seconds per user and group, from the modelled jobs (a suspended job is not
  busy);
* one row of ``timeseries.csv`` per negotiation cycle (after the cycle's matches are sent,
  before they take effect) and, at the same times, one row of ``usage.csv`` per user and group
  seen so far, with the accountant's effective priority (priority × factor; for a group, its
  record's when it has one, else empty).

Columns: ``timeseries.csv`` time_s, running_jobs, idle_jobs, held_jobs, busy_cpus, total_cpus,
utilization; ``usage.csv`` time_s, kind (user or group), name, running_jobs, cpus_in_use, cpu_s,
effective_priority; ``jobs.csv`` job_id, owner, group, qdate_s, start_s, end_s, wait_s, runtime_s,
cpus, preemptions (start_s is the first execute event, logged when the claim is activated, so a
deferred job's start_s is before its deferral time; runtime_s is the last run's, from that event; a removed job has an
empty start_s when it never ran). Times are seconds from the start of the simulation.
``badput_s`` is the wall time of runs that ended in an eviction or a hold, times their cpus
(cpu-seconds lost). A job is "ungrouped" when its ``AccountingGroup`` names no group
(``<none>``, HTCondor's name for the root group); a job's group is its ``AccountingGroup`` without
the user and the domain (``group_a.alice@example`` → ``group_a``).
"""

from __future__ import annotations

import csv
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from htcpool.classad import ClassAd, as_number
from htcpool.negotiator import Accountant
from htcpool.schedd import LogEvent
from htcpool.sim.startd_driver import ModelledJob

SUBMIT, EXECUTE, EVICTED, TERMINATED, ABORTED, HELD, RELEASED = 0, 1, 4, 5, 9, 12, 13
NO_GROUP = "<none>"
TIMESERIES = ("time_s", "running_jobs", "idle_jobs", "held_jobs", "busy_cpus", "total_cpus", "utilization")
USAGE = ("time_s", "kind", "name", "running_jobs", "cpus_in_use", "cpu_s", "effective_priority")
JOBS = ("job_id", "owner", "group", "qdate_s", "start_s", "end_s", "wait_s", "runtime_s", "cpus", "preemptions")


@dataclass
class JobRecord:
    owner: str
    group: str
    qdate: float
    cpus: float
    state: str = "idle"  # idle, running or held
    first_start: float | None = None
    last_start: float | None = None
    preemptions: int = 0


@dataclass
class Party:
    """A user's or a group's totals."""

    running_jobs: int = 0
    cpus_in_use: float = 0.0
    cpu_s: float = 0.0
    since: float = 0.0  # cpu_s counted up to here
    completed: int = 0
    waits: array = field(default_factory=lambda: array("d"))

    def advance(self, now: float) -> None:
        self.cpu_s += self.cpus_in_use * (now - self.since)
        self.since = now


def group_of(accounting_group: Any) -> str:
    """The group part of an ``AccountingGroup`` (``group_a.alice`` → ``group_a``)."""
    if isinstance(accounting_group, str):
        name = accounting_group.partition("@")[0]
        if "." in name:
            return name.rpartition(".")[0]
    return NO_GROUP


def _t(value: float | None) -> str:
    return "" if value is None else repr(round(value, 6))


class Recorder:
    def __init__(self, out: Path, epoch: float, total_cpus: float) -> None:
        self.epoch = epoch
        self.total_cpus = total_cpus
        self.jobs: dict[tuple[int, int], JobRecord] = {}
        self.users: dict[str, Party] = {}
        self.groups: dict[str, Party] = {}
        self.counts = {"idle": 0, "running": 0, "held": 0}
        self.submitted = self.completed = self.removed = self.preemptions = 0
        self.badput = 0.0
        self.busy_cpus = 0.0
        self.busy_cpu_s = 0.0
        self._busy_since = epoch
        self.first_submit: float | None = None
        self.last_end: float | None = None
        self._files: list[IO[str]] = []
        self.timeseries = self._writer(out / "timeseries.csv", TIMESERIES)
        self.usage = self._writer(out / "usage.csv", USAGE)
        self.job_rows = self._writer(out / "jobs.csv", JOBS)

    def _writer(self, path: Path, header: tuple[str, ...]) -> Any:
        f = path.open("w", newline="")
        self._files.append(f)
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        return writer

    def close(self) -> None:
        for f in self._files:
            f.close()

    @property
    def active(self) -> int:
        """Jobs idle or running (held ones wait for someone to release them)."""
        return self.counts["idle"] + self.counts["running"]

    # ------------------------------------------------------------------ the schedd's events
    def observe_events(self, events: list[tuple[LogEvent, ClassAd | None]]) -> None:
        for event, ad in events:
            job_id = (event.cluster, event.proc)
            if event.code == SUBMIT:
                self._submitted(job_id, ad, event.time)
                continue
            record = self.jobs.get(job_id)
            if record is None:
                continue
            if event.code == EXECUTE:
                self._move(record, "running")
                record.last_start = event.time
                if record.first_start is None:
                    record.first_start = event.time
            elif event.code == EVICTED:
                record.preemptions += 1
                self.preemptions += 1
                self._lost(record, event.time)
                self._move(record, "idle")
            elif event.code == HELD:
                self._lost(record, event.time)
                self._move(record, "held")
            elif event.code == RELEASED:
                self._move(record, "idle")
            elif event.code in (TERMINATED, ABORTED):
                self._left(job_id, record, event.time, event.code == TERMINATED)

    def _submitted(self, job_id: tuple[int, int], ad: ClassAd | None, now: float) -> None:
        owner = ad.get("Owner") if ad is not None else None
        cpus = as_number(ad.get("RequestCpus")) if ad is not None else None
        record = JobRecord(owner if isinstance(owner, str) else "", group_of(ad.get("AccountingGroup") if ad else None),
                           now, float(cpus or 1))
        self.jobs[job_id] = record
        self.counts["idle"] += 1
        self.submitted += 1
        if self.first_submit is None:
            self.first_submit = now

    def _move(self, record: JobRecord, state: str) -> None:
        self.counts[record.state] -= 1
        self.counts[state] += 1
        record.state = state

    def _lost(self, record: JobRecord, now: float) -> None:
        if record.state == "running" and record.last_start is not None:
            self.badput += (now - record.last_start) * record.cpus

    def _left(self, job_id: tuple[int, int], record: JobRecord, now: float, completed: bool) -> None:
        del self.jobs[job_id]
        self.counts[record.state] -= 1
        e = self.epoch
        start = record.first_start
        wait = (start - record.qdate) if start is not None else None
        runtime = (now - record.last_start) if record.last_start is not None and record.state == "running" else None
        if completed:
            self.completed += 1
            self.last_end = now
            for party in (self._user(record.owner), self._group(record.group)):
                party.completed += 1
                if wait is not None:
                    party.waits.append(wait)
        else:
            self.removed += 1
            if record.state == "running":
                self._lost(record, now)
        self.job_rows.writerow((f"{job_id[0]}.{job_id[1]}", record.owner, record.group, _t(record.qdate - e),
                                _t(None if start is None else start - e), _t(now - e), _t(wait), _t(runtime),
                                _t(record.cpus), record.preemptions))

    def _user(self, name: str) -> Party:
        return self.users.setdefault(name, Party())

    def _group(self, name: str) -> Party:
        return self.groups.setdefault(name, Party())

    # ------------------------------------------------------------------ the machines
    def _advance(self, now: float) -> None:
        self.busy_cpu_s += self.busy_cpus * (now - self._busy_since)
        self._busy_since = now

    def job_running(self, job: ModelledJob, now: float) -> None:
        self._change(job, now, +1)

    def job_stopped(self, job: ModelledJob, now: float) -> None:
        self._change(job, now, -1)

    def _change(self, job: ModelledJob, now: float, sign: int) -> None:
        self._advance(now)
        self.busy_cpus += sign * job.cpus
        for party in (self._user(job.owner), self._group(group_of(job.group))):
            party.advance(now)
            party.running_jobs += sign
            party.cpus_in_use += sign * job.cpus

    # ------------------------------------------------------------------ cycles
    def observe_cycle(self, now: float, accountant: Accountant) -> None:
        self._advance(now)
        t = _t(now - self.epoch)
        c = self.counts
        util = self.busy_cpus / self.total_cpus if self.total_cpus else 0.0
        self.timeseries.writerow((t, c["running"], c["idle"], c["held"], _t(self.busy_cpus), _t(self.total_cpus),
                                  _t(util)))
        records = accountant.records
        by_owner = {n.partition("@")[0].rpartition(".")[2]: r for n, r in records.items() if not r.is_group}
        for kind, parties in (("user", self.users), ("group", self.groups)):
            for name in sorted(parties):
                party = parties[name]
                party.advance(now)
                record = by_owner.get(name) if kind == "user" else records.get(name)
                prio = "" if record is None else _t(record.priority * record.priority_factor)
                self.usage.writerow((t, kind, name, party.running_jobs, _t(party.cpus_in_use), _t(party.cpu_s), prio))

    # ------------------------------------------------------------------ the end
    def finish(self, now: float) -> None:
        self._advance(now)
        for parties in (self.users, self.groups):
            for party in parties.values():
                party.advance(now)


__all__ = ["JOBS", "NO_GROUP", "TIMESERIES", "USAGE", "JobRecord", "Party", "Recorder", "group_of"]
