"""The simulated workload: jobs and when they arrive, read from an SWF trace, a
``condor_history -long`` file or a submit file.

Every reader yields ``Arrival``: a time (seconds from the start of the simulation), the owner
and the job ads of one cluster, each ad with ``SimRuntime``, the seconds the modelled job runs.
Job ads are made by the submit language (``htcpool.submit``) from a small description per job
shape (owner, accounting group, cpus, memory), so they carry the same ``Requirements`` and
defaults ``htcpool submit`` would give them; a shape's ads are built once and copied.

* **SWF** (Standard Workload Format, docs/simulator.md): one job a line, 18 numeric fields,
  ``;`` header comments (``; UnixStartTime: N`` sets the simulation's epoch). Submit time (2)
  is the arrival, run time (4) ``SimRuntime``, requested processors (8, else allocated, 5)
  ``RequestCpus``, requested memory (10, KB per processor, else used memory, 7)
  ``RequestMemory`` in MiB for all processors; user id (12) becomes ``Owner`` ``u<id>`` and
  group id (13) ``AccountingGroup`` ``group_g<id>.u<id>`` (no group for -1). The other fields
  travel as ``Swf…`` attributes (``SwfJobNumber``, ``SwfWaitTime``, ``SwfRequestedTime`` …);
  wait time is the original system's outcome and is not replayed. A preceding job (17) and think
  time (18) are replayed: the job is submitted only after that job has left the queue plus the
  think time (``sim.dependencies``). Status (11) 2–4 marks a
  partial execution of a checkpointed job: those lines are not replayed (the job's own line
  is); a job whose run time is unknown (-1) is not replayed either. The file is read line by
  line, never whole; lines must come in submit-time order (a late line arrives at once).
* **condor_history -long**: ads in the old form separated by blank lines. ``QDate`` is the
  arrival, ``RemoteWallClockTime`` (else ``CompletionDate - JobCurrentStartDate``) the
  runtime; ``Owner``, ``AccountingGroup``, ``RequestCpus``, ``RequestMemory`` shape the job, and
  ``Requirements``, ``Rank``, ``JobPrio``, ``ConcurrencyLimits``, ``RequestGPUs`` are kept.
  condor_history prints the job that left the queue last first: the file is read backwards and
  its jobs handed out in ``QDate`` order holding only those whose stays in the queue overlap
  (``history``); a file where some job has no ``CompletionDate`` or ``EnteredCurrentStatus``,
  or that is not newest first, is sorted in memory instead (compact records, not ads). The
  earliest ``QDate`` is the start.
* **submit file**: the whole description is one cluster submitted at time 0; each job's
  runtime is its ``SimRuntime`` attribute (``+SimRuntime = …``, which may use ``$(Process)``
  or ``$RANDOM_INTEGER(…)``), else ``DEFAULT_RUNTIME`` seconds.

A malformed line or ad raises ``SimInputError`` (file, line, reason) unless ``skip_bad``,
which skips it and counts it in ``Workload.skipped``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from htcpool.classad import ClassAd, ClassAdError, as_number, parseOne
from htcpool.sim.errors import SimInputError
from htcpool.sim.history import in_submit_order, reverse_blocks, scan
from htcpool.submit import (
    MemoryFileSystem,
    SubmitError,
    SubmitFileError,
    SubmitHost,
    submit_description,
)

#: seconds a job of a submit file runs when it has no SimRuntime
DEFAULT_RUNTIME = 600.0
#: the epoch of a trace that does not give one (2026-01-01 00:00 UTC)
DEFAULT_EPOCH = 1_767_225_600
#: the modelled jobs' executable (it never runs)
EXECUTABLE = "/usr/bin/sim_job"
SWF_FIELDS = ("SwfJobNumber", "SwfSubmitTime", "SwfWaitTime", "SwfRunTime", "SwfAllocatedProcessors",
              "SwfAverageCpuTime", "SwfUsedMemory", "SwfRequestedProcessors", "SwfRequestedTime",
              "SwfRequestedMemory", "SwfStatus", "SwfUserId", "SwfGroupId", "SwfExecutable", "SwfQueue",
              "SwfPartition", "SwfPrecedingJob", "SwfThinkTime")
KEPT_HISTORY_ATTRS = ("Requirements", "Rank", "JobPrio", "ConcurrencyLimits", "RequestGPUs")


@dataclass(frozen=True)
class Arrival:
    """One cluster of jobs submitted at ``time`` (seconds from the start) by ``owner``."""

    time: float
    owner: str
    ads: tuple[ClassAd, ...]
    #: SWF: the job's number, the number of the job it follows (-1: none) and the think time
    #: after that job's end (``sim.dependencies``)
    number: int = -1
    after: int = -1
    think: float = 0.0


class Workload:
    """A workload file opened for streaming; iterate for its arrivals."""

    def __init__(self, path: Path, skip_bad: bool = False, seed: int = 0) -> None:
        self.path = path
        self.skip_bad = skip_bad
        self.seed = seed
        self.skipped = 0
        self.epoch = float(DEFAULT_EPOCH)
        self.jobs_read = 0
        self._shapes: dict[tuple[str, str, int, int], ClassAd] = {}
        self._records: list[tuple[Any, ...]] = []
        self.kind = _kind(path)
        if self.kind == "swf":
            self._swf_epoch()
        elif self.kind == "history":
            self._scan = scan(path)
            if self._scan.streamable:
                if self._scan.first_qdate is not None:
                    self.epoch = self._scan.first_qdate
            else:
                self._read_history()

    def __iter__(self) -> Iterator[Arrival]:
        if self.kind == "swf":
            return self._swf()
        if self.kind == "history":
            return self._history()
        return self._submit_file()

    # ------------------------------------------------------------------ helpers
    def bad(self, line: int | None, reason: str) -> None:
        """A malformed line: skipped and counted, or an error."""
        if not self.skip_bad:
            raise SimInputError(self.path, line, reason)
        self.skipped += 1

    def job_ad(self, owner: str, group: str, cpus: int, memory: int, runtime: float) -> ClassAd:
        """A job ad of this shape running ``runtime`` seconds (built once per shape, then copied)."""
        key = (owner, group, cpus, memory)
        template = self._shapes.get(key)
        if template is None:
            lines = [f"executable = {EXECUTABLE}", f"request_cpus = {cpus}", f"request_memory = {memory}"]
            if group:
                lines += [f"accounting_group = {group}", f"accounting_group_user = {owner}"]
            result = submit_description("\n".join(lines) + "\nqueue\n", file=str(self.path),
                                        host=_host(owner, self.seed), fs=MemoryFileSystem(files={EXECUTABLE: ""}))
            template = self._shapes[key] = result.jobs[0]
        ad = template.copy()
        ad["SimRuntime"] = runtime
        self.jobs_read += 1
        return ad

    # ------------------------------------------------------------------ SWF
    def _swf_epoch(self) -> None:
        """Read the header comments before the first job line (``UnixStartTime``)."""
        with _open(self.path) as f:
            for raw in f:
                line = raw.strip()
                if line and not line.startswith(";"):
                    return
                if line:
                    self._swf_header(line)

    def _swf(self) -> Iterator[Arrival]:
        with _open(self.path) as f:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if line and not line.startswith(";"):
                    arrival = self._swf_line(number, line)
                    if arrival is not None:
                        yield arrival

    def _swf_header(self, line: str) -> None:
        name, _, value = line[1:].partition(":")
        if name.strip().lower() == "unixstarttime":
            number = as_number(_number(value.strip()))
            if number is not None:
                self.epoch = float(number)

    def _swf_line(self, number: int, line: str) -> Arrival | None:
        words = line.split()
        if len(words) != 18:
            self.bad(number, f"an SWF line has 18 fields, this one {len(words)}")
            return None
        values = [_number(w) for w in words]
        bad = next((w for w, v in zip(words, values, strict=True) if v is None), None)
        if bad is not None:
            self.bad(number, f"SWF field {words.index(bad) + 1} is not a number: {bad!r}")
            return None
        v = [float(x) for x in values if x is not None]
        submit, run, allocated, used_mem, requested, req_mem, status = v[1], v[3], v[4], v[6], v[7], v[9], v[10]
        if submit < 0:
            self.bad(number, "SWF submit time (field 2) is negative")
            return None
        if status in (2, 3, 4) or run < 0:
            return None  # a partial execution, or a job that never ran
        cpus = int(requested if requested > 0 else allocated if allocated > 0 else 1)
        per_cpu_kb = req_mem if req_mem > 0 else used_mem if used_mem > 0 else 0
        memory = max(1, math.ceil(per_cpu_kb * cpus / 1024)) if per_cpu_kb > 0 else 128
        user = f"u{int(v[11])}" if v[11] >= 0 else "u0"
        group = f"group_g{int(v[12])}" if v[12] >= 0 else ""
        ad = self.job_ad(user, group, cpus, memory, run)
        for name, value in zip(SWF_FIELDS, v, strict=True):
            ad[name] = int(value) if value == int(value) else value
        return Arrival(submit, user, (ad,), int(v[0]), int(v[16]) if v[16] >= 0 else -1, max(0.0, v[17]))

    # ------------------------------------------------------------------ condor_history
    def _read_history(self) -> None:
        records: list[tuple[Any, ...]] = []
        with _open(self.path) as f:
            for start, block in ad_blocks(f):
                record = self._history_record(start, block)
                if record is not None:
                    records.append((record[0], start, *record[1:]))
        records.sort(key=lambda r: (r[0], r[1]))
        if records:
            self.epoch = records[0][0]
        self._records = records

    def _history(self) -> Iterator[Arrival]:
        if self._scan.streamable:
            records: Iterable[tuple[Any, ...]] = in_submit_order(self._from_the_end(), self._scan.span)
        else:
            records, self._records = self._records, []
        for qdate, _, owner, group, cpus, memory, runtime, kept, _ in records:
            ad = self.job_ad(owner, group, cpus, memory, runtime)
            for name, value in kept:
                ad[name] = value
            yield Arrival(qdate - self.epoch, owner, (ad,))

    def _from_the_end(self) -> Iterator[tuple[float, float, int, tuple[Any, ...]]]:
        """The file's records, last (the first to leave the queue) first: (leave, qdate, line, record)."""
        try:
            for start, block in reverse_blocks(self.path, self._scan.lines):
                record = self._history_record(start, block)
                if record is not None:
                    yield record[-1], record[0], start, (record[0], start, *record[1:])
        except OSError as e:
            raise SimInputError(self.path, None, f"cannot read the workload: {e.strerror}") from None

    def _history_record(self, start: int, block: list[str]) -> tuple[Any, ...] | None:
        try:
            ad = parseOne("[" + ";".join(block) + "]")
        except (ClassAdError, ValueError) as e:
            self.bad(start, f"not a job ad: {e}")
            return None
        qdate = as_number(ad.get("QDate"))
        owner = ad.get("Owner")
        if qdate is None or not isinstance(owner, str):
            self.bad(start, "a job ad without QDate or Owner")
            return None
        runtime = as_number(ad.get("RemoteWallClockTime"))
        if runtime is None:
            end, begin = as_number(ad.get("CompletionDate")), as_number(ad.get("JobCurrentStartDate"))
            if end is None or begin is None:
                self.bad(start, "a job ad without RemoteWallClockTime or CompletionDate and JobCurrentStartDate")
                return None
            runtime = end - begin
        group = ad.get("AccountingGroup")
        group_name = group.rpartition(".")[0] if isinstance(group, str) and "." in group else ""
        cpus = as_number(ad.get("RequestCpus"))
        memory = as_number(ad.get("RequestMemory"))
        kept = tuple((n, ad.get(n)) for n in KEPT_HISTORY_ATTRS if n in ad)
        leave = as_number(ad.get("CompletionDate")) or as_number(ad.get("EnteredCurrentStatus"))
        return (float(qdate), owner, group_name, int(cpus) if cpus else 1,
                int(memory) if memory else 128, max(0.0, float(runtime)), kept, float(leave or 0.0))

    # ------------------------------------------------------------------ submit file
    def _submit_file(self) -> Iterator[Arrival]:
        try:
            text = self.path.read_text()
        except OSError as e:
            raise SimInputError(self.path, None, f"cannot read the submit file: {e.strerror}") from None
        owner = "submitter"
        try:
            result = submit_description(text, file=str(self.path), host=_host(owner, self.seed),
                                        fs=_AnyFile())
        except SubmitFileError as e:
            raise SimInputError(self.path, e.line or None, e.message) from None
        except SubmitError as e:
            raise SimInputError(self.path, None, str(e)) from None
        ads = []
        for ad in result.jobs:
            runtime = as_number(ad.evaluate("SimRuntime")) if "SimRuntime" in ad else None
            ad["SimRuntime"] = float(runtime) if runtime is not None and runtime >= 0 else DEFAULT_RUNTIME
            ads.append(ad)
            self.jobs_read += 1
        yield Arrival(0.0, owner, tuple(ads))


class _AnyFile(MemoryFileSystem):
    """Every path exists (a submit file's executable and inputs are never read by the simulator)."""

    def size(self, path: str) -> int | None:
        return 0

    def read_text(self, path: str) -> str | None:
        return ""


def _host(owner: str, seed: int) -> SubmitHost:
    return SubmitHost(user=owner, cwd=f"/home/{owner}", seed=seed)


def _kind(path: Path) -> str:
    """swf, history or submit, from the file's first lines: an SWF trace starts with ``;`` or a
    number; a history file has a ``QDate`` or ``ClusterId`` line and no queue statement."""
    names: list[str] = []
    try:
        with _open(path) as f:
            for raw in f:
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                if not names and (line.startswith(";") or line.split()[0].lstrip("-").isdigit()):
                    return "swf"
                names.append(line.split("=", 1)[0].strip().lower())
                if len(names) >= 200:
                    break
    except OSError as e:
        raise SimInputError(path, None, f"cannot read the workload: {e.strerror}") from None
    if not names:
        raise SimInputError(path, None, "the workload file is empty")
    if any(n.startswith("queue") for n in names):
        return "submit"
    return "history" if {"qdate", "clusterid"} & set(names) else "submit"


def _open(path: Path) -> IO[str]:
    try:
        return path.open()
    except OSError as e:
        raise SimInputError(path, None, f"cannot read the workload: {e.strerror}") from None


def _number(word: str) -> float | None:
    try:
        return float(word)
    except ValueError:
        return None


def ad_blocks(lines: IO[str]) -> Iterator[tuple[int, list[str]]]:
    """The ads of a file in the long form: (first line number, lines) per blank-line separated block."""
    block: list[str] = []
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("***"):  # condor_history separates ads by blank lines
            if block:
                yield start, block
            block = []
            continue
        if not block:
            start = number
        block.append(line)
    if block:
        yield start, block


__all__ = ["DEFAULT_RUNTIME", "Arrival", "Workload"]
