"""Backfill on a live pool (the HTCondor manual's "Policy Configuration for Execution Points": the
Backfill state, transitions 7 and 28-31): an idle slot starts the configured backfill command
(htcpool's stand-in for BOINC) and a real job claiming the slot evicts it."""

from __future__ import annotations

import os

from tests.e2e.pool import script


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_backfill_client_runs_on_an_idle_slot_and_yields_to_a_job(make_pool, tmp_path) -> None:
    pidfile = tmp_path / "boinc.pid"
    client = script(tmp_path, "boinc.sh", f'echo $$ > {pidfile}\nexec sleep 300\n')
    pool = make_pool(f"""
SLOT_TYPE_1_PARTITIONABLE = false
NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1 = cpus=1
ENABLE_BACKFILL = true
BACKFILL_SYSTEM = BOINC
START_BACKFILL = true
EVICT_BACKFILL = false
BOINC_Executable = {client}
""")
    pool.wait_for(lambda: pool.slots('State == "Backfill" && Activity == "Busy"'), 30, "Backfill/Busy")
    pid = pool.wait_for(lambda: pidfile.exists() and int(pidfile.read_text()), 10, "the backfill client")
    assert _alive(pid)
    job = script(pool.jobs_dir, "job.sh", "echo ran\n")
    cluster = pool.submit(f"executable = {job}\noutput = job.out\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 4, 40, "the job to run in place of the backfill client")
    assert (pool.jobs_dir / "job.out").read_text() == "ran\n"
    pool.wait_for(lambda: not _alive(pid), 10, f"the backfill client (pid {pid}) killed")
