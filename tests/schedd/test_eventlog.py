"""The user log: HTCondor 25's own logs reproduced byte for byte, then each event type alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.schedd.eventlog import (
    ABORTED,
    EVICTED,
    EXECUTE,
    HELD,
    IMAGE_SIZE,
    RELEASED,
    SUBMIT,
    SUSPENDED,
    TERMINATED,
    UNSUSPENDED,
    LogEvent,
    format_event,
)
from tests.shared import SHARED

TOOLS = SHARED / "golden" / "tools"
SCHEDD_1 = "<127.0.0.1:44057?addrs=127.0.0.1-44057&alias=node1>"
STARTD_1 = "<127.0.0.1:43727?addrs=127.0.0.1-43727&alias=node1>"
SCHEDD_2 = "<127.0.0.1:28313?addrs=127.0.0.1-28313&alias=node1>"
STARTD_2 = "<127.0.0.1:29749?addrs=127.0.0.1-29749&alias=node1>"
TABLE_HEAD = "\tPartitionable Resources :    Usage  Request Allocated \n"


def at(hms: str) -> float:
    """The epoch time of ``hms`` on the day the golden logs were written (UTC)."""
    h, m, s = map(int, hms.split(":"))
    return datetime(2026, 11, 22, h, m, s, tzinfo=UTC).timestamp()


def golden_events(name: str) -> list[str]:
    return [chunk + "...\n" for chunk in (TOOLS / name).read_text().split("...\n")[:-1]]


def job_ad(**attrs: Any) -> ClassAd:
    ad = ClassAd({"ClusterId": 1, "ProcId": 0})
    for name, value in attrs.items():
        ad[name] = value
    return ad


def slot_job(scratch: str, **attrs: Any) -> ClassAd:
    """A job as it stands once the slot's resources have been copied into it."""
    slot = {"CondorScratchDir": scratch, "CpusProvisioned": 1, "DiskProvisioned": 1048576,
            "GPUsProvisioned": 0, "MemoryProvisioned": 128, "RequestCpus": 1,
            "RequestDisk": 1048576, "RemoteUserCpu": 0.0, "RemoteSysCpu": 0.0,
            "CumulativeRemoteUserCpu": 0.0, "CumulativeRemoteSysCpu": 0.0}
    return job_ad(**(slot | attrs))


def finished(job: ClassAd, rss: int, disk: int, seconds: int) -> ClassAd:
    job = job.copy()
    job["ResidentSetSize"] = rss
    job["MemoryUsage"] = ExprTree("((ResidentSetSize + 1023) / 1024)")
    job["DiskUsage"] = disk
    job["ActivationExecutionDuration"] = seconds
    job["ActivationDuration"] = seconds
    return job


# -- the golden logs


def test_sleep_log_first_job_matches_htcondor() -> None:
    job = slot_job("/var/lib/condor/execute/dir_483/scratch", RequestMemory=64, CpusUsage=0)
    done = finished(job, rss=5708, disk=45, seconds=5)
    events = [
        LogEvent(SUBMIT, 1, 0, at("00:20:22"), host=SCHEDD_1, job=job),
        LogEvent(EXECUTE, 1, 0, at("00:20:38"), host=STARTD_1, slot_name="slot1_1@node1", job=job),
        LogEvent(IMAGE_SIZE, 1, 0, at("00:20:43"), image_size=45, memory_usage=6,
                 resident_set_size=5708, job=done),
        LogEvent(TERMINATED, 1, 0, at("00:20:43"), return_value=0, job=done),
    ]
    assert [format_event(e) for e in events] == golden_events("sleep.log")[:4]


def test_id_log_matches_htcondor() -> None:
    job = slot_job("/var/lib/condor/execute/dir_842/scratch", RequestMemory=128)
    done = finished(job, rss=5840, disk=50, seconds=0)
    events = [
        LogEvent(SUBMIT, 2, 0, at("00:21:59"), host=SCHEDD_2, job=job),
        LogEvent(EXECUTE, 2, 0, at("00:22:39"), host=STARTD_2, slot_name="slot1_1@node1", job=job),
        LogEvent(IMAGE_SIZE, 2, 0, at("00:22:39"), image_size=50, memory_usage=6,
                 resident_set_size=5840, job=done),
        LogEvent(TERMINATED, 2, 0, at("00:22:39"), job=done),
    ]
    assert "".join(format_event(e) for e in events) == (TOOLS / "id.log").read_text()


# -- header and submit


def test_header_pads_ids_and_shifts_to_the_zone() -> None:
    text = format_event(LogEvent(SUBMIT, 12, 3, at("23:30:00"), host="h"), zone=3600)
    assert text == "000 (012.003.000) 2026-11-23 00:30:00 Job submitted from host: h\n...\n"


def test_submit_warnings_as_htcondor_25_prints_them() -> None:
    text = format_event(LogEvent(SUBMIT, 1, 0, 0, host="h", warnings=("a", "b")))
    assert text.splitlines()[1] == ("    WARNING: Committed job submission into the queue with the "
                                    "following warning(s): a; b")


# -- execute


def test_execute_properties_given_explicitly_win_and_sort_ignoring_case() -> None:
    event = LogEvent(EXECUTE, 1, 0, 0, host="h", properties={"memory": "64", "Cpus": "2",
                                                             "CondorScratchDir": '"/s"'},
                     job=slot_job("/ignored"))
    assert format_event(event).splitlines()[1:-1] == [
        '\tCondorScratchDir = "/s"', "\tCpus = 2", "\tmemory = 64"]


def test_execute_without_job_or_slot_is_one_line() -> None:
    assert format_event(LogEvent(EXECUTE, 1, 0, 0, host="h")).splitlines()[1:] == ["..."]


def test_execute_reads_only_the_provisioned_resources_listed() -> None:
    job = job_ad(ProvisionedResources="cpus memory", CpusProvisioned=2, MemoryProvisioned=1.5,
                 DiskProvisioned=10)
    lines = format_event(LogEvent(EXECUTE, 1, 0, 0, host="h", job=job)).splitlines()
    assert lines[1:-1] == ["\tCpus = 2", "\tMemory = 1.5"]


# -- image size


def test_image_size() -> None:
    text = format_event(LogEvent(IMAGE_SIZE, 1, 0, 0, image_size=1000, memory_usage=1,
                                 resident_set_size=284))
    assert text.splitlines()[1:] == ["\t1  -  MemoryUsage of job (MB)",
                                     "\t284  -  ResidentSetSize of job (KB)", "..."]


# -- evicted


def test_evicted_without_job_keeps_the_plain_layout() -> None:
    text = format_event(LogEvent(EVICTED, 1, 0, 0, reason="via condor_vacate_job"))
    assert text == ("004 (001.000.000) 1970-01-01 00:00:00 Job was evicted.\n"
                    "\t(0) CPU times\n"
                    "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
                    "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                    "\t0  -  Run Bytes Sent By Job\n"
                    "\t0  -  Run Bytes Received By Job\n"
                    "\tReason: via condor_vacate_job\n...\n")


def test_evicted_with_job_shows_codes_usage_and_resources() -> None:
    job = slot_job("/s", RequestMemory=64, VacateReasonCode=1007, VacateReasonSubCode=3,
                   RemoteUserCpu=3725.9, RemoteSysCpu=90061.0, BytesSent=1234.0, BytesRecvd=5)
    text = format_event(LogEvent(EVICTED, 1, 0, 0, reason="preempted", job=job))
    assert text.split("\n", 1)[1] == (
        "\t(0) CPU times\n"
        "\t\tUsr 0 01:02:05, Sys 1 01:01:01  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t1234  -  Run Bytes Sent By Job\n"
        "\t5  -  Run Bytes Received By Job\n"
        "\tReason: preempted\n" + TABLE_HEAD +
        "\t   Cpus                 :                 1         1 \n"
        "\t   Disk (KB)            :           1048576   1048576 \n"
        "\t   GPUs                 :                           0 \n"
        "\t   Memory (MB)          :                64       128 \n...\n")
    assert text.startswith(
        "004 (001.000.000) 1970-01-01 00:00:00 Job was evicted. Code 1007 Subcode 3\n")


def test_evicted_code_from_the_event_wins_over_the_job() -> None:
    job = job_ad(VacateReasonCode=1007)
    text = format_event(LogEvent(EVICTED, 1, 0, 0, hold_code=21, hold_subcode=2, job=job))
    assert text.splitlines()[0].endswith("Job was evicted. Code 21 Subcode 2")


# -- terminated


def test_terminated_by_signal_without_job() -> None:
    lines = format_event(LogEvent(TERMINATED, 1, 0, 0, signal=9)).splitlines()
    assert lines[1:3] == ["\t(0) Abnormal termination (signal 9)", "\t(0) No core file"]
    assert lines[-2:] == ["\t0  -  Total Bytes Received By Job", "..."]


def test_terminated_cpu_times_and_bytes_come_from_the_job() -> None:
    job = job_ad(RemoteUserCpu=61.7, RemoteSysCpu=2.0, CumulativeRemoteUserCpu=200.0,
                 CumulativeRemoteSysCpu=0.0, BytesSent=17.0, BytesRecvd=92.0)
    lines = format_event(LogEvent(TERMINATED, 1, 0, 0, return_value=3, job=job)).splitlines()
    assert lines[1:] == [
        "\t(1) Normal termination (return value 3)",
        "\t\tUsr 0 00:01:01, Sys 0 00:00:02  -  Run Remote Usage",
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage",
        "\t\tUsr 0 00:03:20, Sys 0 00:00:02  -  Total Remote Usage",  # never below the run
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage",
        "\t17  -  Run Bytes Sent By Job",
        "\t92  -  Run Bytes Received By Job",
        "\t17  -  Total Bytes Sent By Job",
        "\t92  -  Total Bytes Received By Job",
        "...",  # no resource values, no table
    ]


def row(label: str, use: str, request: str, allocated: str, assigned: str = "",
        widths: tuple[int, int, int] = (8, 8, 9)) -> str:
    """A table line in HTCondor's printf format (``\t   %-20s : %8s %8s %9s %s``)."""
    return "\t   %-20s : %*s %*s %*s %s" % (label, widths[0], use, widths[1], request,
                                            widths[2], allocated, assigned)


def test_table_lines_up_fractions_and_whole_numbers() -> None:
    job = job_ad(CpusUsage=0.35, RequestCpus=1, CpusProvisioned=1, DiskUsage=45,
                 RequestDisk=2.5, DiskProvisioned=1048576, ActivationDuration=7.9)
    lines = format_event(LogEvent(TERMINATED, 1, 0, 0, job=job)).splitlines()
    assert lines[10:] == [
        TABLE_HEAD.rstrip("\n"),
        row("Cpus", "0.35", "1   ", "1"),
        row("Disk (KB)", "45   ", "2.50", "1048576"),
        row("TimeSlotBusy (s)", "7   ", "", ""),
        "...",
    ]


def test_table_widens_for_long_values_and_adds_assigned() -> None:
    job = job_ad(ProvisionedResources="Cpus, GPUs", CpusProvisioned=123456789012,
                 GPUsProvisioned=1, AssignedGPUs="GPU-0a", RequestGPUs=True,
                 GPUsUsage=ExprTree("1/0"))
    lines = format_event(LogEvent(TERMINATED, 1, 0, 0, job=job)).splitlines()
    assert lines[10:] == [
        "\tPartitionable Resources :    Usage  Request    Allocated Assigned",
        row("Cpus", "", "", "123456789012", widths=(8, 8, 12)),
        row("GPUs", "error", "true", "1", '"GPU-0a"', widths=(8, 8, 12)),
        "...",
    ]


def test_table_is_left_out_when_the_job_has_no_resource_values() -> None:
    text = format_event(LogEvent(TERMINATED, 1, 0, 0, job=job_ad(RequestCpus="many")))
    assert "Partitionable" not in text
    assert text.endswith("\t0  -  Total Bytes Received By Job\n...\n")


# -- the short events


@pytest.mark.parametrize(("event", "body"), [
    (LogEvent(ABORTED, 1, 0, 0, reason="via condor_rm (by user alice)"),
     "Job was aborted.\n\tvia condor_rm (by user alice)\n"),
    (LogEvent(ABORTED, 1, 0, 0), "Job was aborted.\n"),
    (LogEvent(SUSPENDED, 1, 0, 0, processes=3),
     "Job was suspended.\n\tNumber of processes actually suspended: 3\n"),
    (LogEvent(UNSUSPENDED, 1, 0, 0), "Job was unsuspended.\n"),
    (LogEvent(HELD, 1, 0, 0, reason="via condor_hold (by user alice)", hold_code=1),
     "Job was held.\n\tvia condor_hold (by user alice)\n\tCode 1 Subcode 0\n"),
    (LogEvent(HELD, 1, 0, 0, hold_code=26, hold_subcode=102),
     "Job was held.\n\tReason unspecified\n\tCode 26 Subcode 102\n"),
    (LogEvent(RELEASED, 1, 0, 0, reason="via condor_release (by user alice)"),
     "Job was released.\n\tvia condor_release (by user alice)\n"),
])
def test_short_events(event: LogEvent, body: str) -> None:
    assert format_event(event) == f"{event.code:03d} (001.000.000) 1970-01-01 00:00:00 {body}...\n"


def test_unknown_event_codes_are_refused() -> None:
    with pytest.raises(ValueError, match="event 028"):
        format_event(LogEvent(28, 1, 0, 0))


# -- HTCondor's own reader takes what we write


def test_htcondor_reads_our_events_back(tmp_path: Path) -> None:
    htcondor2 = pytest.importorskip("htcondor2")
    job = slot_job("/s", RequestMemory=64, CpusUsage=0.35, VacateReasonCode=1007,
                   RemoteUserCpu=65.0, BytesSent=17.0)
    done = finished(job, rss=5708, disk=45, seconds=5)
    log = tmp_path / "job.log"
    log.write_text(format_event(LogEvent(EVICTED, 1, 0, 0, reason="preempted", job=job))
                   + format_event(LogEvent(TERMINATED, 1, 0, 60, job=done)))
    evicted, terminated = (dict(e.items()) for e in htcondor2.JobEventLog(str(log)).events(0))
    assert (evicted["ReasonCode"], evicted["Reason"]) == (1007, "preempted")
    assert evicted["RunRemoteUsage"] == "Usr 0 00:01:05, Sys 0 00:00:00"
    assert evicted["SentBytes"] == 17.0
    assert {k: terminated[k] for k in ("CpusUsage", "RequestCpus", "Cpus", "DiskUsage", "Memory",
                                       "MemoryUsage", "TimeExecuteUsage", "TotalRemoteUsage")} == {
        "CpusUsage": 0.35, "RequestCpus": 1, "Cpus": 1, "DiskUsage": 45, "Memory": 128,
        "MemoryUsage": 6, "TimeExecuteUsage": 5,
        "TotalRemoteUsage": "Usr 0 00:01:05, Sys 0 00:00:00"}
