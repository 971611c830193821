"""The job event log (user log) in HTCondor's text format.

Each event is a header ``NNN (CCC.PPP.SSS) YYYY-MM-DD HH:MM:SS `` followed by
its body and a line ``...``; cluster, proc and subproc are zero-padded to
three digits. Times are printed in the zone given (seconds east of UTC).
``format_event`` renders one ``LogEvent``; the queue produces the events, a
driver appends their text to the job's ``UserLog`` file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

SUBMIT, EXECUTE, EVICTED, TERMINATED, ABORTED, SUSPENDED, UNSUSPENDED, HELD, RELEASED = (
    0, 1, 4, 5, 9, 10, 11, 12, 13)


@dataclass(frozen=True)
class LogEvent:
    code: int
    cluster: int
    proc: int
    time: float
    host: str = ""
    reason: str = ""
    hold_code: int = 0
    hold_subcode: int = 0
    return_value: int | None = 0
    signal: int | None = None
    processes: int = 1
    warnings: tuple[str, ...] = ()
    slot_name: str = ""
    properties: dict[str, str] = field(default_factory=dict)


def _usage() -> list[str]:
    return ["\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage",
            "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage"]


def _body(e: LogEvent) -> list[str]:
    if e.code == SUBMIT:
        lines = [f"Job submitted from host: {e.host}"]
        if e.warnings:
            lines.append("\tWARNING: Committed job submission into the queue with the following "
                         "warning: " + "; ".join(e.warnings))
        return lines
    if e.code == EXECUTE:
        lines = [f"Job executing on host: {e.host}"]
        if e.slot_name:
            lines.append(f"\tSlotName: {e.slot_name}")
        lines += [f"\t{k} = {e.properties[k]}" for k in sorted(e.properties)]
        return lines
    if e.code == EVICTED:
        return ["Job was evicted.", "\t(0) CPU times", *_usage(),
                "\t0  -  Run Bytes Sent By Job", "\t0  -  Run Bytes Received By Job"] + (
            [f"\tReason: {e.reason}"] if e.reason else [])
    if e.code == TERMINATED:
        if e.signal is not None:
            status = [f"\t(0) Abnormal termination (signal {e.signal})", "\t(0) No core file"]
        else:
            status = [f"\t(1) Normal termination (return value {e.return_value or 0})"]
        totals = ["\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage",
                  "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage"]
        sizes = [f"\t0  -  {w} Bytes {d} By Job" for w in ("Run", "Total") for d in ("Sent", "Received")]
        return ["Job terminated.", *status, *_usage(), *totals, *sizes]
    if e.code == ABORTED:
        return ["Job was aborted.", *([f"\t{e.reason}"] if e.reason else [])]
    if e.code == SUSPENDED:
        return ["Job was suspended.", f"\tNumber of processes actually suspended: {e.processes}"]
    if e.code == UNSUSPENDED:
        return ["Job was unsuspended."]
    if e.code == HELD:
        return ["Job was held.", f"\t{e.reason or 'Reason unspecified'}",
                f"\tCode {e.hold_code} Subcode {e.hold_subcode}"]
    if e.code == RELEASED:
        return ["Job was released.", *([f"\t{e.reason}"] if e.reason else [])]
    raise ValueError(f"event {e.code:03d} is not written by htcpool")


def format_event(e: LogEvent, zone: int = 0) -> str:
    when = datetime.fromtimestamp(int(e.time), UTC) + timedelta(seconds=zone)
    body = _body(e)
    header = f"{e.code:03d} ({e.cluster:03d}.{e.proc:03d}.000) {when:%Y-%m-%d %H:%M:%S} "
    return header + "\n".join(body) + "\n...\n"
