"""SWF dependencies (fields 17 and 18): a job is submitted after the job it follows has left the
queue, plus its think time (``sim/dependencies.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.sim import dependencies
from htcpool.sim.dependencies import Dependencies
from htcpool.sim.workload import Arrival
from tests.sim.pool_files import rows, run, swf_line

CONFIG = "NEGOTIATOR_INTERVAL = 20\n"
POOL = "1 NUM_CPUS=4 MEMORY=8192\n"


def follows(line: str, before: int, think: float) -> str:
    words = line.split()
    return " ".join(words[:16] + [str(before), str(think)])


def _qdates(out: Path) -> dict[str, float]:
    return {r["job_id"]: float(r["qdate_s"]) for r in rows(out / "jobs.csv")}


def test_a_job_waits_for_the_job_it_follows_and_its_think_time(tmp_path: Path) -> None:
    """Job 2 (trace time 10) follows job 1 (100 s) with 50 s to think: submitted at 150 however
    free the pool is; job 3 follows job 2 with no think time; job 4 follows a job the trace
    does not have and comes at its own time."""
    trace = [swf_line(1, 0, 100, user=1), follows(swf_line(2, 10, 30, user=1), 1, 50),
             follows(swf_line(3, 20, 10, user=1), 2, 0), follows(swf_line(4, 40, 10, user=2), 99, 5)]
    summary = run(tmp_path, CONFIG, POOL, trace)
    assert summary["jobs_completed"] == 4, summary
    jobs = sorted(rows(tmp_path / "out" / "jobs.csv"), key=lambda r: float(r["qdate_s"]))
    assert [float(j["qdate_s"]) for j in jobs] == [0.0, 40.0, 150.0, 150.0 + float(jobs[2]["wait_s"]) + 30]


def test_a_job_whose_predecessor_ended_long_ago_comes_at_its_trace_time(tmp_path: Path) -> None:
    """Job 1 ends at 30; job 2 follows it with 20 s to think but is in the trace at 500."""
    trace = [swf_line(1, 0, 30, user=1), follows(swf_line(2, 500, 10, user=1), 1, 20)]
    summary = run(tmp_path, CONFIG, POOL, trace)
    assert summary["jobs_completed"] == 2
    assert sorted(_qdates(tmp_path / "out").values()) == [0.0, 500.0]


def test_a_think_time_past_the_trace_time_delays_the_job(tmp_path: Path) -> None:
    """Job 1 ends at 30 (started at once); job 2 (trace time 40) follows with 600 s to think: the
    pool idles meanwhile and the run does not stop as stalled."""
    trace = [swf_line(1, 0, 30, user=1), follows(swf_line(2, 40, 10, user=1), 1, 600)]
    summary = run(tmp_path, CONFIG, POOL, trace)
    assert summary["jobs_completed"] == 2 and summary["stop_reason"] == "all jobs done", summary
    assert sorted(_qdates(tmp_path / "out").values())[1] >= 630.0


def _arrival(number: int, time: float, after: int = -1, think: float = 0.0) -> Arrival:
    return Arrival(time, "u1", (ClassAd(),), number, after, think)


def test_only_the_last_ends_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dependencies, "KEPT_ENDS", 2)
    later: list[tuple[float, int]] = []
    deps = Dependencies(lambda at, a: later.append((at, a.number)))
    for n in (1, 2, 3):
        deps.submitted(n, (n, 0))
        deps.left((n, 0), 10.0 * n)
    assert sorted(deps.ends) == [2, 3]
    assert deps.arrive(_arrival(4, 5.0, after=1, think=100), 5.0)  # 1 is forgotten: at once
    assert not deps.arrive(_arrival(5, 5.0, after=3, think=100), 5.0) and later == [(130.0, 5)]
    assert deps.pending == 1
