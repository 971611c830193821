"""condor_q -userlog: jobs rebuilt from a user log (``cli/formats/userlog_jobs.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.cli import q
from htcpool.cli.formats.userlog_jobs import jobs_from_userlog
from htcpool.schedd.eventlog import LogEvent, format_event

T = 1_700_000_000
ZONE = 3600  # the log was written an hour east of UTC
EVENTS = [
    LogEvent(35, 7, -1, T, host="<h:1>"),
    LogEvent(0, 7, 0, T, host="<h:1>"),
    LogEvent(0, 7, 1, T + 1, host="<h:1>"),
    LogEvent(1, 7, 0, T + 10, host="<ep:2>"),
    LogEvent(12, 7, 0, T + 20, reason="too big", hold_code=26, hold_subcode=3),
    LogEvent(13, 7, 0, T + 30, reason="via condor_release (by user alice)"),
    LogEvent(1, 7, 0, T + 40, host="<ep:3>"),
    LogEvent(6, 7, 0, T + 45, image_size=2048, resident_set_size=1500),
    LogEvent(5, 7, 0, T + 100, return_value=3),
    LogEvent(9, 7, 1, T + 50, reason="via condor_rm (by user alice)"),
    LogEvent(5, 8, 0, T + 60),  # its submit is not in the log: passed over
]


def log_text() -> str:
    return "".join(format_event(e, ZONE) for e in EVENTS)


def test_each_submitted_job_is_an_ad_that_its_later_events_change() -> None:
    first, second = jobs_from_userlog(log_text(), path="/x/job.log", owner="alice", zone=ZONE, now=T + 200)
    assert (first["ClusterId"], first["ProcId"], first["QDate"], first["Owner"], first["UserLog"]) == \
           (7, 0, T, "alice", "/x/job.log")
    assert (first["JobStatus"], first["LastJobStatus"], first["EnteredCurrentStatus"]) == (4, 2, T + 100)
    assert (first["ExitBySignal"], first["ExitCode"], first["CompletionDate"]) == (False, 3, T + 100)
    assert (first["NumJobStarts"], first["LastRemoteHost"], "RemoteHost" in first) == (2, "<ep:3>", False)
    assert (first["HoldReason"], first["HoldReasonCode"], first["HoldReasonSubCode"]) == ("too big", 26, 3)
    assert (first["NumSystemHolds"], first["ReleaseReason"], first["ImageSize"]) == \
           (1, "via condor_release (by user alice)", 2048)
    assert first["RemoteWallClockTime"] == 60.0 and first["GlobalJobId"] == f"localhost#7.0#{T}"
    assert (second["JobStatus"], second["RemoveReason"]) == (3, "via condor_rm (by user alice)")


def test_condor_q_userlog_prints_the_jobs_of_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.log"
    path.write_text(log_text())
    assert q.main(["-userlog", str(path), "-af", "ClusterId", "ProcId", "JobStatus"]) == 0
    assert capsys.readouterr().out == "7 0 4\n7 1 3\n"
    assert q.main(["-userlog", str(path), "-nobatch", "-constraint", "JobStatus == 3"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[2].startswith(f"-- Userlog: {path} @ ") and lines[3].startswith(" ID ")
    assert lines[4].split()[:2] == ["7.1", q.user()] and lines[5] == ""
    assert q.main(["-userlog", str(tmp_path / "none.log")]) != 0
    assert "cannot read -userlog file" in capsys.readouterr().err
