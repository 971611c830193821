"""A bounded kill -9 loop over every daemon of a live pool during submits, runs and restarts.

Each round submits a small cluster of short jobs (each appends ``cluster.proc run <time>`` to
one file as its last act, so a second completion would show, and when), kills one daemon
(master, schedd, startd, negotiator or collector, chosen by a seeded random generator) at a
random moment while the submit is in flight or the jobs run, sometimes kills a second one
while the pool restarts, and waits until the pool is whole again (the master restarts its
daemons; a killed master's daemons exit and the pool is started again). At the end every
acknowledged job (its submit returned its cluster id) must have completed exactly once, none
may be lost or in the history twice, and the submitter's accounting record must never have
been lost or gone backwards.

A job that ran to its end is never run again. The one allowed exception is a run that was
still going when its execute side was killed: a starter whose startd went away kills a job
still running (its run is lost, as in HTCondor when an execute point is lost), and the job
writes its line just before it exits, so a kill between the two runs it again. The loop tells
these apart by time: every run but a job's last must have had a startd or master kill close
around its line (``LOST_BEFORE`` seconds before it to ``LOST_AFTER`` after it: the kill's
effect reaches the starter late on a loaded host, and the shell leaves a moment after the
line); a kill later than that came after the job had exited, and the exit must have reached
the schedd (runtime/exit_notes.py). Those re-runs are counted in the figures; the instant of
the exit itself is attacked deterministically in tests/faults/test_exit_notes.py.

Two variants: the default job lease and a short one (``job_lease_duration = 20``). The default
suite runs a few rounds; ``HTCPOOL_FAULT_ROUNDS=N`` runs N rounds per variant and
``HTCPOOL_FAULT_SEED`` picks the seed (see docs/reliability.md for the long run).
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import UserprioQuery
from htcpool.runtime.pool import start_pool
from tests.e2e.pool import LivePool, process_state, script

DAEMONS = ("master", "schedd", "startd", "negotiator", "collector")
CHILDREN = ("collector", "negotiator", "schedd", "startd")
EXECUTE_SIDE = ("master", "startd")  # their kill ends the running jobs' runs
#: seconds around a run's line in which an execute-side kill may have ended that run (see above)
LOST_BEFORE, LOST_AFTER = 10.0, 2.0
CI_ROUNDS = 3
SUBMITTER = "tester"
#: keep-alives every 10 s (the schedd's floor), so a restarted startd's "unknown claim" is heard soon;
#: a killed daemon is restarted within 2 s
CONFIG = ("ALIVE_INTERVAL = 2\nMAX_JOBS_RUNNING = 200\n"
          "MASTER_BACKOFF_CONSTANT = 1\nMASTER_BACKOFF_FACTOR = 1.0\nMASTER_BACKOFF_CEILING = 5\n")


def _rounds() -> int:
    text = os.environ.get("HTCPOOL_FAULT_ROUNDS", "")
    return int(text) if text.strip() else CI_ROUNDS


def _seed() -> int:
    text = os.environ.get("HTCPOOL_FAULT_SEED", "")
    return int(text) if text.strip() else 19


@dataclass
class Tally:
    """What a loop did and saw."""

    seed: int
    rounds: int = 0
    kills: Counter[str] = field(default_factory=Counter)
    acknowledged: set[tuple[int, int]] = field(default_factory=set)
    refused_submits: int = 0
    usage: list[float] = field(default_factory=list)  # the submitter's accumulated usage, sampled
    usage_missing: list[int] = field(default_factory=list)  # rounds after which the record was gone
    #: when (epoch seconds) each startd or master was killed: the kills that end running jobs
    execute_kills: list[float] = field(default_factory=list)

    def summary(self) -> str:
        kills = ", ".join(f"{d} {self.kills[d]}" for d in DAEMONS)
        return (f"seed {self.seed}: {self.rounds} rounds, kills: {kills}; "
                f"{len(self.acknowledged)} acknowledged jobs, {self.refused_submits} submits refused")


@pytest.fixture
def live_pool(tmp_path: Path) -> Iterator[Callable[[str], LivePool]]:
    pools: list[LivePool] = []

    def make(extra: str) -> LivePool:
        pool = LivePool(tmp_path / f"p{len(pools)}", extra)
        pools.append(pool)
        pool.start()
        return pool

    yield make
    for pool in pools:
        try:
            pool.stop("fast")
        except Exception:  # a master killed in the last round: nothing left to stop
            _stop_leftovers(pool)


def _stop_leftovers(pool: LivePool) -> None:
    """Kill the daemons of this pool that are still alive (their pid files name them)."""
    run = pool.layout.root / "run"
    for pid_file in run.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if process_state(pid) not in (None, "Z") and _belongs_to(pid, pool):
            os.kill(pid, signal.SIGKILL)


def _belongs_to(pid: int, pool: LivePool) -> bool:
    try:
        return str(pool.layout.root) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


JOB = """sleep "$1"
cluster=$(sed -n 's/^ClusterId = //p' "$_CONDOR_JOB_AD")
proc=$(sed -n 's/^ProcId = //p' "$_CONDOR_JOB_AD")
echo "$cluster.$proc run $(date +%s.%N)" >> "$2"
"""


def _submit(pool: LivePool, runs: Path, count: int, seconds: float, lease: str) -> int:
    """A cluster of jobs that sleep ``seconds`` and then append ``cluster.proc run <time>`` to ``runs``
    (the job finds its id in its job ad file; it may run as another account: the file is
    open to all)."""
    if not runs.exists():
        runs.touch()
        runs.chmod(0o666)
    exe = pool.jobs_dir / "job.sh"  # written once: a script rewritten while it runs may misread
    if not exe.exists():
        script(pool.jobs_dir, exe.name, JOB)
    return pool.submit(f"""
executable = {exe}
arguments = {seconds} {runs}
{lease}
queue {count}
""", owner=SUBMITTER)


class Submitter(threading.Thread):
    """One submit, in flight while a daemon is killed; ``cluster`` once it was acknowledged."""

    def __init__(self, pool: LivePool, runs: Path, count: int, seconds: float, lease: str) -> None:
        super().__init__(daemon=True)
        self.pool, self.runs, self.count, self.seconds, self.lease = pool, runs, count, seconds, lease
        self.cluster: int | None = None
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.cluster = _submit(self.pool, self.runs, self.count, self.seconds, self.lease)
        except Exception as e:  # refused or cut off: not acknowledged, so not counted
            self.error = e


def _kill(pool: LivePool, daemon: str, tally: Tally) -> None:
    """kill -9 ``daemon`` and wait until the pool is whole again."""
    if daemon in EXECUTE_SIDE:
        tally.execute_kills.append(time.time())
    if daemon == "master":
        _kill_master(pool)
    else:
        try:
            old = pool.kill(daemon, signal.SIGKILL)
        except Exception:  # the master is between restarts of it: wait for it instead
            _wait_whole(pool)
            return
        pool.wait_restarted(daemon, old, timeout=60)
    tally.kills[daemon] += 1


def _kill_master(pool: LivePool) -> None:
    pid = int(pool.layout.master_pid.read_text().split()[0])
    children = [pool.pid_of(d) for d in CHILDREN]
    os.kill(pid, signal.SIGKILL)
    pool.wait_for(lambda: all(process_state(p) in (None, "Z") for p in [pid, *children]), 30,
                  "the killed master's daemons to exit",
                  show=lambda: {p: process_state(p) for p in [pid, *children]})
    start_pool(pool.layout, timeout=60)


def _wait_whole(pool: LivePool) -> None:
    pool.wait_for(lambda: all(pool.pid_of(d) and pool.layout.read_address(d) for d in CHILDREN), 60,
                  "every daemon running")


def _sample_usage(pool: LivePool, tally: Tally) -> None:
    """The submitter's accounting record, once the negotiator answers (after any restart)."""

    def record() -> list[float]:
        rows = pool.c.send("negotiator", UserprioQuery()).rows
        return [float(r.get("AccumulatedUsage") or 0.0) for r in rows
                if str(r.get("Name", "")).split("@")[0] == SUBMITTER] or [-1.0]

    [usage] = pool.wait_for(record, 60, "the negotiator's accounting records")
    if usage < 0:
        if tally.usage and tally.usage[-1] > 0:
            tally.usage_missing.append(tally.rounds)
        return
    tally.usage.append(usage)


def kill_loop(pool: LivePool, runs: Path, lease: str, rounds: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally(seed)
    for _ in range(rounds):
        submitter = Submitter(pool, runs, rng.randint(1, 3), rng.choice((0.0, 0.5, 1.5)), lease)
        submitter.start()
        time.sleep(rng.uniform(0.0, 2.0))  # during the submit, or while its jobs run
        _kill(pool, rng.choice(DAEMONS), tally)
        if rng.random() < 0.3:  # again, while the pool settles after a restart
            time.sleep(rng.uniform(0.0, 0.5))
            _kill(pool, rng.choice(DAEMONS), tally)
        _wait_whole(pool)
        submitter.join(90)
        assert not submitter.is_alive(), "a submit did not return within 90 s"
        if submitter.cluster is not None:
            tally.acknowledged.update((submitter.cluster, p) for p in range(submitter.count))
        else:
            tally.refused_submits += 1
        tally.rounds += 1
        _sample_usage(pool, tally)
    return tally


def check_outcome(pool: LivePool, runs: Path, tally: Tally, timeout: float) -> dict[str, int]:
    """Wait for every acknowledged job to leave the queue; then nothing lost, nothing twice."""

    def history() -> list[tuple[int, int]]:
        return [(int(ad["ClusterId"]), int(ad["ProcId"])) for ad in pool.history(f"Owner == \"{SUBMITTER}\"")]

    def all_done() -> bool:
        return tally.acknowledged <= set(history())

    pool.wait_for(all_done, timeout, f"every acknowledged job in the history ({tally.summary()})",
                  show=lambda: sorted(tally.acknowledged - set(history()))[:20])
    done = Counter(history())
    twice = {job: n for job, n in done.items() if n > 1}
    ends = _run_ends(runs)
    lines = Counter({job: len(times) for job, times in ends.items()})
    ads = {(int(ad["ClusterId"]), int(ad["ProcId"])): ad for ad in pool.history(f"Owner == \"{SUBMITTER}\"")}
    not_completed = {job: _outline(ad) for job, ad in ads.items()
                     if job in tally.acknowledged and ad.get("JobStatus") != 4}
    never_ran = {job: _outline(ads[job]) for job in sorted(tally.acknowledged) if lines[job] == 0}
    twice_run = {job: n for job, n in lines.items() if n > 1}
    lost_runs = {job for job in twice_run if _killed_while_running(ends[job], tally)}
    ran_twice = {job: (n, _outline(ads[job]) if job in ads else "", _kills_near(ends[job], tally))
                 for job, n in twice_run.items() if job not in lost_runs}
    assert not twice, f"jobs in the history more than once: {twice} ({tally.summary()})"
    assert not not_completed, f"acknowledged jobs that did not complete: {not_completed} ({tally.summary()})"
    assert not never_ran, f"completed jobs whose run left no line: {never_ran} ({tally.summary()})"
    assert not ran_twice, (f"jobs run again after a run that had ended (no startd or master killed "
                           f"while it still ran): {ran_twice} ({tally.summary()})")
    assert not tally.usage_missing, f"the accounting record was lost after rounds {tally.usage_missing}"
    assert tally.usage == sorted(tally.usage), f"accumulated usage went backwards: {tally.usage}"
    return {"jobs": len(tally.acknowledged), "runs": sum(lines.values()), "lost": 0, "duplicated": 0,
            "rerun after an execute-side kill": len(lost_runs)}


def _run_ends(runs: Path) -> dict[tuple[int, int], list[float]]:
    """When each job's runs wrote their lines, in order."""
    out: dict[tuple[int, int], list[float]] = {}
    for line in runs.read_text().splitlines() if runs.exists() else []:
        if line.strip():
            job, _, when = line.split()
            cluster, proc = job.split(".")
            out.setdefault((int(cluster), int(proc)), []).append(float(when))
    return {job: sorted(times) for job, times in out.items()}


def _killed_while_running(ends: list[float], tally: Tally) -> bool:
    """Whether every run but the last may have been still going when a startd or master was
    killed (a kill close around its line): such a run is lost and the job runs again, as in
    HTCondor when an execute point is lost. A kill well after a run's line came after its
    exit, which must have reached the schedd."""
    return all(any(t - LOST_BEFORE <= k <= t + LOST_AFTER for k in tally.execute_kills) for t in ends[:-1])


def _kills_near(ends: list[float], tally: Tally) -> list[float]:
    """The execute-side kills from just before the first run's line to the last's, relative to
    the first line (for a failure's message)."""
    return [round(k - ends[0], 2) for k in tally.execute_kills if ends[0] - LOST_BEFORE <= k <= ends[-1]]


def _outline(ad: ClassAd) -> str:
    """What a history ad says of how the job ended."""
    return ", ".join(f"{a} {ad.get(a)!r}" for a in ("JobStatus", "ExitCode", "ExitSignal", "ExitBySignal",
                                                      "NumJobStarts", "RemoteHost", "RemoveReason")
                     if ad.get(a) is not None)


@pytest.mark.long
@pytest.mark.parametrize("lease", ["", "job_lease_duration = 20"], ids=["default-lease", "short-lease"])
def test_kill_loop_loses_and_duplicates_nothing(live_pool: Callable[[str], LivePool], lease: str) -> None:
    pool = live_pool(CONFIG)
    runs = pool.jobs_dir / "runs.txt"
    rounds, seed = _rounds(), _seed()
    started = time.monotonic()
    tally = kill_loop(pool, runs, lease, rounds, seed + (1 if lease else 0))
    figures = check_outcome(pool, runs, tally, timeout=120 + 2 * len(tally.acknowledged))
    print(f"\n{lease or 'default lease'}: {tally.summary()}; {figures}; "
          f"{time.monotonic() - started:.0f} s")
