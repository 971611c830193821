"""The run's files: determinism, the summary's fields, skipped lines, other input formats, delays."""

from __future__ import annotations

import json
from pathlib import Path

from htcpool.sim.options import Progress, SimOptions
from htcpool.sim.run import simulate
from tests.sim.pool_files import rows, run, summary_without_timing, swf_line, write_swf

CONFIG = "NEGOTIATOR_INTERVAL = 60\nGROUP_NAMES = group_g1\nGROUP_QUOTA_group_g1 = 2\nSIM_PRIORITY_FACTORS = u2:2\n"
MACHINES = "2 NUM_CPUS=2 MEMORY=4096\n1 NUM_CPUS=4 MEMORY=8192 HasDocker=true\n"


def _trace() -> list[str]:
    return [swf_line(n, n * 7 % 50, 60 + n % 5 * 30, user=n % 3 + 1, group=1 if n % 2 else -1, cpus=1 + n % 2)
            for n in range(1, 41)]


def test_same_inputs_and_seed_give_the_same_files(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        run(tmp_path / name, CONFIG, MACHINES, _trace(), seed=3)
        out = tmp_path / name / "out"
        text = json.dumps(summary_without_timing(out / "summary.json"), sort_keys=True)
        outputs.append([text] + [(out / f).read_bytes() for f in ("timeseries.csv", "usage.csv", "jobs.csv")])
    assert outputs[0] == outputs[1]


def test_summary_fields(tmp_path: Path) -> None:
    summary = run(tmp_path, CONFIG, MACHINES, _trace())
    assert summary["jobs_submitted"] == summary["jobs_completed"] == 40
    assert 0 < summary["utilization"] <= 1 and summary["negotiation_cycles"] > 0
    assert set(summary["users"]) == {"u1", "u2", "u3"} and set(summary["groups"]) == {"<none>", "group_g1"}
    assert abs(sum(u["share"] for u in summary["users"].values()) - 1) < 1e-5
    assert summary["timing"]["speedup"] > 0 and summary["timing"]["wall_s"] > 0
    text = (tmp_path / "out" / "summary.json").read_text()
    assert text == json.dumps(summary, sort_keys=True, indent=2) + "\n"
    jobs = rows(tmp_path / "out" / "jobs.csv")
    assert len(jobs) == 40 and all(float(j["wait_s"]) >= 0 for j in jobs)
    series = rows(tmp_path / "out" / "timeseries.csv")
    assert series[0]["total_cpus"] == "8.0" and max(float(r["busy_cpus"]) for r in series) <= 8


def test_an_access_point_that_runs_fewer_jobs_than_the_pool_has_cpus_is_noted(tmp_path: Path) -> None:
    """MAX_JOBS_RUNNING below the pool's cpus (HTCondor's default is 8,192 on the simulator's
    machine facts) caps the running jobs: the summary says so, and the run honours it."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run(tmp_path / "a", CONFIG, MACHINES, _trace())["notes"] == []
    summary = run(tmp_path / "b", CONFIG + "MAX_JOBS_RUNNING = 3\n", MACHINES, _trace())
    assert summary["notes"] == ["MAX_JOBS_RUNNING is 3, below the pool's 8 cpus: the schedd runs at most 3 jobs at "
                                "once; set MAX_JOBS_RUNNING (in the configuration or with --set) to the real access "
                                "point's value"]
    series = rows(tmp_path / "b" / "out" / "timeseries.csv")
    assert max(int(r["running_jobs"]) for r in series) <= 3


def test_skipped_lines_are_counted(tmp_path: Path) -> None:
    summary = run(tmp_path, CONFIG, MACHINES, [*_trace()[:5], "1 2 3", "x " * 18], skip_bad=True)
    assert summary["skipped_lines"] == 2 and summary["jobs_completed"] == 5


def test_progress_is_reported(tmp_path: Path) -> None:
    seen: list[Progress] = []
    run(tmp_path, CONFIG, MACHINES, _trace(), on_progress=seen.append)
    assert seen and seen[-1].jobs_done == 40 and seen[-1].jobs_total == 40 and seen[-1].events > 0


def test_message_delay_delays_the_starts(tmp_path: Path) -> None:
    trace = [swf_line(1, 0, 100, user=1)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    run(tmp_path / "a", CONFIG, MACHINES, trace)
    run(tmp_path / "b", CONFIG, MACHINES, trace, message_delay=0.5)
    fast, = rows(tmp_path / "a" / "out" / "jobs.csv")
    slow, = rows(tmp_path / "b" / "out" / "jobs.csv")
    assert float(slow["start_s"]) >= float(fast["start_s"]) + 1.0  # several messages before a job starts


def test_a_status_dump_and_a_history_file_drive_a_run(tmp_path: Path) -> None:
    (tmp_path / "condor_config").write_text(CONFIG)
    (tmp_path / "status.txt").write_text('Machine = "a.example"\nName = "slot1@a.example"\nTotalCpus = 2\n'
                                         'TotalMemory = 2048\nCpus = 2\nMemory = 2048\nHasDocker = true\n')
    (tmp_path / "history.txt").write_text(
        'Owner = "alice"\nQDate = 1700000000\nRemoteWallClockTime = 50.0\nRequestCpus = 1\n'
        'Requirements = TARGET.HasDocker\nClusterId = 1\n\n'
        'Owner = "bob"\nQDate = 1700000010\nRemoteWallClockTime = 70.0\nRequestCpus = 2\nClusterId = 2\n')
    summary = simulate(SimOptions(tmp_path / "condor_config", tmp_path / "status.txt", tmp_path / "history.txt",
                                  tmp_path / "out"))
    assert summary["jobs_completed"] == 2 and summary["users"]["alice"]["cpu_s"] == 50
    assert summary["users"]["bob"]["cpu_s"] == 140


def test_the_trace_is_read_one_arrival_ahead(tmp_path: Path) -> None:
    """Streaming: a bad line after the run's end is never read."""
    path = write_swf(tmp_path / "t.swf", [swf_line(1, 0, 10, user=1), swf_line(2, 5000, 10, user=1), "broken"])
    (tmp_path / "condor_config").write_text(CONFIG)
    (tmp_path / "m.txt").write_text(MACHINES)
    summary = simulate(SimOptions(tmp_path / "condor_config", tmp_path / "m.txt", path, tmp_path / "out", until=100))
    assert summary["jobs_completed"] == 1 and summary["stop_reason"] == "until"
