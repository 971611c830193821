"""Jobs run and complete on a live personal pool; outputs, exit codes and the user log reach the user."""

from __future__ import annotations

import re
import time

from tests.e2e.pool import script


def test_jobs_run_complete_and_log(make_pool) -> None:
    pool = make_pool()
    exe = script(pool.jobs_dir, "work.sh", 'echo "out $1 $GREETING"; echo "err $1" >&2; exit $2\n')
    cluster = pool.submit(f"""
executable = {exe}
arguments = $(Process) $(Process)
environment = "GREETING=hello"
output = out.$(Process)
error = err.$(Process)
log = jobs.log
queue 3
""")
    pool.wait_for(lambda: all(pool.status(cluster, p) == 4 for p in range(3)), 30, "3 completed jobs")
    for proc in range(3):
        assert (pool.jobs_dir / f"out.{proc}").read_text() == f"out {proc} hello\n"
        assert (pool.jobs_dir / f"err.{proc}").read_text() == f"err {proc}\n"
        done = pool.history(f"ClusterId == {cluster} && ProcId == {proc}")[0]
        assert done["ExitCode"] == proc
        assert done["ExitBySignal"] is False
    log = (pool.jobs_dir / "jobs.log").read_text()
    for proc in range(3):
        job = f"({cluster:03d}.{proc:03d}.000)"
        codes = [m.group(1) for m in re.finditer(r"^(\d{3}) " + re.escape(job), log, re.M)]
        assert codes[0] == "000" and "001" in codes and codes[-1] == "005", codes
    assert "(1) Normal termination (return value 2)" in log
    assert re.search(r"Job executing on host: <127\.0\.0\.1:\d+\?addrs=[^>]+>\n\tSlotName: slot1_\d+@", log)


def test_job_killed_by_signal_reports_it(make_pool) -> None:
    pool = make_pool()
    exe = script(pool.jobs_dir, "die.sh", "kill -9 $$\n")
    cluster = pool.submit(f"executable = {exe}\nlog = die.log\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 4, 30, "completion")
    done = pool.history(f"ClusterId == {cluster}")[0]
    assert done["ExitBySignal"] is True and done["ExitSignal"] == 9
    assert "Abnormal termination (signal 9)" in (pool.jobs_dir / "die.log").read_text()


def test_missing_executable_puts_the_job_on_hold(make_pool) -> None:
    pool = make_pool()
    exe = script(pool.jobs_dir, "gone.sh", "exit 0\n")
    cluster = pool.submit(f"executable = {exe}\nqueue\n")
    (pool.jobs_dir / "gone.sh").unlink()
    pool.wait_for(lambda: pool.status(cluster) == 5, 30, "the hold")
    assert pool.job(cluster)["HoldReasonCode"] == 6


def test_deferred_job_waits_on_its_slot_until_the_deferral_time(make_pool) -> None:
    """Job deferral (the HTCondor manual's "Time Scheduling for Job Execution": "Job Deferral" and
    "Preparation Time"):
    the job is matched up to DeferralPrepTime early and runs at its DeferralTime, an expression
    here; the job shows as Running while it waits on the slot."""
    pool = make_pool()
    exe = script(pool.jobs_dir, "stamp.sh", 'date +%s > "$1"\n')
    submitted = time.time()
    cluster = pool.submit(f"executable = {exe}\narguments = {pool.jobs_dir}/ran_at\n"
                          "deferral_time = (QDate + 8)\ndeferral_prep_time = 6\ndeferral_window = 60\n"
                          "queue\n")
    pool.wait_for(lambda: pool.status(cluster) == 2, 10, "matched and waiting as Running")
    qdate = int(pool.job(cluster)["QDate"])
    # Running on the slot, and not run, until the deferral time is a second away
    pool.holds_for(lambda: (pool.status(cluster), (pool.jobs_dir / "ran_at").exists()) == (2, False),
                   "the job waiting on its slot", seconds=qdate + 7 - time.time())
    pool.wait_for(lambda: pool.status(cluster) == 4, 30, "the run at the deferral time")
    ran_at = int((pool.jobs_dir / "ran_at").read_text())
    assert qdate + 8 <= ran_at <= qdate + 10, (qdate, ran_at, submitted)


def test_job_past_its_deferral_window_is_held(make_pool) -> None:
    """Deferral Window (the HTCondor manual's "Time Scheduling for Job Execution"): a job that
    reaches its execute point later than DeferralTime + DeferralWindow is put on hold."""
    pool = make_pool()
    exe = script(pool.jobs_dir, "never.sh", "exit 0\n")
    cluster = pool.submit(f"executable = {exe}\ndeferral_time = (QDate - 100)\ndeferral_window = 10\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 5, 30, "the hold")
    assert pool.job(cluster)["HoldReasonCode"] == 20
