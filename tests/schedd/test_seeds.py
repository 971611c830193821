"""Every schedd example of the HTCondor manual, run through the schedd core: job transforms, submit
requirements and warnings ("Policy Configuration for Execution Points", "condor_schedd Policy
Configuration"), crontab and deferral ("Time Scheduling for Job Execution") and job priorities ("Job
Priority", both in "Job Scheduling")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from htcpool.classad import ClassAd
from htcpool.schedd import (
    CronSchedule,
    JobQueue,
    JobStatus,
    SubmitRejected,
    settings_from_config,
)
from htcpool.submit import SubmitHost, submit_description
from tests.submit.conftest import golden_fs

NOW = 1_780_000_000
CONFIG = {
    "SUBMIT_REQUIREMENT_NAMES": "NotStandardUniverse, MinimalRequestMemory, NotChris",
    "SUBMIT_REQUIREMENT_NotStandardUniverse": "JobUniverse != 1",
    "SUBMIT_REQUIREMENT_MinimalRequestMemory": "RequestMemory > 512",
    "SUBMIT_REQUIREMENT_NotChris": 'Owner != "chris"',
    "SUBMIT_REQUIREMENT_NotStandardUniverse_REASON": '"This pool does not accept standard universe jobs."',
    "SUBMIT_REQUIREMENT_MinimalRequestMemory_REASON":
        'strcat( "The job only requested ", RequestMemory, " Megabytes.  If that small amount is really enough, please contact ..." )',
    "SUBMIT_REQUIREMENT_NotChris_REASON": '"Chris, you may only submit jobs to the instructional pool."',
}


def jobs(text: str, user: str = "alice") -> list[ClassAd]:
    host = SubmitHost(user=user, cwd="/home/alice/jobs", now=NOW)
    return submit_description("executable = /bin/true\n" + text, host=host, fs=golden_fs()).jobs


def queue(config: dict[str, str]) -> JobQueue:
    return JobQueue(settings_from_config(config.get))


def test_submit_requirements_reject_with_reason() -> None:
    q = queue(CONFIG)
    with pytest.raises(SubmitRejected) as info:
        q.submit("alice", jobs("universe = vanilla\n+JobUniverse = 1\nrequest_memory = 1024\nqueue\n"), NOW)
    assert info.value.reason == "This pool does not accept standard universe jobs."
    with pytest.raises(SubmitRejected) as info:
        q.submit("alice", jobs("request_memory = 100\nqueue\n"), NOW)
    assert info.value.reason == ("The job only requested 100 Megabytes.  If that small amount is "
                                 "really enough, please contact ...")
    with pytest.raises(SubmitRejected) as info:
        q.submit("chris", jobs("request_memory = 1024\nqueue\n", "chris"), NOW)
    assert info.value.reason == "Chris, you may only submit jobs to the instructional pool."
    assert q.submit("alice", jobs("request_memory = 1024\nqueue\n"), NOW) == (1, [])


def test_default_reason_and_whole_cluster_rejected() -> None:
    q = queue({"SUBMIT_REQUIREMENT_NAMES": "Small", "SUBMIT_REQUIREMENT_Small": "ProcId < 2"})
    with pytest.raises(SubmitRejected, match="^Submit requirement Small not met.$"):
        q.submit("alice", jobs("queue 3\n"), NOW)
    assert not q.jobs and q.next_cluster == 1


def test_submit_warning() -> None:
    config = dict(CONFIG)
    config["SUBMIT_REQUIREMENT_NAMES"] = "OneGig " + CONFIG["SUBMIT_REQUIREMENT_NAMES"]
    config["SUBMIT_REQUIREMENT_OneGig"] = "RequestMemory > 1024"
    config["SUBMIT_REQUIREMENT_OneGig_REASON"] = '"As of <date>, the minimum requested memory will be 1024."'
    config["SUBMIT_REQUIREMENT_OneGig_IS_WARNING"] = "TRUE"
    q = queue(config)
    cluster, warnings = q.submit("alice", jobs("request_memory = 800\nqueue\n"), NOW)
    assert warnings == ["As of <date>, the minimum requested memory will be 1024."]
    text = q.events[-1]
    assert text.warnings == ("As of <date>, the minimum requested memory will be 1024.",)


TRANSFORMS = {
    "JOB_TRANSFORM_NAMES": "AssignGroup, SL6ToDocker",
    "JOB_TRANSFORM_AssignGroup": (
        '   # map Owner to group using the existing accounting group attribute as requested group\n'
        '   EVALSET AcctGroup = userMap("Groups",Owner,AcctGroup)\n'
        '   EVALSET AccountingGroup = join(".",AcctGroup,Owner)\n'),
    "JOB_TRANSFORM_SL6ToDocker": (
        '   # match only vanilla jobs that have WantSL6 and do not already have a DockerImage\n'
        '   REQUIREMENTS JobUniverse==5 && WantSL6 && DockerImage =?= undefined\n'
        '   SET  WantDocker = true\n'
        '   SET  DockerImage = "SL6"\n'
        '   SET  Requirements = TARGET.HasDocker && $(MY.Requirements)\n'),
    "SCHEDD_CLASSAD_USER_MAP_NAMES": "Groups",
    "CLASSAD_USER_MAPDATA_Groups": "* alice group_physics,group_chemistry\n* /^b/ group_b\n",
}


def test_assign_group_and_sl6_to_docker() -> None:
    q = queue(TRANSFORMS)
    q.submit("alice", jobs("accounting_group = group_chemistry\n+WantSL6 = true\nqueue\n"), NOW)
    q.submit("bob", jobs("queue\n", "bob"), NOW)
    q.submit("alice", jobs("queue\n"), NOW)
    first = q.jobs[(1, 0)]
    assert first["AcctGroup"] == "group_chemistry"
    assert first["AccountingGroup"] == "group_chemistry.alice"
    assert first["WantDocker"] is True and first["DockerImage"] == "SL6"
    assert str(first["Requirements"]).startswith("TARGET.HasDocker && (TARGET.Arch")
    assert q.jobs[(2, 0)]["AccountingGroup"] == "group_b.bob"
    assert q.jobs[(3, 0)]["AccountingGroup"] == "group_physics.alice"
    assert "WantDocker" not in q.jobs[(3, 0)]


def at(*fields: int) -> float:
    return datetime(*fields, tzinfo=UTC).timestamp()  # type: ignore[arg-type, misc]


@pytest.mark.parametrize(("fields", "now", "expected"), [
    ({"CronMinute": "0", "CronHour": "*"}, at(2026, 3, 2, 9, 30), at(2026, 3, 2, 10, 0)),
    ({"CronMinute": "0", "CronHour": "*"}, at(2026, 3, 2, 10, 0), at(2026, 3, 2, 11, 0)),
    ({"CronMinute": "23", "CronHour": "0-23/2", "CronDayOfMonth": "*", "CronMonth": "*",
      "CronDayOfWeek": "*"}, at(2026, 3, 2, 9, 30), at(2026, 3, 2, 10, 23)),
    ({"CronMinute": "30", "CronHour": "20", "CronDayOfMonth": "10-20", "CronMonth": "5",
      "CronDayOfWeek": "2"}, at(2026, 3, 2, 9, 30), at(2026, 5, 5, 20, 30)),
    ({"CronMinute": "30", "CronHour": "20", "CronDayOfMonth": "10-20", "CronMonth": "5",
      "CronDayOfWeek": "2"}, at(2026, 5, 5, 20, 30), at(2026, 5, 10, 20, 30)),
    ({"CronMinute": "30", "CronHour": "20", "CronDayOfMonth": "10-20", "CronMonth": "5",
      "CronDayOfWeek": "2"}, at(2026, 5, 20, 21, 0), at(2026, 5, 26, 20, 30)),
    ({"CronMinute": "*/10,*/6", "CronHour": "0-11", "CronDayOfMonth": "18", "CronMonth": "1",
      "CronDayOfWeek": "*"}, at(2026, 3, 2, 9, 30), at(2027, 1, 18, 0, 0)),
    ({"CronMinute": "*/10,*/6", "CronHour": "0-11", "CronDayOfMonth": "18", "CronMonth": "1"},
     at(2027, 1, 18, 0, 0), at(2027, 1, 18, 0, 6)),
    ({"CronMinute": "*/10,*/6", "CronHour": "0-11", "CronDayOfMonth": "18", "CronMonth": "1"},
     at(2027, 1, 18, 11, 54), at(2028, 1, 18, 0, 0)),
    ({"CronMinute": "15,20,25,30", "CronHour": "0-3,9-12,15"}, at(2026, 3, 2, 12, 31), at(2026, 3, 2, 15, 15)),
    ({"CronMinute": "10-30/5"}, at(2026, 3, 2, 9, 26), at(2026, 3, 2, 9, 30)),
    ({"CronMinute": "0", "CronHour": "*/3"}, at(2026, 3, 2, 22, 0), at(2026, 3, 3, 0, 0)),
    ({"CronMinute": "0", "CronHour": "0", "CronDayOfWeek": "7"}, at(2026, 3, 2, 9, 0), at(2026, 3, 8, 0, 0)),
    ({"CronMinute": "0", "CronHour": "0", "CronDayOfWeek": "0"}, at(2026, 3, 2, 9, 0), at(2026, 3, 8, 0, 0)),
])
def test_crontab_examples(fields: dict[str, str], now: float, expected: float) -> None:
    assert CronSchedule.from_fields(fields).next_run(now) == expected


def test_cron_job_repeats_and_is_one_instance() -> None:
    q = queue({})
    submitted = jobs("on_exit_remove = false\ncron_minute = 0\ncron_hour = *\ncron_prep_time = 300\nqueue\n")
    q.submit("alice", submitted, at(2026, 3, 2, 9, 30))
    job = (1, 0)
    assert q.jobs[job]["DeferralTime"] == at(2026, 3, 2, 10, 0)
    q.start(job, at(2026, 3, 2, 9, 56))
    q.handle_timer(at(2026, 3, 2, 10, 30))
    assert q.status(job) == JobStatus.RUNNING  # never a second instance
    q.finish(job, at(2026, 3, 2, 10, 31))
    assert q.status(job) == JobStatus.IDLE
    assert q.jobs[job]["DeferralTime"] == at(2026, 3, 2, 11, 0)
    q.hold(job, "alice", at(2026, 3, 2, 11, 5))
    q.release(job, "alice", at(2026, 3, 2, 12, 30))
    assert q.jobs[job]["DeferralTime"] == at(2026, 3, 2, 13, 0)


def test_deferral_window_missed_is_held() -> None:
    q = queue({})
    q.submit("alice", jobs("deferral_time = 1136138400\ndeferral_window = 120\nqueue\n"), 1136138000)
    q.handle_timer(1136138400 + 45)
    assert q.status((1, 0)) == JobStatus.IDLE  # 75 seconds remain in the window
    q.handle_timer(1136138400 + 121)
    ad = q.jobs[(1, 0)]
    assert q.status((1, 0)) == JobStatus.HELD and ad["HoldReasonCode"] == 20
    assert ad["HoldReason"] == "The job missed its deferred execution time and therefore failed to run."


def test_job_priority_order_skips_unmatchable() -> None:
    q = queue({})
    q.submit("alice", jobs("priority = 10\n+Unmatchable = true\nqueue\n"), NOW)
    q.submit("alice", jobs("priority = 9\nqueue 2\n"), NOW + 1)
    q.submit("alice", jobs("priority = 9\n+PreJobPrio1 = 1\nqueue\n"), NOW + 2)
    q.submit("bob", jobs("priority = 100\nqueue\n", "bob"), NOW)
    assert list(q.ordered_jobs("alice")) == [(3, 0), (1, 0), (2, 0), (2, 1)]
    assert q.next_job("alice", lambda ad: "Unmatchable" not in ad and "PreJobPrio1" not in ad) == (2, 0)
    assert q.next_job("alice") == (3, 0)
    q.set_priority((2, 1), "alice", 50, NOW)
    assert q.next_job("alice", lambda ad: "PreJobPrio1" not in ad) == (2, 1)
    q.start((2, 1), NOW)
    q.set_priority((2, 1), "alice", -5, NOW)  # running jobs accept condor_prio and keep running
    assert q.status((2, 1)) == JobStatus.RUNNING and q.jobs[(2, 1)]["JobPrio"] == -5
    assert q.submitters() == ["bob", "alice"]
