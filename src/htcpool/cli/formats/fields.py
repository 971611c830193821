"""Reading attributes out of ads and writing the small cells the tool tables share.

The table formatters never touch a clock or the local time zone: every time
arrives as seconds since the epoch together with ``zone``, the offset of local
time east of UTC in seconds, and is broken down with ``time.gmtime(t + zone)``.
That is the whole of "local time" here, so tests pick epoch values and
``zone=0`` and get the same text on any machine.

Attribute reads follow HTCondor's ``LookupInteger``/``LookupString`` habits:
the attribute is evaluated in its own ad, and a value of the wrong kind counts
as missing (``None``). Integers accept reals (truncated, as C converts them);
booleans are not numbers here.

``Column`` and ``render_row`` are the tiny table engine of condor_q and
condor_status: a column has a heading, a minimum width (negative for
left-aligned data, as in printf) and the text put before the cell. Headings
are always left-aligned, the way HTCondor prints them, whatever the alignment
of the data below.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from htcpool.classad import ClassAd
from htcpool.classad.errors import ClassAdError
from htcpool.classad.values import ERROR

# JobStatus values (HTCondor's condor_constants)
IDLE, RUNNING, REMOVED, COMPLETED, HELD, TRANSFERRING_OUTPUT, SUSPENDED = 1, 2, 3, 4, 5, 6, 7


def evaluate(ad: ClassAd, attr: str) -> Any:
    """The engine value of ``attr`` in ``ad`` (UNDEFINED when absent, ERROR when not computable)."""
    try:
        return ad.evaluate(attr)
    except ClassAdError:
        return ERROR


def lookup_int(ad: ClassAd, attr: str) -> int | None:
    v = evaluate(ad, attr)
    if type(v) is int:
        return v
    if type(v) is float and v == v and abs(v) < 2.0**63:
        return int(v)
    return None


def lookup_float(ad: ClassAd, attr: str) -> float | None:
    v = evaluate(ad, attr)
    if type(v) is int or type(v) is float:
        return float(v)
    return None


def lookup_str(ad: ClassAd, attr: str) -> str | None:
    v = evaluate(ad, attr)
    return v if type(v) is str else None


def lookup_bool(ad: ClassAd, attr: str) -> bool | None:
    v = evaluate(ad, attr)
    return v if type(v) is bool else None


def job_id(ad: ClassAd) -> tuple[int, int]:
    """(ClusterId, ProcId), with -1 standing in for a missing number."""
    cluster = lookup_int(ad, "ClusterId")
    proc = lookup_int(ad, "ProcId")
    return (-1 if cluster is None else cluster, -1 if proc is None else proc)


def local_time(t: int, zone: int) -> time.struct_time:
    """The broken-down local time of epoch second ``t``, ``zone`` seconds east of UTC."""
    return time.gmtime(t + zone)


def format_short_date(t: int, zone: int) -> str:
    """condor_q's date cell, C's ``%2d/%-2d %02d:%02d``: ``11/22 00:47``, `` 8/6  09:05``."""
    tm = local_time(t, zone)
    return "%2d/%-2d %02d:%02d" % (tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min)


def format_stamp(t: int, zone: int) -> str:
    """``11/22/26 00:48:28``: the time condor_q appends to the schedd line."""
    return time.strftime("%m/%d/%y %H:%M:%S", local_time(t, zone))


def format_duration(seconds: float) -> str:
    """``days+hh:mm:ss`` as HTCondor prints run and activity times; ``[?????]`` below zero."""
    total = int(seconds)
    if total < 0:
        return "[?????]"
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return "%d+%02d:%02d:%02d" % (days, hours, minutes, secs)


def summarize_address(address: str) -> str:
    """A daemon address for display: everything after the ``?`` becomes ``?...``."""
    cut = address.find("?")
    if cut < 0:
        return address
    return address[:cut] + "?..."


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: heading, minimum width (negative = data left-aligned), text before it."""

    heading: str
    width: int
    prefix: str = " "

    def cell(self, text: str) -> str:
        w = self.width
        return self.prefix + (text.ljust(-w) if w < 0 else text.rjust(w))

    def head(self) -> str:
        return self.prefix + self.heading.ljust(abs(self.width))


def render_row(columns: Sequence[Column], cells: Sequence[str]) -> str:
    """One line of a table (no newline); the first column's prefix is dropped."""
    parts = [c.cell(t) for c, t in zip(columns, cells, strict=True)]
    if parts:
        parts[0] = parts[0][len(columns[0].prefix) :]
    return "".join(parts)


def render_headings(columns: Sequence[Column]) -> str:
    parts = [c.head() for c in columns]
    if parts:
        parts[0] = parts[0][len(columns[0].prefix) :]
    return "".join(parts)


def fit_line(line: str, width: int | None) -> str:
    """A table line for output: cut to ``width - 1`` columns on a console, trailing blanks
    trimmed when there is no console width (output to a pipe or file)."""
    if width is None:
        return line.rstrip()
    return line[: max(0, width - 1)]
