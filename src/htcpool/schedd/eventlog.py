"""The job event log (user log) in the text HTCondor 25 writes.

An event is a header ``NNN (CCC.PPP.SSS) YYYY-MM-DD HH:MM:SS `` (event code,
then cluster, proc and subproc zero-padded to three digits, then the time in
the zone given as seconds east of UTC), a body, and a line ``...``.
``format_event`` renders one ``LogEvent``; the queue makes the events and a
driver appends their text to the file named by the job's ``UserLog``.

Most of a body comes from the event's own fields. When the event carries the
job ad (``LogEvent.job``, evaluated at the event's time) the parts HTCondor's
shadow takes from the job are read from it:

* 001 (execute), when ``properties`` is empty: ``CondorScratchDir`` and, for
  each provisioned resource ``R``, ``RProvisioned`` printed as ``R``. The
  resources are those named by ``ProvisionedResources``, else Cpus, Disk,
  GPUs and Memory. Lines are sorted by name ignoring case.
* 004 (evicted): the run's CPU times (``RemoteUserCpu``, ``RemoteSysCpu``),
  bytes (``BytesSent``, ``BytesRecvd``), ``VacateReasonCode`` and
  ``VacateReasonSubCode`` (unless the event's ``hold_code`` is set), and the
  resource table.
* 005 (terminated): run CPU times as for 004; total CPU times from
  ``CumulativeRemoteUserCpu`` / ``CumulativeRemoteSysCpu`` (never less than
  the run's); run and total bytes both from ``BytesSent`` / ``BytesRecvd``;
  then the resource table.

The resource table has one row per resource with any of ``RUsage``,
``RequestR`` or ``RProvisioned`` (the Usage, Request and Allocated columns;
``AssignedR`` adds an Assigned column), then ``TimeExecute`` from
``ActivationExecutionDuration`` and ``TimeSlotBusy`` from
``ActivationDuration``. A value that is missing or not a number leaves its
cell blank (ERROR prints ``error``, booleans ``true``/``false``); a row with
no values is left out. Reals with a fraction print as ``%.2f`` and
push the whole numbers of their column three places left to line up; columns
are at least 8 wide (Allocated 9), and a line with no Assigned value ends
in a space, as HTCondor's ``formatUsageAd`` prints them. Local usage is always zero: htcpool
has no shadow whose own CPU time could be charged.

A late-materialization factory writes four events of its own, for the cluster (proc -1, so the
header reads ``CCC.-01.000``), as HTCondor's schedd does: 035 (cluster submitted: the host, then
the cluster's ``JobBatchName`` and ``DAGNodeName`` as a one-line ClassAd when set), 036 (cluster
removed: how many jobs were made from how many items, then ``Complete``, ``Incomplete``,
``Paused`` or ``Error N``, then the pause reason when there is one), 037 (materialization paused:
the reason, ``PauseCode`` and, for a hold, ``HoldCode``) and 038 (materialization resumed: the
reason).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, Value, fixed_clock
from htcpool.classad.unparse import unparse, unparse_old

SUBMIT, EXECUTE, EVICTED, TERMINATED, IMAGE_SIZE = 0, 1, 4, 5, 6
ABORTED, SUSPENDED, UNSUSPENDED, HELD, RELEASED = 9, 10, 11, 12, 13
CLUSTER_SUBMIT, CLUSTER_REMOVE, FACTORY_PAUSED, FACTORY_RESUMED = 35, 36, 37, 38
#: the ``Completion`` of a cluster-removed event (HTCondor's ``ClusterRemoveEvent::CompletionCode``)
COMPLETION_ERROR, COMPLETION_INCOMPLETE, COMPLETION_COMPLETE, COMPLETION_PAUSED = -1, 0, 1, 2
#: attributes of the cluster a cluster-submitted event carries
CLUSTER_NOTES = ("DAGNodeName", "JobBatchName")

DEFAULT_RESOURCES = ("Cpus", "Disk", "GPUs", "Memory")


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One job event. ``job`` is the job ad as it stands at ``time``, when known."""

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
    job: ClassAd | None = None
    image_size: int = 0  # KiB
    memory_usage: int = 0  # MB
    resident_set_size: int = 0  # KiB
    next_proc: int = 0  # 036: jobs materialized
    next_row: int = 0  # 036: items used
    completion: int = COMPLETION_INCOMPLETE  # 036
    pause_code: int = 0  # 037: the factory's JobMaterializePaused


#: each field's slot setter, in field order (a frozen dataclass's ``__init__`` sets every field
#: through ``object.__setattr__``, which looks each name up again: twice the time of these)
_PUT = tuple((name, getattr(LogEvent, name).__set__) for name in LogEvent.__slots__)
_PUT_PROC = dict(_PUT)["proc"]
_PUT_PROPERTIES = dict(_PUT)["properties"]


def like(template: LogEvent) -> Callable[[int], LogEvent]:
    """A maker of events equal to ``template`` but for their proc, each with a ``properties``
    table of its own: a cluster's submit events, one per job, at half the cost of building each."""
    values = tuple((put, getattr(template, name)) for name, put in _PUT if name not in ("proc", "properties"))
    properties = template.properties
    new = object.__new__

    def make(proc: int) -> LogEvent:
        event = new(LogEvent)
        for put, value in values:
            put(event, value)
        _PUT_PROC(event, proc)
        _PUT_PROPERTIES(event, dict(properties))
        return event
    return make


Lookup = Callable[[str], Any]


def _reader(e: LogEvent) -> Lookup:
    """Evaluates attributes of the event's job ad with the clock stopped at the event."""
    job = e.job
    if job is None:
        return lambda attr: Value.Undefined
    context = EvalContext(clock=fixed_clock(e.time))

    def get(attr: str) -> Any:
        try:
            return job.evaluate(attr, context)
        except ClassAdError:
            return Value.Error
    return get


def _resources(get: Lookup) -> list[str]:
    listed = get("ProvisionedResources")
    names = re.split(r"[\s,]+", listed) if isinstance(listed, str) else DEFAULT_RESOURCES
    seen: dict[str, str] = {}
    for name in names:
        if name and name.lower() not in seen:
            seen[name.lower()] = name[0].upper() + name[1:]
    return list(seen.values())


def _number(value: Any) -> float | None:
    """A numeric value (booleans count as 0 and 1, as HTCondor's lookups take them)."""
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _property_text(value: Any) -> str | None:
    if isinstance(value, (bool, int, float, str)):
        return unparse_old(value)
    return None


def _execute_properties(get: Lookup) -> dict[str, str]:
    """What the shadow copies from the starter: the scratch directory and the slot's resources."""
    scratch = get("CondorScratchDir")
    found = {"CondorScratchDir": unparse_old(scratch) if isinstance(scratch, str) else None}
    for name in _resources(get):
        found[name] = _property_text(get(f"{name}Provisioned"))
    return {k: v for k, v in found.items() if v is not None}


# -- CPU times and bytes

def _cpu_line(user: float, system: float, label: str) -> str:
    def dhms(seconds: float) -> str:
        s = int(seconds)
        return f"{s // 86400} {s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"\t\tUsr {dhms(user)}, Sys {dhms(system)}  -  {label}"


def _amount(get: Lookup, attr: str) -> float:
    """A non-negative number from the job (seconds or bytes); 0 when missing."""
    value = _number(get(attr))
    return value if value is not None and value > 0 else 0.0


def _bytes_line(amount: float, which: str, direction: str) -> str:
    return f"\t{amount:.0f}  -  {which} Bytes {direction} By Job"


# -- the resource table

_USE, _REQUEST, _ALLOCATED, _ASSIGNED = range(4)
_LABEL_UNITS = {"Memory": " (MB)", "Disk": " (KB)", "Gpus": " (Average)", "GpusMemory": " (MB)",
                "TimeExecute": " (s)", "TimeSlotBusy": " (s)"}


def _cell(value: Any) -> tuple[str, bool] | None:
    """A table cell and whether it shows a fraction; None leaves the cell blank."""
    if value is Value.Error:
        return "error", False
    if isinstance(value, bool):
        return ("true" if value else "false"), False
    if isinstance(value, int):
        return str(value), False
    if isinstance(value, float) and math.isfinite(value):
        fraction, whole = math.modf(value)
        if fraction > 0:
            return "%.2f" % value, True
        return str(int(whole)), False
    return None


def _whole(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def _usage_table(get: Lookup) -> list[str]:
    rows: dict[str, list[str]] = {}  # resource -> [use, request, allocated, assigned]
    fractional = [False] * 4

    def put(name: str, column: int, cell: tuple[str, bool] | None) -> None:
        if cell is not None:
            rows.setdefault(name, ["", "", "", ""])[column] = cell[0]
            fractional[column] |= cell[1]

    for name in _resources(get):
        put(name, _ALLOCATED, _cell(get(f"{name}Provisioned")))
        put(name, _REQUEST, _cell(get(f"Request{name}")))
        put(name, _USE, _cell(get(f"{name}Usage")))
        assigned = get(f"Assigned{name}")  # HTCondor copies the (literal) expression as is
        if assigned is not Value.Undefined:
            put(name, _ASSIGNED, (unparse_old(assigned), False))
    put("TimeExecute", _USE, _cell(_whole(get("ActivationExecutionDuration"))))
    put("TimeSlotBusy", _USE, _cell(_whole(get("ActivationDuration"))))
    if not rows:
        return []

    for cells in rows.values():
        for column, padded in enumerate(fractional):
            if padded and cells[column].isascii() and cells[column].isdigit():
                cells[column] += "   "
    use_w, request_w, allocated_w, assigned_w = (
        max([minimum, *(len(cells[column]) for cells in rows.values())])
        for column, minimum in ((_USE, 8), (_REQUEST, 8), (_ALLOCATED, 0), (_ASSIGNED, 0)))
    # HTCondor sizes the first column with sizeof("Memory (MB)"), which counts the final NUL.
    name_w = max([len("Memory (MB)") + 1, *map(len, rows)]) + 8
    lines = [f"\tPartitionable Resources : {'Usage':>{use_w}} {'Request':>{request_w}} "
             f"{'Allocated' if allocated_w else '':>{max(allocated_w, 9)}} "
             f"{'Assigned' if assigned_w else ''}"]
    for name in sorted(rows, key=str.lower):
        use, request, allocated, assigned = rows[name]
        lines.append(f"\t   {name + _LABEL_UNITS.get(name, ''):<{name_w}} : {use:>{use_w}} "
                     f"{request:>{request_w}} {allocated:>{max(allocated_w, 9)}} {assigned}")
    return lines


# -- bodies

def _evicted(e: LogEvent, get: Lookup) -> list[str]:
    code, subcode = e.hold_code, e.hold_subcode
    if not code:
        code = _whole(get("VacateReasonCode")) or 0
        subcode = _whole(get("VacateReasonSubCode")) or 0
    head = "Job was evicted." + (f" Code {code} Subcode {subcode}" if code else "")
    user, system = _amount(get, "RemoteUserCpu"), _amount(get, "RemoteSysCpu")
    sent, received = _amount(get, "BytesSent"), _amount(get, "BytesRecvd")
    return [head, "\t(0) CPU times",
            _cpu_line(user, system, "Run Remote Usage"), _cpu_line(0, 0, "Run Local Usage"),
            _bytes_line(sent, "Run", "Sent"), _bytes_line(received, "Run", "Received"),
            *([f"\tReason: {e.reason}"] if e.reason else []),
            *(_usage_table(get) if e.job is not None else [])]


def _terminated(e: LogEvent, get: Lookup) -> list[str]:
    if e.signal is not None:
        status = [f"\t(0) Abnormal termination (signal {e.signal})", "\t(0) No core file"]
    else:
        status = [f"\t(1) Normal termination (return value {e.return_value or 0})"]
    user, system = _amount(get, "RemoteUserCpu"), _amount(get, "RemoteSysCpu")
    total_user = max(user, _amount(get, "CumulativeRemoteUserCpu"))
    total_system = max(system, _amount(get, "CumulativeRemoteSysCpu"))
    sent, received = _amount(get, "BytesSent"), _amount(get, "BytesRecvd")
    return ["Job terminated.", *status,
            _cpu_line(user, system, "Run Remote Usage"), _cpu_line(0, 0, "Run Local Usage"),
            _cpu_line(total_user, total_system, "Total Remote Usage"),
            _cpu_line(0, 0, "Total Local Usage"),
            *(_bytes_line(amount, which, direction)
              for which in ("Run", "Total")
              for amount, direction in ((sent, "Sent"), (received, "Received"))),
            *(_usage_table(get) if e.job is not None else [])]


def _cluster_notes(get: Lookup) -> str:
    notes = ClassAd()
    for name in CLUSTER_NOTES:
        value = get(name)
        if isinstance(value, (bool, int, float, str)):
            notes[name] = value
    return f"    {unparse(notes)}" if len(notes) else ""


def _cluster_removed(e: LogEvent) -> list[str]:
    if e.completion <= COMPLETION_ERROR:
        outcome = f"Error {e.completion}"
    else:
        outcome = {COMPLETION_COMPLETE: "Complete", COMPLETION_PAUSED: "Paused"}.get(e.completion, "Incomplete")
    return ["Cluster removed", f"\tMaterialized {e.next_proc} jobs from {e.next_row} items.\t{outcome}",
            *([f"\t{e.reason}"] if e.reason else [])]


def _factory_body(e: LogEvent, get: Lookup) -> list[str]:
    if e.code == CLUSTER_SUBMIT:
        notes = _cluster_notes(get)
        return [f"Cluster submitted from host: {e.host}", *([notes] if notes else [])]
    if e.code == CLUSTER_REMOVE:
        return _cluster_removed(e)
    if e.code == FACTORY_PAUSED:
        return ["Job Materialization Paused", *([f"\t{e.reason}"] if e.reason or e.pause_code else []),
                *([f"\tPauseCode {e.pause_code}"] if e.pause_code else []),
                *([f"\tHoldCode {e.hold_code}"] if e.hold_code else [])]
    return ["Job Materialization Resumed", *([f"\t{e.reason}"] if e.reason else [])]


def _body(e: LogEvent) -> list[str]:
    get = _reader(e)
    if CLUSTER_SUBMIT <= e.code <= FACTORY_RESUMED:
        return _factory_body(e, get)
    if e.code == SUBMIT:
        lines = [f"Job submitted from host: {e.host}"]
        if e.warnings:
            lines.append("    WARNING: Committed job submission into the queue with the following "
                         "warning(s): " + "; ".join(e.warnings))
        return lines
    if e.code == EXECUTE:
        lines = [f"Job executing on host: {e.host}"]
        if e.slot_name:
            lines.append(f"\tSlotName: {e.slot_name}")
        properties = e.properties or _execute_properties(get)
        lines += [f"\t{k} = {properties[k]}" for k in sorted(properties, key=str.lower)]
        return lines
    if e.code == EVICTED:
        return _evicted(e, get)
    if e.code == TERMINATED:
        return _terminated(e, get)
    if e.code == IMAGE_SIZE:
        return [f"Image size of job updated: {e.image_size}",
                f"\t{e.memory_usage}  -  MemoryUsage of job (MB)",
                f"\t{e.resident_set_size}  -  ResidentSetSize of job (KB)"]
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
    """The text of one event, ending with its ``...`` line."""
    when = datetime.fromtimestamp(int(e.time), UTC) + timedelta(seconds=zone)
    header = f"{e.code:03d} ({e.cluster:03d}.{e.proc:03d}.000) {when:%Y-%m-%d %H:%M:%S} "
    return header + "\n".join(_body(e)) + "\n...\n"
