"""HTCondor's tool names on a live pool, run as installed (``condor_submit``, ``condor_q`` … beside
the interpreter, as pip puts them on PATH): condor_suspend and condor_continue stop and resume
a running job (JobStatus 7, user-log events 010 and 011, the process really stopped),
condor_qedit changes attributes under the protection rules, condor_tail shows the output of a
running job, condor_watch_q prints the progress view, condor_wait waits on the user log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.pool import LivePool, process_state

BIN = Path(sys.executable).parent
USER = "alice"

JOB = """\
executable = /bin/sh
arguments = "-c 'echo started; echo $$ > {pid_file}; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done'"
output = out.$(Process)
error = err.$(Process)
log = job.log
request_memory = 64
queue 1
"""


def tool(pool: LivePool, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CONDOR_CONFIG", "COLUMNS")}
    env.update(HTCPOOL_LOCAL_DIR=str(pool.layout.root), LOGNAME=USER, USER=USER)
    return subprocess.run([str(BIN / name), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=pool.jobs_dir, env=env)


def ok(pool: LivePool, name: str, *args: str) -> str:
    done = tool(pool, name, *args)
    assert done.returncode == 0, (name, args, done.returncode, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.long
def test_condor_tools_on_a_live_pool(make_pool) -> None:  # type: ignore[no-untyped-def]
    pool: LivePool = make_pool()
    pid_file = pool.jobs_dir / "shell.pid"  # an absolute path: the job runs in its scratch directory
    (pool.jobs_dir / "job.sub").write_text(JOB.format(pid_file=pid_file))
    assert "1 job(s) submitted to cluster 1." in ok(pool, "condor_submit", "job.sub")
    pool.wait_for(lambda: pool.status(1) == 2 and pid_file.exists(), what="job 1.0 running")
    shell = int(pool.wait_for(lambda: pid_file.read_text().strip(), what="the job's pid"))

    # condor_tail: the running job's output, the last bytes asked for
    tail = pool.wait_for(lambda: "tick 2" in (t := ok(pool, "condor_tail", "1.0")) and t, what="output to tail")
    assert tail.startswith("started\ntick 1\n")
    assert len(ok(pool, "condor_tail", "-maxbytes", "7", "1.0").encode()) == 7

    # condor_suspend / condor_continue
    assert ok(pool, "condor_suspend", "1.0").strip() == "Job 1.0 suspended"
    pool.wait_for(lambda: pool.status(1) == 7, what="JobStatus 7 (Suspended)")
    pool.wait_for(lambda: process_state(shell) == "T", what="the job's shell stopped (SIGSTOP)",
                  show=lambda: process_state(shell))
    size = (pool.jobs_dir / "out.0").stat().st_size
    pool.holds_for(lambda: (pool.jobs_dir / "out.0").stat().st_size == size, "no output while suspended",
                   seconds=1.0)
    again = tool(pool, "condor_suspend", "1.0")
    assert again.returncode == 1 and again.stdout.strip() == "Job 1.0 already suspended"
    assert ok(pool, "condor_continue", "1.0").strip() == "Job 1.0 continued"
    pool.wait_for(lambda: pool.status(1) == 2, what="JobStatus 2 again")
    pool.wait_for(lambda: (pool.jobs_dir / "out.0").stat().st_size > size, what="output after continue")
    log = (pool.jobs_dir / "job.log").read_text()
    assert "010 (001.000.000)" in log and "Job was suspended." in log
    assert "011 (001.000.000)" in log and "Job was unsuspended." in log
    assert ok(pool, "condor_q", "-af", "TotalSuspensions").strip() == "1"

    # condor_qedit, and its refusals
    assert ok(pool, "condor_qedit", "1", "Color", '"blue"', "JobPrio", "7") == \
        'Set attribute "Color" for 1 matching jobs.\nSet attribute "JobPrio" for 1 matching jobs.\n'
    assert ok(pool, "condor_q", "-format", "%s ", "Color", "-format", "%d\\n", "JobPrio") == "blue 7\n"
    refused = tool(pool, "condor_qedit", "1", "Owner", '"mallory"')
    assert refused.returncode == 1 and 'Update of attribute "Owner" is not allowed.' in refused.stderr
    immutable = tool(pool, "condor_qedit", "1", "User", '"mallory@x"')
    assert immutable.returncode == 1 and "immutable" in immutable.stderr

    # condor_watch_q once; condor_wait on the user log once the job is removed
    view = ok(pool, "condor_watch_q", "-once", "-no-updated-at")
    assert view.splitlines()[0].split() == ["BATCH", "IDLE", "RUN", "DONE", "TOTAL", "JOB_IDS"]
    assert view.splitlines()[1].split()[:7] == ["ID:", "1", "-", "1", "-", "1", "1.0"]
    waited = tool(pool, "condor_wait", "-wait", "0.5", "job.log")
    assert (waited.returncode, waited.stdout) == (1, "Time expired.\n")
    started = time.monotonic()
    waiter = subprocess.Popen([str(BIN / "condor_wait"), "-wait", "30", "job.log", "1.0"], cwd=pool.jobs_dir,
                              stdout=subprocess.PIPE, text=True)
    ok(pool, "condor_rm", "1")
    out, _ = waiter.communicate(timeout=40)
    assert (waiter.returncode, out) == (0, "All jobs done.\n"), time.monotonic() - started
    assert ok(pool, "condor_history", "-af:j", "JobStatus").strip() == "1.0 3"
    assert ok(pool, "condor_version").startswith("$CondorVersion: ")
