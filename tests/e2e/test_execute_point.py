"""The execute point as the whole-machine howto and an administrator use it, on a live pool.

One job shows the job-side pieces: it matches only through an attribute named in the obsolete
STARTD_EXPRS (read as STARTD_ATTRS, with a warning in StartdLog), reads its machine ad and job
ad through _CONDOR_MACHINE_AD and _CONDOR_JOB_AD, runs JOB_RENICE_INCREMENT nicer than the
startd, and has its scratch directory under SLOT1_EXECUTE. StartdLog, at STARTD_DEBUG =
D_FULLDEBUG D_COMMAND, has the commands received and the state changes, and one warning for an
unknown level.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.pool import LivePool, script


def test_a_job_sees_the_machine_as_the_whole_machine_howto_says(make_pool, tmp_path: Path) -> None:
    scratch_root = tmp_path / "slot1-scratch"
    pool: LivePool = make_pool(f"""NUM_CPUS = 1
MEMORY = 1024
CAN_RUN_WHOLE_MACHINE = True
STARTD_EXPRS = $(STARTD_EXPRS) CAN_RUN_WHOLE_MACHINE
STARTD_DEBUG = D_FULLDEBUG D_COMMAND D_NO_SUCH_LEVEL
JOB_RENICE_INCREMENT = 3 + 2
SLOT1_EXECUTE = {scratch_root}
""")
    out = pool.jobs_dir / "seen.txt"
    job = script(pool.jobs_dir, "look.sh", f"""
grep -i '^CAN_RUN_WHOLE_MACHINE' "$_CONDOR_MACHINE_AD" > {out}
grep '^ClusterId' "$_CONDOR_JOB_AD" >> {out}
cut -d' ' -f19 /proc/$$/stat >> {out}
echo "$_CONDOR_SCRATCH_DIR" >> {out}
""")
    cluster = pool.submit(f"executable = {job}\nrequirements = CAN_RUN_WHOLE_MACHINE =?= True\nqueue\n")
    pool.wait_for(lambda: pool.history(f"ClusterId == {cluster}"), 40, "the whole-machine job to finish")
    lines = out.read_text().splitlines()
    startd_nice = os.getpriority(os.PRIO_PROCESS, pool.pid_of("startd"))
    assert lines[0].replace(" ", "").lower() == "can_run_whole_machine=true", lines
    assert lines[1] == f"ClusterId = {cluster}", lines
    assert int(lines[2]) == min(startd_nice + 5, 19), lines
    assert lines[3].startswith(f"{scratch_root}/dir_"), lines

    log = pool.log_text("startd")
    assert "STARTD_EXPRS is obsolete; it is read as STARTD_ATTRS" in log
    assert log.count("not a debug level") == 1 and "D_NO_SUCH_LEVEL" in log
    assert "Received RequestClaim" in log and "Received ActivateClaim" in log  # D_COMMAND
    assert "slot1_1: Changing state and activity: Unclaimed/Idle -> Claimed/Idle" in log
    assert "slot1_1: Changing activity: Idle -> Busy" in log
    assert f"Got activate_claim request: starting job {cluster}.0" in log
