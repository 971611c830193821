"""``condor_q -userlog FILE``: the jobs a user log tells of, rebuilt as job ads.

As HTCondor's condor_q does (its ``userlog_to_classads``), a job enters with its submit event
(000) and each later event of it changes its ad; events of jobs whose submit is not in the log,
and the factories' cluster events, are passed over:

* 000 submit: ``ClusterId``, ``ProcId``, ``QDate`` and ``EnteredCurrentStatus`` (the event's
  time), ``GlobalJobId`` (``localhost#C.P#T``), ``SubmitHost``, ``UserLog`` (the file),
  ``JobStatus`` Idle, ``Owner`` (the user running the tool: the log gives no owner), ``Cmd``
  ``???``, and zeros for the counters and CPU times;
* 001 execute: Running, ``JobCurrentStartDate``, ``NumJobStarts`` + 1, ``RemoteHost`` and
  ``StartdIpAddr``;
* 004 evicted: Idle, ``LastVacateTime``, ``LastVacateReason``;
* 005 terminated: Completed, ``CompletionDate``, ``ExitBySignal`` with ``ExitCode`` or
  ``ExitSignal``, ``RemoteHost`` becomes ``LastRemoteHost``, the run's and the total CPU times,
  and the run's wall-clock time (since the execute event) added to ``RemoteWallClockTime``;
* 006 image size: ``ImageSize``, ``ResidentSetSize``, ``ProportionalSetSize``;
* 009 aborted: Removed and ``RemoveReason``; 010/011: Suspended (``TotalSuspensions`` + 1,
  ``LastSuspensionTime``) and Running again; 012 held: Held, ``HoldReason``,
  ``HoldReasonCode``, ``HoldReasonSubCode`` (``NumSystemHolds`` + 1 unless code 1, the user's
  request); 013 released: Idle and ``ReleaseReason``.

Each status change keeps the former status in ``LastJobStatus`` and sets
``EnteredCurrentStatus``. Event times are read in ``zone`` (seconds east of UTC), the zone the
log was written in.
"""

from __future__ import annotations

import calendar
import re
import time

from htcpool.classad import ClassAd
from htcpool.cli.userlog import Event, parse_events

IDLE, RUNNING, REMOVED, COMPLETED, HELD, SUSPENDED = 1, 2, 3, 4, 5, 7
_TIME = re.compile(r"\) (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_USAGE = re.compile(r"Usr (\d+) (\d\d):(\d\d):(\d\d), Sys (\d+) (\d\d):(\d\d):(\d\d)\s+-\s+(Run|Total) (Remote|Local)")
_ZEROS = {"JobPrio": 0, "ImageSize": 0, "LastSuspensionTime": 0, "CompletionDate": 0, "NumJobStarts": 0,
          "TotalSuspensions": 0, "NumSystemHolds": 0, "LocalUserCpu": 0.0, "RemoteUserCpu": 0.0,
          "LocalSysCpu": 0.0, "RemoteSysCpu": 0.0, "RemoteWallClockTime": 0.0}


def _when(e: Event, zone: int) -> int:
    found = _TIME.search(e.text)
    if found is None:
        return 0
    return calendar.timegm(time.strptime(found.group(1), "%Y-%m-%d %H:%M:%S")) - zone


def _lines(e: Event) -> tuple[str, list[str]]:
    """The header's text after the time, and the body's lines, stripped (no ``...``)."""
    head, *body = e.text.rstrip("\n").split("\n")
    return head.split(" ", 4)[4] if head.count(" ") >= 4 else "", [line.strip() for line in body[:-1]]


def _status(ad: ClassAd, status: int, when: int) -> None:
    ad["LastJobStatus"] = ad.get("JobStatus", 0)
    ad["JobStatus"] = status
    ad["EnteredCurrentStatus"] = when


def _count(ad: ClassAd, attr: str) -> None:
    value = ad.get(attr)
    ad[attr] = value + 1 if isinstance(value, int) and not isinstance(value, bool) else 1


def _submitted(e: Event, when: int, path: str, owner: str, now: int) -> ClassAd:
    first, _ = _lines(e)
    ad = ClassAd({"MyType": "Job", "TargetType": "Machine", "ClusterId": e.cluster, "ProcId": e.proc,
                  "UserLog": path, "QDate": when, "EnteredCurrentStatus": when,
                  "GlobalJobId": f"localhost#{e.cluster}.{e.proc}#{when}", "ServerTime": now,
                  "SubmitHost": first.removeprefix("Job submitted from host: ").strip(),
                  "JobStatus": IDLE, "LastJobStatus": 0, "Owner": owner or "???", "Cmd": "???"})
    ad.update(_ZEROS)
    return ad


def _terminated(ad: ClassAd, body: list[str], when: int) -> None:
    _status(ad, COMPLETED, when)
    if "RemoteHost" in ad:
        ad["LastRemoteHost"] = ad["RemoteHost"]
        del ad["RemoteHost"]
    ad["CompletionDate"] = when
    start = ad.get("JobCurrentStartDate")
    if isinstance(start, int):
        ad["LastRemoteWallClockTime"] = float(when - start)
        total = ad.get("RemoteWallClockTime")
        ad["RemoteWallClockTime"] = (total if isinstance(total, float) else 0.0) + float(when - start)
    for line in body:
        normal = re.match(r"\(1\) Normal termination \(return value (-?\d+)\)", line)
        signal = re.match(r"\(0\) Abnormal termination \(signal (\d+)\)", line)
        if normal:
            ad["ExitBySignal"], ad["ExitCode"] = False, int(normal.group(1))
        elif signal:
            ad["ExitBySignal"], ad["ExitSignal"] = True, int(signal.group(1))
        usage = _USAGE.search(line)
        if usage:
            g = usage.groups()
            user = int(g[0]) * 86400 + int(g[1]) * 3600 + int(g[2]) * 60 + int(g[3])
            system = int(g[4]) * 86400 + int(g[5]) * 3600 + int(g[6]) * 60 + int(g[7])
            prefix = "Last" if g[8] == "Run" else ""
            ad[f"{prefix}{g[9]}UserCpu"], ad[f"{prefix}{g[9]}SysCpu"] = float(user), float(system)


def _held(ad: ClassAd, body: list[str], when: int) -> None:
    was = ad.get("JobStatus")
    _status(ad, HELD, when)
    reason = body[0] if body else ""
    if was != IDLE:
        ad["LastVacateTime"] = when
        if reason:
            ad["LastVacateReason"] = reason
    ad["HoldReason"] = reason
    codes = re.search(r"Code (-?\d+) Subcode (-?\d+)", " ".join(body))
    code, subcode = (int(codes.group(1)), int(codes.group(2))) if codes else (0, 0)
    ad["HoldReasonCode"], ad["HoldReasonSubCode"] = code, subcode
    if code != 1:
        _count(ad, "NumSystemHolds")


def _apply(ad: ClassAd, e: Event, when: int) -> None:
    first, body = _lines(e)
    if e.code == 1:
        _status(ad, RUNNING, when)
        ad["JobCurrentStartDate"] = when
        _count(ad, "NumJobStarts")
        host = first.removeprefix("Job executing on host: ").strip()
        ad["StartdIpAddr"], ad["RemoteHost"] = host, host
    elif e.code == 4:
        _status(ad, IDLE, when)
        ad["LastVacateTime"] = when
        reason = next((line.split(":", 1)[1].strip() for line in body if line.startswith("Reason:")), "")
        if reason:
            ad["LastVacateReason"] = reason
    elif e.code == 5:
        _terminated(ad, body, when)
    elif e.code == 6:
        size = re.search(r"(\d+)\s*$", first)
        ad["ImageSize"] = int(size.group(1)) if size else 0
        for line in body:
            found = re.match(r"(-?\d+)\s+-\s+(ResidentSetSize|ProportionalSetSize)", line)
            if found:
                ad[found.group(2)] = int(found.group(1))
    elif e.code == 9:
        _status(ad, REMOVED, when)
        if body and body[0]:
            ad["RemoveReason"] = body[0]
    elif e.code in (10, 11):
        _status(ad, SUSPENDED if e.code == 10 else RUNNING, when)
        if e.code == 10:
            ad["LastSuspensionTime"] = when
            _count(ad, "TotalSuspensions")
    elif e.code == 12:
        _held(ad, body, when)
    elif e.code == 13:
        _status(ad, IDLE, when)
        if body and body[0]:
            ad["ReleaseReason"] = body[0]


def jobs_from_userlog(text: str, *, path: str, owner: str, zone: int, now: int) -> list[ClassAd]:
    """The job ads the events of ``text`` (the log at ``path``) make, in the order submitted."""
    jobs: dict[tuple[int, int], ClassAd] = {}
    for event in parse_events(text)[0]:
        key = (event.cluster, event.proc)
        when = _when(event, zone)
        if event.code == 0 and event.proc >= 0:
            jobs[key] = _submitted(event, when, path, owner, now)
        elif key in jobs:
            _apply(jobs[key], event, when)
    return list(jobs.values())


__all__ = ["jobs_from_userlog"]
