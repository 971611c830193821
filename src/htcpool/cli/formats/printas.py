"""The ``PRINTAS`` functions of print-format files (the manual's "Built-in PRINTAS Functions").

Each takes the column's value, the ad and a ``Moment`` (``now`` and the local ``zone``) and
returns the cell's text, or None when the value is undefined for it (the column's ``OR``
then applies). The functions that read the ad itself, whatever the column's expression
(``OWNER``, ``JOB_STATUS``, ``JOB_DESCRIPTION``, ``MEMORY_USAGE``, ``CPU_TIME``, ``JOB_ID``,
``DAG_OWNER``, ``BATCH_NAME``, ``ACTIVITY_CODE``, ``PLATFORM``, ``REMOTE_HOST``, ``CPU_UTIL``),
print what htcpool's built-in condor_q and condor_status views print for the same ad.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from htcpool.classad import ClassAd
from htcpool.cli.formats.adtext import autoformat_value
from htcpool.cli.formats.factories import factory_mode
from htcpool.cli.formats.fields import (
    format_duration,
    format_short_date,
    lookup_float,
    lookup_int,
    lookup_str,
)
from htcpool.cli.formats.queue import job_description, job_time, memory_mb, status_code
from htcpool.cli.formats.qviews import human_bytes


@dataclass(frozen=True)
class Moment:
    now: int
    zone: int


Function = Callable[[Any, ClassAd, Moment], "str | None"]

_STATUS_NAMES = {1: "Idle", 2: "Running", 3: "Removed", 4: "Completed", 5: "Held", 6: "Transferring Output",
                 7: "Suspended"}
_UNIVERSES = {1: "standard", 5: "vanilla", 7: "scheduler", 8: "MPI", 9: "grid", 10: "java", 11: "parallel",
              12: "local", 13: "vm", 14: "container"}
_STATE_LETTERS = {"None": "~", "Owner": "O", "Unclaimed": "U", "Matched": "M", "Claimed": "C", "Preempting": "P",
                  "Shutdown": "S", "Delete": "X", "Backfill": "F", "Drained": "D"}
_ACTIVITY_LETTERS = {"None": "0", "Idle": "i", "Busy": "b", "Retiring": "r", "Vacating": "v", "Suspended": "s",
                     "Benchmarking": "b", "Killing": "k"}


def _number(value: Any) -> float | None:
    if type(value) in (int, float, bool):
        return float(value)
    return None


def _date(value: Any, ad: ClassAd, m: Moment) -> str | None:
    number = _number(value)
    return None if number is None else format_short_date(int(number), m.zone)


def _due_date(value: Any, ad: ClassAd, m: Moment) -> str | None:
    number, heard = _number(value), lookup_int(ad, "LastHeardFrom")
    return None if number is None or heard is None else format_short_date(int(number) + heard, m.zone)


def _elapsed(value: Any, ad: ClassAd, m: Moment) -> str | None:
    number, heard = _number(value), lookup_int(ad, "LastHeardFrom")
    return None if number is None or heard is None else format_duration(heard - number)


def _duration(value: Any, ad: ClassAd, m: Moment) -> str | None:
    number = _number(value)
    return None if number is None else format_duration(number)


def _activity_time(value: Any, ad: ClassAd, m: Moment) -> str | None:
    number = _number(value)
    clock = lookup_int(ad, "MyCurrentTime") or lookup_int(ad, "LastHeardFrom") or m.now
    return None if number is None else format_duration(clock - number)


def _bytes(scale: float) -> Function:
    def render(value: Any, ad: ClassAd, m: Moment) -> str | None:
        number = _number(value)
        return None if number is None else human_bytes(number * scale)
    return render


def _list(unique: bool) -> Function:
    def render(value: Any, ad: ClassAd, m: Moment) -> str | None:
        if isinstance(value, str):
            items = [item.strip() for item in value.split(",") if item.strip()]
        elif isinstance(value, list):
            items = [autoformat_value(item) for item in value]
        else:
            return None
        if unique:
            items = list(dict.fromkeys(items))
        return ",".join(items)
    return render


def _member_count(value: Any, ad: ClassAd, m: Moment) -> str | None:
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, str):
        return str(len([item for item in value.split(",") if item.strip()]))
    return None


def _coded(table: dict[int, str], unknown: str) -> Function:
    def render(value: Any, ad: ClassAd, m: Moment) -> str | None:
        number = _number(value)
        return None if number is None else table.get(int(number), unknown)
    return render


def _activity_code(value: Any, ad: ClassAd, m: Moment) -> str | None:
    state, activity = lookup_str(ad, "State"), lookup_str(ad, "Activity")
    return (_STATE_LETTERS.get(state, "?") if state is not None else "#") + \
        (_ACTIVITY_LETTERS.get(activity, "?") if activity is not None else "#")


def _owner(value: Any, ad: ClassAd, m: Moment) -> str | None:
    return lookup_str(ad, "Owner")


def _dag_owner(value: Any, ad: ClassAd, m: Moment) -> str | None:
    if "DAGManJobId" in ad and lookup_str(ad, "DAGNodeName"):
        return " |-" + str(lookup_str(ad, "DAGNodeName"))
    return lookup_str(ad, "Owner")


def _job_id(value: Any, ad: ClassAd, m: Moment) -> str | None:
    cluster, proc = lookup_int(ad, "ClusterId"), lookup_int(ad, "ProcId")
    return None if cluster is None else f"{cluster}.{proc if proc is not None else -1}"


def _batch_name(value: Any, ad: ClassAd, m: Moment) -> str | None:
    name = lookup_str(ad, "JobBatchName")
    if name:
        return name
    cluster = lookup_int(ad, "ClusterId")
    return None if cluster is None else f"ID: {cluster}"


def _memory(value: Any, ad: ClassAd, m: Moment) -> str | None:
    mb = memory_mb(ad)
    return None if mb is None else f"{mb:.1f}"


def _cpu_util(value: Any, ad: ClassAd, m: Moment) -> str | None:
    cpu, committed = lookup_float(ad, "RemoteUserCpu"), lookup_float(ad, "CommittedTime")
    if cpu is None or not committed or committed <= 0:
        return None
    return "%.1f" % (cpu / committed)


def _platform(value: Any, ad: ClassAd, m: Moment) -> str | None:
    arch = lookup_str(ad, "Arch")
    system = lookup_str(ad, "OpSysShortName") or lookup_str(ad, "OpSys")
    if arch is None and system is None:
        return None
    return f"{'x64' if arch == 'X86_64' else arch or '?'}/{system or '?'}"


def _version(value: Any, ad: ClassAd, m: Moment) -> str | None:
    if not isinstance(value, str):
        return None
    words = value.strip("$").split()
    return words[1] if len(words) > 1 else value


def _condor_platform(value: Any, ad: ClassAd, m: Moment) -> str | None:
    if not isinstance(value, str):
        return None
    words = value.strip("$").split()
    return "-".join(words[1:3]) if len(words) > 2 else value


def _remote_host(value: Any, ad: ClassAd, m: Moment) -> str | None:
    return lookup_str(ad, "RemoteHost")


FUNCTIONS: dict[str, Function] = {
    "ACTIVITY_CODE": _activity_code,
    "ACTIVITY_TIME": _activity_time,
    "BATCH_NAME": _batch_name,
    "CONDOR_PLATFORM": _condor_platform,
    "CONDOR_VERSION": _version,
    "CPU_TIME": lambda value, ad, m: format_duration(job_time(ad, m.now)),
    "CPU_UTIL": _cpu_util,
    "DAG_OWNER": _dag_owner,
    "DATE": _date,
    "DUE_DATE": _due_date,
    "ELAPSED_TIME": _elapsed,
    "JOB_COMMAND": lambda value, ad, m: job_description(ClassAd({k: ad.get(k) for k in ("Cmd", "Args", "Arguments")
                                                                 if k in ad})),
    "JOB_DESCRIPTION": lambda value, ad, m: job_description(ad),
    "JOB_FACTORY_MODE": lambda value, ad, m: factory_mode(ClassAd({"JobFactoryPaused": value}))
    if _number(value) is not None else None,
    "JOB_ID": _job_id,
    "JOB_STATUS": lambda value, ad, m: status_code(ad),
    "JOB_STATUS_RAW": _coded(_STATUS_NAMES, "Unk"),
    "JOB_UNIVERSE": _coded(_UNIVERSES, "Unknown"),
    "LOAD_AVG": lambda value, ad, m: None if _number(value) is None else "%.3f" % float(value),
    "MEMBER_COUNT": _member_count,
    "MEMORY_USAGE": _memory,
    "OWNER": _owner,
    "PLATFORM": _platform,
    "QDATE": _date,
    "READABLE_BYTES": _bytes(1.0),
    "READABLE_KB": _bytes(1024.0),
    "READABLE_MB": _bytes(1024.0 * 1024.0),
    "REMOTE_HOST": _remote_host,
    "RUNTIME": _duration,
    "STRINGS_FROM_LIST": _list(unique=False),
    "TIME": _duration,
    "UNIQUE": _list(unique=True),
}

__all__ = ["FUNCTIONS", "Function", "Moment"]
