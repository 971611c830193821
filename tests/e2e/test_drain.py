"""condor_drain on a live pool: how fast, why, where, and what happens when the machine is drained.

* graceful: each job keeps its own MaxJobRetirementTime (one has 8 s and is evicted when only its
  vacate time is left of them, one finishes within the machine's hour); the slots advertise the reason and the drain's statistics
  (ExpectedMachineGracefulDrainingBadput before, TotalMachineDrainingBadput for the evicted job's
  run, TotalMachineDrainingUnclaimedTime, LastDrainStartTime/StopTime); StartdLog tells the
  story; -cancel brings the machine back;
* -check refuses a drain whose expression is false on some slot; -quick ignores retirement;
  -fast kills at once, without the job's KillSig;
* -exit-on-completion: the startd exits and the master leaves it off.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.pool import LivePool, script
from tests.e2e.test_tools import ok, run

TWO_CPUS = "NUM_CPUS = 2\nMEMORY = 2048\nMAXJOBRETIREMENTTIME = 3600\nMachineMaxVacateTime = 2\n"


def _slot_states(pool: LivePool) -> list[tuple[str, str]]:
    return sorted((str(s["State"]), str(s["Activity"])) for s in pool.slots())


def test_graceful_drain_honours_each_jobs_retirement_and_counts_the_badput(make_pool) -> None:
    pool: LivePool = make_pool(TWO_CPUS)
    machine = str(pool.slots()[0]["Machine"])
    assert pool.slots()[0].get("ExpectedMachineGracefulDrainingBadput") == 0
    short = pool.submit("executable = /bin/sleep\narguments = 6\nqueue\n")
    long = pool.submit("executable = /bin/sleep\narguments = 300\n+MaxJobRetirementTime = 8\nqueue\n")
    pool.wait_for(lambda: pool.status(short) == 2 and pool.status(long) == 2, 30, "both jobs running")
    long_start = float(pool.wait_for(lambda: (pool.job(long) or {}).get("JobCurrentStartDate"), 10, "its start"))
    pool.wait_for(lambda: all(s.get("ExpectedMachineGracefulDrainingBadput", 0) > 0 for s in pool.slots()
                              if s["State"] == "Claimed"), 15, "the expected badput of the running jobs")

    reply = ok(pool, "drain", "-graceful", "-reason", "kernel update", machine)
    assert reply.startswith("Sent request to drain the startd"), reply
    pool.wait_for(lambda: all(s.get("DrainReason") == "kernel update" and s.get("Draining") is True
                              for s in pool.slots()), 10, "the drain's reason on every slot")
    # the long job keeps its own 8 s of retirement (counted from its start), not the machine's hour: it is
    # told to vacate when only its vacate time (2 s) is left of them, and goes back to Idle
    pool.wait_for(lambda: pool.status(long) == 1, 20, "the long job evicted after its retirement")
    assert time.time() - long_start >= 5.5, pool.log_text("startd")[-5000:]
    pool.wait_for(lambda: pool.status(short) == 4 or pool.history(f"ClusterId == {short}"), 20,
                  "the short job finishing within its retirement")
    assert [j["JobStatus"] for j in pool.history(f"ClusterId == {short}")] == [4]
    pool.wait_for(lambda: set(_slot_states(pool)) == {("Drained", "Idle")}, 20, "a drained machine",
                  show=lambda: _slot_states(pool))
    ad = pool.slots()[0]
    assert 5 <= ad["TotalMachineDrainingBadput"] < 20, ad.get("TotalMachineDrainingBadput")  # the long job's run
    assert ad["LastDrainStartTime"] > 0
    pool.holds_for(lambda: pool.status(long) == 1, "the evicted job waiting while the machine is drained",
                   cycles=1)

    assert ok(pool, "drain", "-cancel") == f"Sent request to cancel draining on {machine}\n"
    pool.wait_for(lambda: pool.status(long) == 2, 30, "the evicted job running again after the cancel")
    ad = pool.wait_for(lambda: next((s for s in pool.slots() if "LastDrainStopTime" in s), None), 10,
                       "LastDrainStopTime")
    assert ad["TotalMachineDrainingUnclaimedTime"] > 0 and ad.get("Draining") in (None, False)
    log = pool.log_text("startd")
    assert "Changing state and activity: Claimed/Retiring -> Preempting/Vacating" in log, log[-3000:]
    assert "Evicting job" in log and "draining (graceful)" in log
    assert "Changing state and activity: Unclaimed/Idle -> Drained/Retiring" in log or \
           "Changing activity: Retiring -> Idle" in log


@pytest.mark.slow  # a third live pool; the graceful and exit tests cover the common path
def test_check_refuses_quick_ignores_retirement_fast_kills(make_pool, tmp_path: Path) -> None:
    pool: LivePool = make_pool(TWO_CPUS)
    machine = str(pool.slots()[0]["Machine"])
    trap = script(pool.jobs_dir, "trap.sh", "trap 'echo got TERM >> $1; exit 0' TERM\nsleep 300 &\nwait\n")
    cluster = pool.submit(f"executable = {trap}\narguments = {pool.jobs_dir}/signals.$(Process)\nqueue 2\n")
    pool.wait_for(lambda: len(pool.jobs("JobStatus == 2")) == 2, 30, "two running jobs")

    refused = run(pool, "drain", "-check", "Cpus > 4", machine)
    assert refused.returncode == 1 and "\nDraining check expression failed on slot1" in refused.stderr, \
        refused.stderr
    assert all(s.get("Draining") is None for s in pool.slots())

    # -quick: the machine's hour of retirement is not honoured; the jobs get their KillSig now
    ok(pool, "drain", "-quick", machine)
    pool.wait_for(lambda: all(j["JobStatus"] == 1 for j in pool.jobs()), 15, "both jobs evicted at once")
    pool.wait_for(lambda: all((pool.jobs_dir / f"signals.{p}").read_text() == "got TERM\n" for p in (0, 1)), 5,
                  "each job's trap reporting its KillSig")
    pool.wait_for(lambda: set(_slot_states(pool)) == {("Drained", "Idle")}, 15, "a drained machine")
    ok(pool, "drain", "-cancel", machine)
    pool.wait_for(lambda: len(pool.jobs("JobStatus == 2")) == 2, 30, "the jobs running again")

    # -fast: hard-killed, no KillSig: the trap writes nothing more
    ok(pool, "drain", "-fast", machine)
    pool.wait_for(lambda: all(j["JobStatus"] == 1 for j in pool.jobs()), 15, "both jobs killed at once")
    assert all((pool.jobs_dir / f"signals.{p}").read_text() == "got TERM\n" for p in (0, 1))
    assert "(hard kill): draining (fast)" in pool.log_text("startd")
    assert cluster > 0


def test_exit_on_completion_leaves_the_startd_off(make_pool) -> None:
    pool: LivePool = make_pool("NUM_CPUS = 1\nMEMORY = 1024\n")
    machine = str(pool.slots()[0]["Machine"])
    ok(pool, "drain", "-exit-on-completion", machine)
    pool.wait_for(lambda: pool.pid_of("startd") == 0, 30, "the startd to exit")
    pool.holds_for(lambda: pool.pid_of("startd") == 0, "the startd staying off", seconds=4)
    assert pool.slots() == []
    assert "told not to restart it" in pool.log_text("startd")
    assert "exited unexpectedly" not in pool.log_text("master")
    ok(pool, "on", "-daemon", "startd")  # an administrator brings it back
    pool.wait_for(lambda: [s["State"] for s in pool.slots()] == ["Unclaimed"], 30, "the startd back, not draining")
