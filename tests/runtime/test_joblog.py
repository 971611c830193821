"""The schedd's user log writer: many events, each log opened once, order kept, failures said once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.runtime.joblog import UserLogWriter
from htcpool.schedd import eventlog as ev


def job(proc: int, log: Path) -> ClassAd:
    return ClassAd({"ClusterId": 3, "ProcId": proc, "Owner": "alice", "UserLog": str(log)})


def test_events_of_many_jobs_go_to_their_logs_in_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    jobs = {proc: job(proc, a if proc % 2 == 0 else b) for proc in range(4)}
    nolog = ClassAd({"ClusterId": 3, "ProcId": 9})
    events = [(ev.LogEvent(ev.SUBMIT, 3, proc, 1_700_000_000.0 + proc, host="<127.0.0.1:9618>"), jobs[proc])
              for proc in range(4)]
    events.append((ev.LogEvent(ev.SUBMIT, 3, 9, 1_700_000_000.0), nolog))
    UserLogWriter(0).write_all(events)
    for path, procs in ((a, (0, 2)), (b, (1, 3))):
        text = path.read_text()
        ids = [line.split()[1] for line in text.splitlines() if line.startswith("000 (")]
        assert ids == [f"(003.{proc:03d}.000)" for proc in procs], text


def test_a_job_that_left_writes_with_its_remembered_ad(tmp_path: Path) -> None:
    writer = UserLogWriter(0)
    log = tmp_path / "gone.log"
    writer.remember(job(1, log))
    writer.write(ev.LogEvent(ev.SUBMIT, 3, 1, 1_700_000_000.0, host="<127.0.0.1:9618>"), None)
    assert "(003.001.000)" in log.read_text()


def test_an_unwritable_log_is_reported_once_and_others_still_written(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good, bad = tmp_path / "good.log", tmp_path / "missing" / "bad.log"
    events = [(ev.LogEvent(ev.SUBMIT, 3, proc, 1_700_000_000.0, host="<127.0.0.1:9618>"),
               job(proc, bad if proc < 2 else good)) for proc in range(3)]
    writer = UserLogWriter(0)
    with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
        writer.write_all(events)
        writer.write_all(events[:1])
    assert [r.getMessage() for r in caplog.records].count(f"cannot write the user log {bad}: "
                                                         f"[Errno 2] No such file or directory: '{bad}'") == 1
    assert "(003.002.000)" in good.read_text()


def test_the_materialize_log_gets_the_factories_events_and_nothing_else(tmp_path: Path, caplog) -> None:
    from htcpool.runtime.joblog import MaterializeLog

    made = ClassAd({"ClusterId": 3, "ProcId": 0, "JobMaterializeNextProcId": 1})  # no UserLog: logged all the same
    plain = ClassAd({"ClusterId": 4, "ProcId": 0})
    path = tmp_path / "MaterializeLog"
    MaterializeLog(str(path), 0).write([
        (ev.LogEvent(ev.CLUSTER_SUBMIT, 3, -1, 1_700_000_000.0, host="<h>", job=made), None),
        (ev.LogEvent(ev.SUBMIT, 3, 0, 1_700_000_000.0, host="<h>"), made),
        (ev.LogEvent(ev.SUBMIT, 4, 0, 1_700_000_000.0, host="<h>"), plain),
        (ev.LogEvent(ev.HELD, 3, 0, 1_700_000_001.0), made),
        (ev.LogEvent(ev.CLUSTER_REMOVE, 3, -1, 1_700_000_002.0, next_proc=1, next_row=1, completion=1), None)])
    headers = [line.split(" ")[:2] for line in path.read_text().splitlines() if line[:1].isdigit()]
    assert headers == [["035", "(003.-01.000)"], ["000", "(003.000.000)"], ["036", "(003.-01.000)"]]
    with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
        bad = MaterializeLog(str(tmp_path / "no" / "such" / "dir"), 0)
        for _ in range(2):
            bad.write([(ev.LogEvent(ev.CLUSTER_SUBMIT, 3, -1, 1_700_000_000.0, host="<h>"), None)])
    assert sum("SCHEDD_MATERIALIZE_LOG" in r.getMessage() for r in caplog.records) == 1
