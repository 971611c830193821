"""Local and scheduler universe jobs in the simulator: the schedd runs them on the access point
(``sim/schedd_driver.py``), for their modelled runtime, without a slot of the pool."""

from __future__ import annotations

from pathlib import Path

from htcpool.sim.schedd_driver import kill_signal
from tests.sim.pool_files import rows, run

STATIC = "NEGOTIATOR_INTERVAL = 60\n"


def test_local_jobs_run_on_the_access_point_for_their_runtime(tmp_path: Path) -> None:
    """Three local jobs and one vanilla job on a pool of one core: the local ones need no slot, so
    all four run at once and end at their runtimes."""
    submit = ("universe = local\nexecutable = /bin/work\n+SimRuntime = 30 + 10 * $(Process)\nqueue 3\n"
              "universe = vanilla\n+SimRuntime = 50\nqueue 1\n")
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=1 MEMORY=1024\n", submit, name="jobs.sub")
    jobs = sorted(rows(tmp_path / "out" / "jobs.csv"), key=lambda r: float(r["end_s"]))
    assert summary["jobs_completed"] == 4, summary
    assert [float(j["end_s"]) for j in jobs] == [30.0, 40.0, 50.0, 50.0], jobs
    assert summary["users"]["submitter"]["cpu_s"] == 50  # only the vanilla job held a core of the pool


def test_a_scheduler_universe_job_waits_for_its_owners_limit(tmp_path: Path) -> None:
    """MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER = 1: the second scheduler job starts when the first ends."""
    config = STATIC + "MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER = 1\n"
    submit = "universe = scheduler\nexecutable = /bin/dagman\n+SimRuntime = 100\nqueue 2\n"
    summary = run(tmp_path, config, "1 NUM_CPUS=1 MEMORY=1024\n", submit, name="jobs.sub")
    ends = sorted(float(j["end_s"]) for j in rows(tmp_path / "out" / "jobs.csv"))
    assert summary["jobs_completed"] == 2 and ends == [100.0, 200.0], (summary, ends)


def test_a_removed_local_job_is_stopped_by_its_kill_signal(tmp_path: Path) -> None:
    """periodic_remove after 20 s: the run is stopped at once, and the job leaves the queue
    removed, not completed."""
    submit = ("universe = local\nexecutable = /bin/work\n+SimRuntime = 1000\n"
              "periodic_remove = time() - JobStartDate > 20\nqueue 1\n")
    summary = run(tmp_path, STATIC + "PERIODIC_EXPR_INTERVAL = 10\n", "1 NUM_CPUS=1 MEMORY=1024\n", submit,
                  name="jobs.sub", until=2000)
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert summary["jobs_completed"] == 0 and summary["jobs_removed"] == 1, summary
    assert float(job["start_s"]) == 0 and float(job["end_s"]) == 30  # the first periodic check after 20 s


def test_kill_signals_are_read_by_name_or_number() -> None:
    assert kill_signal("SIGTERM") == 15 and kill_signal("kill") == 9 and kill_signal("2") == 2
    assert kill_signal("NOT_A_SIGNAL") == 15
