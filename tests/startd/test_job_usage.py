"""The starter's measurements reach the startd's policy (``JobUsage``), and HTCondor's usage
templates hold or preempt with them (the HTCondor manual's "Policy Configuration for Execution
Points": WANT_HOLD and the POLICY templates)."""

from __future__ import annotations

from htcpool.classad import ExprTree
from htcpool.startd import HardKill, HoldJob, JobUsage, SoftKill
from tests.startd.helpers import job, make_startd, pair, run_job, tick

BASE = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"


def test_usage_goes_into_a_copy_of_the_claims_job_ad() -> None:
    s = make_startd(BASE)
    sent = job()
    cid = run_job(s, "slot1", sent, 0)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"DiskUsage": 2048, "ResidentSetSize": 5000,
                                                   "MemoryUsage": ExprTree("((ResidentSetSize + 1023) / 1024)")}), 5)
    copy = s.slot("slot1").claim.job
    assert copy is not None and copy["DiskUsage"] == 2048
    assert copy.evaluate("MemoryUsage") == 5  # 5000 KiB rounded up to MB
    assert "DiskUsage" not in sent  # the ad the activation carried is untouched


def test_usage_about_an_ended_or_unknown_claim_changes_nothing() -> None:
    s = make_startd(BASE)
    run_job(s, "slot1", job(), 0)
    before = s.slot("slot1").claim.job
    assert s.handle(JobUsage(s.slot("slot1").name, "no-such-claim", {"DiskUsage": 1}), 5) == []
    assert s.slot("slot1").claim.job is before


def test_hold_if_disk_exceeded_holds_with_subcode_104_and_vacates_the_job() -> None:
    s = make_startd(BASE + "use POLICY : HOLD_IF_DISK_EXCEEDED\n")
    cid = run_job(s, "slot1", job(), 0)
    tick(s, 5)
    assert pair(s) == ("Claimed", "Busy")
    disk = s.slot("slot1").ad["Disk"]
    s.handle(JobUsage(s.slot("slot1").name, cid, {"DiskUsage": disk + 1}), 6)
    actions = tick(s, 10)
    holds = [a for a in actions if isinstance(a, HoldJob)]
    assert [(h.code, h.subcode, h.reason) for h in holds] == [(21, 104, "disk usage exceeded allocated disk")]
    assert any(isinstance(a, SoftKill) for a in actions)  # the held job is stopped as well
    assert pair(s) == ("Preempting", "Vacating")


def test_preempt_if_memory_exceeded_vacates_without_holding() -> None:
    s = make_startd(BASE + "use POLICY : PREEMPT_IF_MEMORY_EXCEEDED\n", memory=1024)
    cid = run_job(s, "slot1", job(), 0)
    tick(s, 5)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"ResidentSetSize": 2048 * 1024,
                                                   "MemoryUsage": ExprTree("((ResidentSetSize + 1023) / 1024)")}), 6)
    actions = tick(s, 10)
    assert not any(isinstance(a, HoldJob) for a in actions)
    assert any(isinstance(a, SoftKill) for a in actions) and pair(s) == ("Preempting", "Vacating")


def test_usage_within_the_slot_leaves_the_job_running() -> None:
    s = make_startd(BASE + "use POLICY : HOLD_IF_MEMORY_EXCEEDED\nuse POLICY : HOLD_IF_DISK_EXCEEDED\n")
    cid = run_job(s, "slot1", job(), 0)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"DiskUsage": 10, "ResidentSetSize": 1024,
                                                   "MemoryUsage": ExprTree("((ResidentSetSize + 1023) / 1024)")}), 6)
    actions = tick(s, 10)
    assert not any(isinstance(a, (HoldJob, SoftKill, HardKill)) for a in actions)
    assert pair(s) == ("Claimed", "Busy")


def test_hold_if_runtime_exceeds_reads_the_start_date_the_starter_reported() -> None:
    s = make_startd(BASE + "use POLICY : HOLD_IF_RUNTIME_EXCEEDS(60)\n")
    cid = run_job(s, "slot1", job(), 1000)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"JobState": "Running", "JobCurrentStartDate": 1000}), 1001)
    assert not any(isinstance(a, HoldJob) for a in tick(s, 1050))
    actions = tick(s, 1070)
    holds = [a for a in actions if isinstance(a, HoldJob)]
    assert [(h.subcode, h.reason) for h in holds] == [(103, "runtime exceeded maximum (60 seconds)")]


def test_want_hold_if_with_the_administrators_own_variable() -> None:
    s = make_startd(BASE + "CPU_HOG = RemoteUserCpu > 100\n"
                    "use POLICY : WANT_HOLD_IF(CPU_HOG, 7, too much CPU)\n")
    cid = run_job(s, "slot1", job(), 0)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"RemoteUserCpu": 500.0}), 1)
    holds = [a for a in tick(s, 5) if isinstance(a, HoldJob)]
    assert [(h.code, h.subcode, h.reason) for h in holds] == [(21, 7, "too much CPU")]


def test_want_hold_without_a_reason_names_the_expression() -> None:
    s = make_startd(BASE + "PREEMPT = RemoteUserCpu > 100\nWANT_HOLD = RemoteUserCpu > 100\n"
                    "MaxJobRetirementTime = 0\n")
    cid = run_job(s, "slot1", job(), 0)
    s.handle(JobUsage(s.slot("slot1").name, cid, {"RemoteUserCpu": 500.0}), 1)
    actions = tick(s, 5)
    holds = [a for a in actions if isinstance(a, HoldJob)]
    assert len(holds) == 1 and holds[0].code == 21 and holds[0].subcode == 0
    assert "WANT_HOLD (RemoteUserCpu > 100)" in holds[0].reason


def test_hold_if_cpus_exceeded_reads_the_slots_cpus_usage_from_the_jobs_load() -> None:
    """STARTD_PUBLISH_CpusUsage: the slot's CpusUsage is its share of the machine's load (a
    one-minute average of the starter's readings); over Cpus + 0.8 the job is held, subcode 101."""
    s = make_startd(BASE + "use POLICY : HOLD_IF_CPUS_EXCEEDED\n", cpus=4)
    run_job(s, "slot1", job(), 0)
    name = s.slot("slot1").name
    held: list[HoldJob] = []
    for second in range(1, 120):
        held += [a for a in tick(s, second, load_avg=3.0, condor_load={name: 3.0}) if isinstance(a, HoldJob)]
        if held:
            break
    assert [(h.code, h.subcode, h.reason) for h in held] == [(21, 101, "CPU usage exceeded request_cpus")]
    assert 30 < second < 90  # the average passes 1.8 cores after about 36 s of 3 cores


def test_a_job_using_its_one_core_is_not_held_by_hold_if_cpus_exceeded() -> None:
    s = make_startd(BASE + "use POLICY : HOLD_IF_CPUS_EXCEEDED\n", cpus=4)
    run_job(s, "slot1", job(), 0)
    name = s.slot("slot1").name
    for second in range(1, 120):
        assert not any(isinstance(a, HoldJob) for a in tick(s, second, load_avg=1.0, condor_load={name: 1.0}))
