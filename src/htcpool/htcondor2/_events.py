"""Reading one event of a user log (HTCondor's text format) into the attributes htcondor2 gives it.

An event is a header ``NNN (CCC.PPP.SSS) YYYY-MM-DD HH:MM:SS text``, body lines
and a ``...`` line (docs/pool.md; htcpool writes them in ``schedd/eventlog.py``).
``parse_event`` turns the text of one into a ClassAd with the names HTCondor's
bindings use: every event has ``MyType``, ``EventTypeNumber``, ``Cluster``,
``Proc``, ``Subproc`` and ``EventTime``; the body adds, by event type:

* 000 submit: ``SubmitHost`` and ``Warnings``;
* 001 execute: ``ExecuteHost``, ``SlotName`` and ``ExecuteProps`` (the ``name = value`` lines);
* 004 evicted: ``Checkpointed``, the run usages and bytes, ``Reason``;
* 005 terminated: ``TerminatedNormally`` and ``ReturnValue`` or ``TerminatedBySignal``,
  run and total usages and bytes, and the resource table (``RUsage``, ``RequestR``, ``R``,
  ``AssignedR``; ``TimeExecuteUsage``, ``TimeSlotBusyUsage``);
* 006 image size: ``Size``, ``MemoryUsage``, ``ResidentSetSize``, ``ProportionalSetSize``;
* 009 aborted and 013 released: ``Reason``; 010 suspended: ``NumberOfPIDs``;
* 012 held: ``HoldReason``, ``HoldReasonCode``, ``HoldReasonSubCode``;
* the factory's events (proc -1, which leaves ``Proc`` out): 035 cluster submitted:
  ``SubmitHost`` and ``StructuredNotes`` (the one-line ClassAd); 036 cluster removed:
  ``NextProcId``, ``NextRow``, ``Completion`` and ``Notes``; 037 paused: ``Reason``,
  ``PauseCode``, ``HoldCode``; 038 resumed: ``Reason``.
"""

from __future__ import annotations

import re
from typing import Any

HEADER = re.compile(r"^(\d{3}) \((\d+)\.(-?\d+)\.(\d+)\) (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)"
                    r"(Z|[+-]\d\d:?\d\d)? ?(.*)$")
MY_TYPES = {0: "SubmitEvent", 1: "ExecuteEvent", 2: "ExecutableErrorEvent", 3: "CheckpointedEvent",
            4: "JobEvictedEvent", 5: "JobTerminatedEvent", 6: "JobImageSizeEvent",
            7: "ShadowExceptionEvent", 8: "GenericEvent", 9: "JobAbortedEvent",
            10: "JobSuspendedEvent", 11: "JobUnsuspendedEvent", 12: "JobHeldEvent",
            13: "JobReleaseEvent", 21: "RemoteErrorEvent", 22: "JobDisconnectedEvent",
            23: "JobReconnectedEvent", 24: "JobReconnectFailedEvent", 28: "JobAdInformationEvent",
            33: "AttributeUpdateEvent", 35: "ClusterSubmitEvent", 36: "ClusterRemoveEvent",
            37: "FactoryPausedEvent", 38: "FactoryResumedEvent"}
_COMPLETIONS = (("error", -1), ("complete", 1), ("paused", 2))
_USAGE = re.compile(r"^\s*(Usr \d+ \d\d:\d\d:\d\d, Sys \d+ \d\d:\d\d:\d\d)\s+-\s+(Run|Total) "
                    r"(Remote|Local) Usage")
_BYTES = re.compile(r"^\s*([\d.]+)\s+-\s+(Run|Total) Bytes (Sent By|Received By) Job")
_ROW = re.compile(r"^\s+(\w+)(?: \([^)]*\))?\s+:(.*)$")


class EventFormatError(ValueError):
    """Text that is not a user-log event."""


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return float(text)


def _table(lines: list[str], out: dict[str, Any]) -> None:
    """The resource table's rows: (column start, column end) from the heading's words."""
    heading = next((i for i, line in enumerate(lines) if "Resources :" in line), None)
    if heading is None:
        return
    head = lines[heading]
    columns = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", head.split(":", 1)[1])]
    offset = head.index(":") + 1
    for line in lines[heading + 1:]:
        row = _ROW.match(line)
        if row is None:
            break
        name, cells = row.group(1), line[line.index(":") + 1:]
        previous_end = 0
        for start, end, title in columns:
            cell = cells[previous_end:end].strip() if len(cells) >= previous_end else ""
            previous_end = end
            if not cell:
                continue
            _ = start, offset
            value = _number(cell) if re.fullmatch(r"-?[\d.]+", cell) else cell
            if name in ("TimeExecute", "TimeSlotBusy"):
                out[f"{name}{title}"] = value
            elif title == "Usage":
                out[f"{name}Usage"] = value
            elif title == "Request":
                out[f"Request{name}"] = value
            elif title == "Allocated":
                out[name] = value
            elif title == "Assigned":
                out[f"Assigned{name}"] = value


def _common(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        usage = _USAGE.match(line)
        if usage:
            out[f"{usage.group(2)}{usage.group(3)}Usage"] = usage.group(1)
            continue
        sent = _BYTES.match(line)
        if sent:
            key = ("Sent" if sent.group(3) == "Sent By" else "Received") + "Bytes"
            out[("Total" if sent.group(2) == "Total" else "") + key] = float(sent.group(1))


def _body(code: int, first: str, lines: list[str], out: dict[str, Any]) -> None:
    from htcpool.classad import ClassAd, ExprTree

    stripped = [line.strip() for line in lines]
    if code in MY_TYPES and code >= 35:
        _factory(code, first, stripped, out)
    elif code == 0:
        out["SubmitHost"] = first.removeprefix("Job submitted from host: ").strip()
        for line in stripped:
            if line.startswith("WARNING"):
                out["Warnings"] = line
    elif code == 1:
        out["ExecuteHost"] = first.removeprefix("Job executing on host: ").strip()
        props = ClassAd()
        for line in stripped:
            if line.startswith("SlotName:"):
                out["SlotName"] = line.split(":", 1)[1].strip()
            elif "=" in line:
                name, _, value = line.partition("=")
                props[name.strip()] = ExprTree(value.strip())
        if len(props):
            out["ExecuteProps"] = props
    elif code == 4:
        out["Checkpointed"] = any(s.startswith("(1)") and "checkpoint" in s.lower() for s in stripped)
        _common(lines, out)
        out["TerminatedAndRequeued"] = False
        out["TerminatedNormally"] = False
        for line in stripped:
            if line.startswith("Reason:"):
                out["Reason"] = line.split(":", 1)[1].strip()
    elif code == 5:
        _terminated(stripped, out)
        _common(lines, out)
        _table(lines, out)
    elif code == 6:
        out["Size"] = int(first.rsplit(":", 1)[1])
        for line in stripped:
            found = re.match(r"(-?\d+)\s+-\s+(\w+)", line)
            if found:
                out[found.group(2)] = int(found.group(1))
    elif code in (9, 13) and stripped:
        out["Reason"] = stripped[0]
    elif code == 10:
        found = re.search(r"suspended: (\d+)", " ".join(stripped))
        if found:
            out["NumberOfPIDs"] = int(found.group(1))
    elif code == 12:
        if stripped:
            out["HoldReason"] = stripped[0]
        found = re.search(r"Code (-?\d+) Subcode (-?\d+)", " ".join(stripped))
        if found:
            out["HoldReasonCode"], out["HoldReasonSubCode"] = int(found.group(1)), int(found.group(2))


def _factory(code: int, first: str, stripped: list[str], out: dict[str, Any]) -> None:
    """The factory's events (035 to 038), read as forgivingly as HTCondor reads them."""
    from htcpool.classad import parseOne

    lines = [line for line in stripped if line]
    if code == 35:
        out["SubmitHost"] = first.removeprefix("Cluster submitted from host: ").strip()
        if lines and lines[0].startswith("["):
            out["StructuredNotes"] = parseOne(lines[0])
    elif code == 36:
        progress = lines[0] if lines else ""
        found = re.match(r"Materialized (-?\d+) jobs from (-?\d+) items\.\s*(.*)", progress)
        out["NextProcId"], out["NextRow"] = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        rest = found.group(3).lower() if found else progress.lower()
        out["Completion"] = next((value for word, value in _COMPLETIONS if rest.startswith(word)), 0)
        error = re.match(r"error\s*(-?\d+)", rest)
        if error and int(error.group(1)) < 0:
            out["Completion"] = int(error.group(1))
        if len(lines) > 1:
            out["Notes"] = lines[1]
    elif code == 37:
        out["PauseCode"], out["HoldCode"] = 0, 0
        for line in lines:
            codes = re.findall(r"(Pause|Hold)Code (-?\d+)", line)
            for which, value in codes:
                out[f"{which}Code"] = int(value)
            if not codes and "Reason" not in out:
                out["Reason"] = line
    elif lines:
        out["Reason"] = lines[0]


def _terminated(stripped: list[str], out: dict[str, Any]) -> None:
    for line in stripped:
        normal = re.match(r"\(1\) Normal termination \(return value (-?\d+)\)", line)
        if normal:
            out["TerminatedNormally"] = True
            out["ReturnValue"] = int(normal.group(1))
        signal = re.match(r"\(0\) Abnormal termination \(signal (\d+)\)", line)
        if signal:
            out["TerminatedNormally"] = False
            out["TerminatedBySignal"] = int(signal.group(1))
        core = re.match(r"\(1\) Corefile in: (.*)", line)
        if core:
            out["CoreFile"] = core.group(1)


def parse_event(text: str) -> Any:
    """The ClassAd of one event (``text`` from its header to the line before ``...``)."""
    from htcpool.classad import ClassAd

    lines = text.rstrip("\n").split("\n")
    header = HEADER.match(lines[0])
    if header is None:
        raise EventFormatError(f"not an event header: {lines[0]!r}")
    code = int(header.group(1))
    when = f"{header.group(5)}T{header.group(6)}" + ("Z" if header.group(7) == "Z" else "")
    out: dict[str, Any] = {"MyType": MY_TYPES.get(code, "GenericEvent"), "EventTypeNumber": code,
                           "Cluster": int(header.group(2)), "Proc": int(header.group(3)),
                           "Subproc": int(header.group(4)), "EventTime": when}
    if out["Proc"] < 0:  # a cluster's event (HTCondor's bindings leave Proc out)
        del out["Proc"]
    _body(code, header.group(8), lines[1:], out)
    return ClassAd(out)
