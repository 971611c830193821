"""Execute-side policy on a live pool: the desktop policy driven by scripted owner activity, and
partitionable slots carved and given back by real jobs (the HTCondor manual's "Policy Configuration
for Execution Points": "condor_startd Policy Configuration" and "Dynamic Provisioning: Partitionable
and Dynamic Slots").

The owner is played through ``pool.sensors``: ``keyboard_active_at`` in the future keeps
``KeyboardIdle`` at 0 (the owner is typing), one far in the past makes the keyboard idle. The
desktop policy's times are shrunk to seconds so each test takes a few of them."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.e2e.pool import process_state, script

ONE_SLOT = """
NUM_CPUS = 1
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1_PARTITIONABLE = false
"""

# HTCondor's desktop policy with its times shrunk: the keyboard is busy for 3 s after a key
# press, a suspended job continues once the keyboard has been idle 1 s, and is vacated after
# MaxSuspendTime. CONTINUE is the policy's own expression with ``ActivityTimer > 1`` for its
# fixed ``> 10``, so a test need not wait ten seconds of suspension.
DESKTOP = ONE_SLOT + """
use POLICY : Desktop
MINUTE = 3
StartIdleTime = 0
ContinueIdleTime = 1
CONTINUE = ($(CPUIdle) && ($(ActivityTimer) > 1) && (KeyboardIdle > $(ContinueIdleTime)))
"""

# The job leads its process group: it writes its pid, starts a child (a sleep) and a process
# that leaves the group for a session of its own (setsid), and waits; $1 is the directory for
# the pid files. All three are the job's: suspended, continued and killed together.
FAMILY = """echo $$ > "$1/job.pid"
setsid sh -c 'echo $$ > "$0/escaped.pid"; exec sleep 300' "$1" &
sleep 300 &
echo $! > "$1/child.pid"
wait
"""
TRAP_USR1 = 'trap \'echo "caught" > "$1/got_usr1"; kill $(cat "$1/child.pid"); exit 0\' USR1\n'
IGNORE_USR1 = "trap '' USR1\n"


def _owner_idle(pool) -> None:
    pool.sensors(keyboard_active_at=time.time() - 10_000, load_avg=0.0)


def _owner_typing(pool) -> None:
    pool.sensors(keyboard_active_at=time.time() + 10_000, load_avg=0.0)


def _start_family(pool, prelude: str = "", submit: str = "") -> tuple[int, list[int]]:
    """Submit the job, wait until it runs; (cluster, [job pid, child pid, escaped pid])."""
    exe = script(pool.jobs_dir, "family.sh", prelude + FAMILY)
    cluster = pool.submit(f"executable = {exe}\narguments = {pool.jobs_dir}\nlog = job.log\n"
                          f"{submit}\nqueue\n")
    files = [pool.jobs_dir / f"{name}.pid" for name in ("job", "child", "escaped")]
    pool.wait_for(lambda: pool.status(cluster) == 2 and all(_pid(f) for f in files), 30,
                  "the job and its processes running")
    return cluster, [_pid(f) for f in files]


def _pid(path: Path) -> int:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 0


def _states(pids: list[int], *wanted: str | None) -> bool:
    """Whether every process is in one of the ``wanted`` states (None: gone)."""
    return all(process_state(pid) in wanted for pid in pids)


def _process_states(pids: list[int]) -> list[str | None]:
    return [process_state(pid) for pid in pids]


def _slot(pool) -> tuple[str, str]:
    ad = pool.slots()[0]
    return str(ad["State"]), str(ad["Activity"])


def _events(log: str, cluster: int) -> list[str]:
    job = re.escape(f"({cluster:03d}.000.000)")
    return [m.group(1) for m in re.finditer(r"^(\d{3}) " + job, log, re.M)]


def test_desktop_owner_activity_suspends_then_continues_the_job(make_pool) -> None:
    """Claimed State, transitions 14 and 15 (the HTCondor manual's "Policy Configuration for
    Execution Points", "Claimed State"; the desktop policy of "Examples of Policy Configuration"):
    the owner typing makes SUSPEND true and all the job's processes are stopped, one that left the
    job's process group included (Claimed/Suspended, JobStatus 7); once the keyboard is idle again
    CONTINUE resumes them (Claimed/Busy, JobStatus 2). Removing the job then kills every one of
    them."""
    pool = make_pool(DESKTOP + "MaxSuspendTime = 600\n")
    _owner_idle(pool)
    cluster, family = _start_family(pool)
    assert _slot(pool) == ("Claimed", "Busy")

    _owner_typing(pool)
    pool.wait_for(lambda: _states(family, "T"), 10, "the job and its processes stopped",
                  show=lambda: _process_states(family))
    pool.wait_for(lambda: _slot(pool) == ("Claimed", "Suspended"), 10, "Claimed/Suspended")
    pool.wait_for(lambda: pool.status(cluster) == 7, 10, "JobStatus 7 (suspended)")
    pool.holds_for(lambda: _states(family, "T") and _slot(pool) == ("Claimed", "Suspended"),
                   "the job stopped while the owner keeps typing", seconds=1.5,
                   show=lambda: (_process_states(family), _slot(pool)))

    _owner_idle(pool)
    pool.wait_for(lambda: _states(family, "S", "R"), 10, "the job and its processes continued",
                  show=lambda: _process_states(family))
    pool.wait_for(lambda: _slot(pool) == ("Claimed", "Busy"), 10, "Claimed/Busy")
    pool.wait_for(lambda: pool.status(cluster) == 2, 10, "JobStatus 2 (running)")
    events = _events((pool.jobs_dir / "job.log").read_text(), cluster)
    assert events[:4] == ["000", "001", "010", "011"], events
    # the job, its child sleep, the setsid shell's exec'd sleep: every process counted
    assert "Number of processes actually suspended: 3" in (pool.jobs_dir / "job.log").read_text()
    ad = pool.job(cluster)
    assert ad is not None and ad["TotalSuspensions"] == 1 and ad["CumulativeSuspensionTime"] >= 1
    assert pool.slots()[0]["TotalJobSuspendTime"] >= 1
    pool.act("remove", f"{cluster}.0")
    pool.wait_for(lambda: _states(family, None), 10, "the removed job's processes gone",
                  show=lambda: _process_states(family))


def test_desktop_owner_stays_active_job_vacated_with_its_kill_sig(make_pool) -> None:
    """Claimed State, transitions 16 and 18, then Preempting/Vacating and 22 (the HTCondor manual's
    "Policy Configuration for Execution Points", "Claimed State" and "Preempting State"): the owner
    keeps typing past MaxSuspendTime, PREEMPT becomes true and, with no retirement on a desktop, the
    job is continued and sent its KillSig (here SIGUSR1, which it traps); the slot goes to Owner and
    the job back to Idle with an eviction (004) in its user log."""
    pool = make_pool(DESKTOP + "MaxSuspendTime = 3\nMachineMaxVacateTime = 20\n")
    _owner_idle(pool)
    cluster, family = _start_family(pool, TRAP_USR1, "kill_sig = SIGUSR1")

    _owner_typing(pool)
    pool.wait_for(lambda: _states(family, "T"), 10, "the job stopped",
                  show=lambda: _process_states(family))
    caught = pool.jobs_dir / "got_usr1"
    # MaxSuspendTime (3 s) of suspension first, then the KillSig
    suspended_at = time.monotonic()
    pool.holds_for(lambda: _states(family, "T") and not caught.exists(), "the job suspended, not yet signalled",
                   seconds=2, show=lambda: _process_states(family))
    pool.wait_for(caught.exists, 20, "the job's SIGUSR1 handler")
    assert time.monotonic() - suspended_at >= 2.5  # MaxSuspendTime of suspension first
    assert caught.read_text() == "caught\n"
    pool.wait_for(lambda: _states(family, None), 10, "the job's processes gone",
                  show=lambda: _process_states(family))
    pool.wait_for(lambda: pool.status(cluster) == 1, 10, "the job back to Idle")
    pool.wait_for(lambda: _slot(pool) == ("Owner", "Idle"), 10, "the slot back to its owner")
    events = _events((pool.jobs_dir / "job.log").read_text(), cluster)
    assert events[-1] == "004" and "010" in events, events
    ad = pool.job(cluster)
    assert ad is not None and ad["NumJobStarts"] == 1
    # the owner is still there: START is false, a cycle that sees the idle job does not start it
    pool.wait_for(lambda: pool.idle_jobs_advertised("tester") == 1, 10, "the idle job advertised")
    pool.holds_for(lambda: (pool.status(cluster), _slot(pool)) == (1, ("Owner", "Idle")),
                   "the job idle, the slot its owner's", seconds=1, cycles=1)


def test_desktop_job_ignoring_its_kill_sig_is_hard_killed_after_the_vacate_time(make_pool) -> None:
    """Preempting State (the HTCondor manual's "Policy Configuration for Execution Points"): a job
    has the maximum vacating time (MachineMaxVacateTime) to exit after its soft kill; one that
    ignores its KillSig is then killed with SIGKILL, child and all, and the slot goes back to its
    owner (22/25). (The startd hands the vacate time to the starter, as HTCondor's
    ``Claim::starterKillSoft`` does, so the slot's activity is not asserted: the manual has it enter
    Killing.)"""
    vacate = 4
    pool = make_pool(DESKTOP + f"MaxSuspendTime = 1\nMachineMaxVacateTime = {vacate}\n")
    _owner_idle(pool)
    cluster, family = _start_family(pool, IGNORE_USR1, "kill_sig = SIGUSR1")

    _owner_typing(pool)
    pool.wait_for(lambda: _slot(pool) == ("Preempting", "Vacating"), 15, "Preempting/Vacating")
    # all three ignore SIGUSR1 and live on, until the vacate time is nearly over
    pool.holds_for(lambda: _states(family, "S", "R"), "the job's processes alive after their soft kill",
                   seconds=vacate - 1.5, show=lambda: _process_states(family))
    pool.wait_for(lambda: _states(family, None), 10, "the job hard-killed",
                  show=lambda: _process_states(family))
    pool.wait_for(lambda: pool.status(cluster) == 1, 10, "the job back to Idle")
    pool.wait_for(lambda: _slot(pool) == ("Owner", "Idle"), 10, "the slot back to its owner")
    assert not (pool.jobs_dir / "got_usr1").exists()
    assert _events((pool.jobs_dir / "job.log").read_text(), cluster)[-1] == "004"


def test_partitionable_slot_carves_dynamic_slots_and_takes_them_back(make_pool) -> None:
    """Dynamic Provisioning: Partitionable and Dynamic Slots (the HTCondor manual's "Policy
    Configuration for Execution Points"): each job gets a dynamic slot ``slot1_N`` carved with its
    RequestCpus/RequestMemory, the partitionable slot advertises what is left, and when the jobs are
    done the dynamic slots go away and their resources return to the partitionable slot.
    RequestMemory is rounded up to 128 MiB by the default MODIFY_REQUEST_EXPR_REQUESTMEMORY
    ("Defaults for Partitionable Slot Sizes"): 300 MiB asked, 384 MiB carved."""
    pool = make_pool("NUM_CPUS = 2\nMEMORY = 1024\n")

    def pslot():
        return pool.slots('PartitionableSlot =?= true')[0]

    total_memory = int(pslot()["Memory"])
    assert int(pslot()["Cpus"]) == 2
    gate = pool.jobs_dir / "go"
    exe = script(pool.jobs_dir, "wait.sh", f'while [ ! -e "{gate}" ]; do sleep 0.2; done\n')
    cluster = pool.submit(f"executable = {exe}\nrequest_cpus = 1\nrequest_memory = 300\n"
                          "queue 2\n")
    pool.wait_for(lambda: all(pool.status(cluster, p) == 2 for p in range(2)), 30, "both running")
    dynamic = pool.wait_for(lambda: (lambda ds: ds if len(ds) == 2 else None)(
        pool.slots('DynamicSlot =?= true')), 10, "two dynamic slots advertised")
    assert sorted(re.sub(r"@.*", "", str(d["Name"])) for d in dynamic) == ["slot1_1", "slot1_2"]
    for d in dynamic:
        assert (d["Cpus"], d["Memory"], d["State"]) == (1, 384, "Claimed")
    pool.wait_for(lambda: int(pslot()["Cpus"]) == 0 and int(pslot()["Memory"]) == total_memory - 768,
                  10, "the partitionable slot shrunk")

    gate.write_text("")
    pool.wait_for(lambda: all(pool.status(cluster, p) == 4 for p in range(2)), 30, "both completed")
    pool.wait_for(lambda: not pool.slots('DynamicSlot =?= true'), 20, "the dynamic slots gone")
    pool.wait_for(lambda: int(pslot()["Cpus"]) == 2 and int(pslot()["Memory"]) == total_memory,
                  10, "the resources back in the partitionable slot")
    for proc in range(2):
        done = pool.history(f"ClusterId == {cluster} && ProcId == {proc}")[0]
        assert done["CpusProvisioned"] == 1 and done["MemoryProvisioned"] == 384
