"""User logs: HTCondor's own ``JobEventLog`` reads the logs htcpool writes, and htcpool's
``JobEventLog`` reads them into the same events; following a log that grows."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from htcpool import htcondor2
from htcpool.classad import ClassAd
from htcpool.schedd.eventlog import LogEvent, format_event
from tests.bindings.reference import plain, real_htcondor2, requires_reference

JOB = ClassAd({"RemoteUserCpu": 1.5, "RemoteSysCpu": 0.25, "BytesSent": 10.0, "BytesRecvd": 20.0,
               "RequestCpus": 1, "CpusProvisioned": 1, "RequestMemory": 128, "MemoryProvisioned": 128,
               "MemoryUsage": 3, "RequestDisk": 100, "DiskProvisioned": 200, "DiskUsage": 5,
               "CondorScratchDir": "/tmp/x", "ActivationExecutionDuration": 2, "ActivationDuration": 3})
EVENTS = [
    LogEvent(0, 12, 0, 1700000000, host="<127.0.0.1:9618?addrs=x>"),
    LogEvent(1, 12, 0, 1700000001, host="<127.0.0.1:1234>", slot_name="slot1_1@h", job=JOB),
    LogEvent(6, 12, 0, 1700000002, image_size=1000, memory_usage=3, resident_set_size=2000),
    LogEvent(10, 12, 0, 1700000003, processes=2),
    LogEvent(11, 12, 0, 1700000004),
    LogEvent(12, 12, 0, 1700000005, reason="via condor_hold (by user x)", hold_code=1, hold_subcode=0),
    LogEvent(13, 12, 0, 1700000006, reason="via condor_release (by user x)"),
    LogEvent(4, 12, 0, 1700000007, job=JOB, reason="vacated"),
    LogEvent(5, 12, 0, 1700000008, return_value=3, job=JOB),
    LogEvent(5, 12, 1, 1700000009, signal=9, job=JOB),
    LogEvent(9, 12, 2, 1700000010, reason="via condor_rm (by user x)"),
    LogEvent(0, 12, 3, 1700000000, host="h", warnings=("w1",)),
    # a factory's events for its cluster (proc -1)
    LogEvent(35, 13, -1, 1700000011, host="<127.0.0.1:9618>", job=ClassAd({"JobBatchName": "b"})),
    LogEvent(35, 14, -1, 1700000011, host="h"),
    LogEvent(37, 13, -1, 1700000012, reason="via condor_hold (by user x)", pause_code=1, hold_code=1),
    LogEvent(37, 13, -1, 1700000013, pause_code=1),
    LogEvent(38, 13, -1, 1700000014, reason="via condor_release (by user x)"),
    LogEvent(38, 13, -1, 1700000015),
    LogEvent(36, 13, -1, 1700000016, next_proc=6, next_row=3, completion=1),
    LogEvent(36, 14, -1, 1700000017, next_proc=2, next_row=1, completion=2, reason="held by x"),
    LogEvent(36, 15, -1, 1700000018, completion=-1),
]


def write_log(path: Path, events: list[LogEvent]) -> None:
    with path.open("a") as f:
        f.write("".join(format_event(e) for e in events))


@requires_reference
def test_htcondor_reads_htcpool_logs_and_htcpool_reads_them_alike(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    write_log(log, EVENTS)
    theirs = list(real_htcondor2.JobEventLog(str(log)).events(0))
    mine = list(htcondor2.JobEventLog(str(log)).events(0))
    assert [int(e.type) for e in theirs] == [e.code for e in EVENTS]
    terminated = [e for e in theirs if e.type == real_htcondor2.JobEventType.JOB_TERMINATED]
    assert terminated[0]["ReturnValue"] == 3 and terminated[0]["TerminatedNormally"] is True
    assert terminated[1]["TerminatedBySignal"] == 9
    assert len(mine) == len(theirs)
    for ours, ref in zip(mine, theirs, strict=True):
        assert (int(ours.type), ours.cluster, ours.proc, ours.timestamp) == \
               (int(ref.type), ref.cluster, ref.proc, ref.timestamp)
        assert plain(dict(ours)) == plain(dict(ref)), ref.type


def test_events_of_a_growing_log_are_given_once_complete(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("")
    jel = htcondor2.JobEventLog(str(log))
    assert list(jel.events(stop_after=0)) == []
    whole = format_event(EVENTS[0])
    log.write_text(whole[:-4])  # the event without its closing line: not yet an event
    assert list(jel.events(stop_after=0)) == []
    log.write_text(whole)
    assert [e.type for e in jel.events(stop_after=0)] == [htcondor2.JobEventType.SUBMIT]

    def later() -> None:
        time.sleep(0.3)
        write_log(log, [EVENTS[8]])

    writer = threading.Thread(target=later)
    writer.start()
    started = time.monotonic()
    got = next(jel.events(stop_after=10))
    writer.join()
    assert got.type == htcondor2.JobEventType.JOB_TERMINATED and got["ReturnValue"] == 3
    assert time.monotonic() - started < 5
    started = time.monotonic()
    assert list(jel.events(stop_after=1)) == []
    assert 0.9 <= time.monotonic() - started < 3


def test_a_missing_log_or_a_garbled_event_is_an_htcondor_exception(tmp_path: Path) -> None:
    with pytest.raises(htcondor2.HTCondorException, match="cannot open"):
        htcondor2.JobEventLog(str(tmp_path / "nope.log"))
    bad = tmp_path / "bad.log"
    bad.write_text("this is not an event\n...\n")
    with pytest.raises(htcondor2.HTCondorException, match="not an event header"):
        next(htcondor2.JobEventLog(str(bad)).events(0))
