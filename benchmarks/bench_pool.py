"""A live personal pool: submit-to-start latency, CLI submit throughput, makespan of short jobs.

``main()`` starts real personal pools (``htcpool.runtime.pool.start_pool``) in
temporary directories, one per measurement, each with ``PERSONAL_CONFIG`` and a
few settings appended, and drives them the way a user does: ``htcpool submit``
as a subprocess, with ``HTCPOOL_LOCAL_DIR`` naming the pool. It measures

1. submit to start: the default personal configuration, an idle pool, one job
   (``/bin/true``) submitted at a time; the time from launching the
   ``htcpool submit`` command until the job's user log holds the execute event
   (``001``), REPEATS times (each job finishes and the pool is left idle for
   IDLE_GAP seconds before the next), median and max. The log is read once the
   command has returned, so the figure is never below the command's own time
   (printed too, with the rest: from its return to the execute event, zero when
   the job had started before the command ended); the command's time is mostly
   Python starting and importing;
2. submit throughput: one ``queue 10000`` cluster through ``htcpool submit``
   with ``START = False`` (nothing runs), the wall time of the command;
3. makespan: 200 jobs of ``/bin/sleep 1`` (``request_cpus = 1``,
   ``request_memory = 64``) on one partitionable slot advertised as 16 cpus
   and 16,000 MB (``NUM_CPUS = 16``, ``MEMORY = 16000``), from launching the
   command until all 200 have left the queue for the history.

Each figure is printed beside HTCondor 25's, with the ratio (below 1:
htcpool faster). Run: ``.venv/bin/python -m benchmarks pool`` (or
``.venv/bin/python -m benchmarks.bench_pool [--quick]``; ``--quick`` runs
fewer and smaller rounds and compares only the first figure).
``--makespan N`` measures only the makespan, N times, one line each (for comparing two source
trees in turns on a loaded machine: ``PYTHONPATH=<other tree>/src`` runs the other one);
``--config 'KNOB = VALUE'`` (repeatable) adds configuration, e.g. ``'BASE_CGROUP ='`` to run the
jobs without cgroups. Each makespan line also gives the slots' timeline from the StartdLog
(``claim_timeline``): when the first job began after the launch of ``htcpool submit``, how long a
job kept its slot Busy (median) and how long a claim sat Idle between two of its jobs (median and
90th percentile), the steadier figures on a loaded machine.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from htcpool.protocol import HistoryQuery, QueueQuery
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PERSONAL_CONFIG, PoolClient, start_pool, stop_pool

REPEATS = 5
IDLE_GAP = 2.0
CLUSTER = 10_000
JOBS = 200
CORES = 16
# HTCondor 25's figures for the same measurements (personal pool, default intervals), and the goals.
HTCONDOR_START_S = (17.0, 59.0)
HTCONDOR_SUBMIT_S = 2.6  # for CLUSTER jobs
HTCONDOR_MAKESPAN_S = 70.0  # for JOBS jobs
GOAL_START_S = 1.0
GOAL_MAKESPAN_S = 20.0

EXECUTE_EVENT = "001 ("
TERMINATE_EVENT = "005 ("


@dataclass
class Pool:
    layout: PoolLayout
    jobs_dir: Path

    def submit(self, description: str, name: str = "job.sub") -> tuple[float, str]:
        """Run ``htcpool submit`` on a description; (wall seconds, its output)."""
        path = self.jobs_dir / name
        path.write_text(description)
        env = dict(os.environ, HTCPOOL_LOCAL_DIR=str(self.layout.root))
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "htcpool", "submit", str(path)], cwd=self.jobs_dir,
                              env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"htcpool submit failed ({done.returncode}): {done.stderr.strip()}; "
                               f"logs in {self.layout.log}")
        return wall, done.stdout

    def client(self) -> PoolClient:
        return PoolClient(self.layout)


@contextlib.contextmanager
def personal_pool(extra_config: str = "") -> Iterator[Pool]:
    """A personal pool in a temporary directory with ``extra_config`` after the personal configuration."""
    tmp = Path(tempfile.mkdtemp(prefix="htcpool-bench-"))
    layout = PoolLayout(tmp / "pool")
    jobs_dir = tmp / "jobs"
    jobs_dir.mkdir()
    layout.make()
    layout.config.write_text(PERSONAL_CONFIG.format(local_dir=layout.root) + extra_config)
    start_pool(layout, timeout=60)
    try:
        yield Pool(layout, jobs_dir)
    finally:
        stop_pool(layout, "fast", timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


class _LogCounter:
    """Whether the user log at ``path`` holds at least ``count`` events of a kind (``"001 ("``),
    counted as it grows, reading only what was appended since the last call (a poll every few
    milliseconds costs the pool no CPU to speak of)."""

    def __init__(self, path: Path, event: str, count: int) -> None:
        self.path, self.event, self.count = path, event.encode(), count
        self.offset = 0
        self.seen = 0
        self.tail = b""  # the start of a line the last read cut off

    def __call__(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        self.offset += len(data)
        lines = (self.tail + data).split(b"\n")
        self.tail = lines.pop()  # unfinished: counted once its end is read
        self.seen += sum(1 for line in lines if line.startswith(self.event))
        return self.seen >= self.count


def _wait(test: Callable[[], object], timeout: float, what: str, poll: float = 0.005) -> float:
    """Poll ``test()`` until it is true; the time it became true (perf_counter)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if test():
            return time.perf_counter()
        time.sleep(poll)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _queue_empty(client: PoolClient, cluster: int) -> bool:
    return not client.send("schedd", QueueQuery(f"ClusterId == {cluster}", ("ProcId",))).ads


def _cluster_of(output: str) -> int:
    """The cluster number from condor_submit's ``N job(s) submitted to cluster C.``"""
    for line in output.splitlines():
        if "submitted to cluster" in line:
            return int(line.rstrip(".").rsplit(" ", 1)[1])
    raise RuntimeError(f"no cluster in the output of htcpool submit: {output!r}")


def submit_to_start(repeats: int = REPEATS) -> dict[str, float]:
    """Submit one job at a time to an idle default personal pool; seconds until its execute event."""
    latencies: list[float] = []
    commands: list[float] = []
    with personal_pool() as pool:
        client = pool.client()
        try:
            for i in range(repeats):
                time.sleep(IDLE_GAP)
                log = pool.jobs_dir / f"start{i}.log"
                started = time.perf_counter()
                command, output = pool.submit(f"executable = /bin/true\nlog = {log}\nqueue\n", f"start{i}.sub")
                running = _wait(_LogCounter(log, EXECUTE_EVENT, 1), 120, "the execute event")
                latencies.append(running - started)
                commands.append(command)
                cluster = _cluster_of(output)
                _wait(functools.partial(_queue_empty, client, cluster), 120, "the job to finish", poll=0.05)
        finally:
            client.close()
    return {"submit_to_start_median_s": statistics.median(latencies), "submit_to_start_max_s": max(latencies),
            "submit_command_median_s": statistics.median(commands),
            "start_after_command_median_s": statistics.median(
                [t - c for t, c in zip(latencies, commands, strict=True)])}


def submit_throughput(jobs: int = CLUSTER) -> dict[str, float]:
    """Wall time of ``htcpool submit`` for one cluster of ``jobs`` jobs, with nothing starting."""
    with personal_pool("START = False\n") as pool:
        wall, output = pool.submit(f"executable = /bin/sleep\narguments = 60\nqueue {jobs}\n", "many.sub")
        cluster = _cluster_of(output)
        client = pool.client()
        try:
            queued = len(client.send("schedd", QueueQuery(f"ClusterId == {cluster}", ("ProcId",))).ads)
        finally:
            client.close()
    if queued != jobs:
        raise RuntimeError(f"{queued} of {jobs} jobs in the queue after the submit")
    return {"submit_wall_s": wall, "submit_jobs_per_s": jobs / wall}


def makespan(jobs: int = JOBS, cores: int = CORES, extra: str = "") -> dict[str, float]:
    """Seconds from ``htcpool submit`` of ``jobs`` one-second jobs until all are in the history;
    ``extra`` is configuration appended to the pool's (``--config``)."""
    with personal_pool(f"NUM_CPUS = {cores}\nMEMORY = {cores * 1000}\n{extra}") as pool:
        log = pool.jobs_dir / "makespan.log"
        description = (f"executable = /bin/sleep\narguments = 1\nrequest_cpus = 1\nrequest_memory = 64\n"
                       f"log = {log}\nqueue {jobs}\n")
        launched, started = time.time(), time.perf_counter()
        _, output = pool.submit(description, "makespan.sub")
        cluster = _cluster_of(output)
        client = pool.client()
        try:
            # the schedd writes a job's terminate event once the job has left the queue: the last
            # event, seen within the poll's 5 ms, is the end, and the queue is only confirmed empty
            logged = _wait(_LogCounter(log, TERMINATE_EVENT, jobs), 600, f"{jobs} terminate events")
            done = logged if _queue_empty(client, cluster) else \
                _wait(functools.partial(_queue_empty, client, cluster), 60, "the queue to empty", poll=0.02)
            history = client.send("schedd", HistoryQuery(f"ClusterId == {cluster}")).ads
        finally:
            client.close()
        timeline = claim_timeline(pool.layout.log / "StartdLog", launched)
    completed = sum(1 for ad in history if ad.get("JobStatus") == 4)
    if completed != jobs:
        raise RuntimeError(f"{completed} of {jobs} jobs completed")
    elapsed = done - started
    return {"makespan_s": elapsed, "ideal_s": -(-jobs // cores) * 1.0,
            "overhead_per_job_s": (elapsed - jobs / cores) * cores / jobs, **timeline}


ACTIVITY = re.compile(r"^(\S+ \S+) \S+ INFO (\S+): Changing activity: (\w+) -> (\w+)")


def claim_timeline(startd_log: Path, launched: float) -> dict[str, float]:
    """The slots' Idle/Busy changes in a StartdLog: the first job's start after ``launched`` (epoch
    seconds), each job's Busy time and each claim's Idle time between two of its jobs (medians,
    and the idle time's 90th percentile), and the most jobs one slot ran."""
    busy: dict[str, list[float]] = {}
    idle: dict[str, list[float]] = {}
    for line in startd_log.read_text(errors="replace").splitlines():
        found = ACTIVITY.match(line)
        if found is None:
            continue
        stamp = datetime.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        (busy if found.group(4) == "Busy" else idle).setdefault(found.group(2), []).append(stamp)
    runs = [end - begin for slot, starts in busy.items()
            for begin, end in zip(starts, idle.get(slot, []), strict=False)]
    gaps = [begin - end for slot, starts in busy.items()
            for end, begin in zip(idle.get(slot, []), starts[1:], strict=False)]
    if not runs:
        return {}
    gaps = sorted(gaps) or [0.0]
    return {"first_start_s": min(starts[0] for starts in busy.values()) - launched,
            "busy_median_s": statistics.median(runs), "idle_median_s": statistics.median(gaps),
            "idle_p90_s": gaps[int(0.9 * (len(gaps) - 1))], "most_jobs_on_a_slot": max(map(len, busy.values()))}


def _row(what: str, value: float, reference: str = "", ratio: float | None = None, goal: float | None = None,
         unit: str = "s") -> None:
    ratio_text = f"ratio {ratio:.3f}" if ratio is not None else ""
    goal_text = "" if goal is None else f"  goal < {goal:g} {unit}: {'met' if value < goal else 'NOT met'}"
    print(f"  {what:<42} {value:8.3f} {unit}  {reference:<18} {ratio_text}{goal_text}", flush=True)


def main(quick: bool = False) -> dict[str, float]:
    figures: dict[str, float] = {}
    lo, hi = HTCONDOR_START_S
    print(f"  (machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})", flush=True)
    figures.update(submit_to_start(3 if quick else REPEATS))
    median, worst = figures["submit_to_start_median_s"], figures["submit_to_start_max_s"]
    _row("submit to start, median", median, f"HTCondor {lo:g}-{hi:g} s", median / lo, GOAL_START_S)
    _row("submit to start, max", worst, f"HTCondor {lo:g}-{hi:g} s", worst / lo, GOAL_START_S)
    _row("  the htcpool submit command alone (median)", figures["submit_command_median_s"])
    _row("  from its return to the start (median)", figures["start_after_command_median_s"])
    n = CLUSTER // 10 if quick else CLUSTER  # HTCondor's figures are for the full sizes only
    figures.update(submit_throughput(n))
    wall = figures["submit_wall_s"]
    if quick:
        _row(f"htcpool submit of one {n:,}-job cluster", wall)
    else:
        _row(f"htcpool submit of one {n:,}-job cluster", wall, f"HTCondor {HTCONDOR_SUBMIT_S:g} s",
             wall / HTCONDOR_SUBMIT_S)
    print(f"  {'':<42} {figures['submit_jobs_per_s']:8,.0f} jobs/s", flush=True)
    jobs = JOBS // 4 if quick else JOBS
    figures.update(makespan(jobs))
    span = figures["makespan_s"]
    if quick:
        _row(f"makespan of {jobs} 1-s jobs on {CORES} cores", span)
    else:
        _row(f"makespan of {jobs} 1-s jobs on {CORES} cores", span, f"HTCondor {HTCONDOR_MAKESPAN_S:g} s",
             span / HTCONDOR_MAKESPAN_S, GOAL_MAKESPAN_S)
    _row("  ideal (job length only)", figures["ideal_s"])
    _row("  overhead per job (slot-seconds)", figures["overhead_per_job_s"])
    print(f"  (load average at the end {os.getloadavg()[0]:.1f})", flush=True)
    return figures


def makespans(rounds: int, extra: str = "") -> list[float]:
    """``rounds`` makespans of JOBS jobs, one line each with the machine's load."""
    out = []
    for _ in range(rounds):
        figures = makespan(JOBS, CORES, extra)
        span = figures["makespan_s"]
        out.append(span)
        print(f"  makespan of {JOBS} 1-s jobs on {CORES} cores {span:7.2f} s  (load {os.getloadavg()[0]:.1f}); "
              f"first start {figures.get('first_start_s', 0):.3f} s, busy {figures.get('busy_median_s', 0):.3f} s, "
              f"idle between jobs {figures.get('idle_median_s', 0):.3f} s (p90 {figures.get('idle_p90_s', 0):.3f}), "
              f"at most {figures.get('most_jobs_on_a_slot', 0):g} jobs a slot", flush=True)
    return out


if __name__ == "__main__":
    if "--makespan" in sys.argv[1:]:
        lines = [sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == "--config"]
        makespans(int(sys.argv[sys.argv.index("--makespan") + 1]), "".join(f"{line}\n" for line in lines))
    else:
        main("--quick" in sys.argv[1:])
