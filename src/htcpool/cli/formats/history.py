"""condor_history's default table, for the ads of jobs that left the queue.

``format_history`` takes the ads in the order they are printed: newest first,
as the schedd answers a history query (condor_history reads its file
backwards). The text is a fixed heading, then one line per job:

* ``Cluster.Proc`` left-aligned in 12 columns, ``Owner`` in 12;
* ``QDate`` as ``MM/DD HH:MM`` (zero-padded, unlike condor_q's dates),
  right-aligned in 11;
* ``RemoteWallClockTime`` as ``days+hh:mm:ss``, right-aligned in 12;
* the status letter in 2;
* ``CompletionDate`` like ``QDate``, blank when the job never completed;
* the command: the executable's base name, then ``Arguments`` (``Args`` when
  ``Arguments`` is missing or empty).

Missing or non-numeric numbers count as 0. Times are shown ``zone`` seconds
east of UTC; the tool passes the local zone, tests pass fixed ones. ``-long``
and ``-af`` are ``adtext``'s, the same forms condor_q and condor_status print.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import format_duration, local_time, lookup_int, lookup_str
from htcpool.cli.formats.queue import STATUS_LETTERS

HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n"


def _date(t: int, zone: int) -> str:
    return time.strftime("%m/%d %H:%M", local_time(t, zone))


def _command(ad: ClassAd) -> str:
    cmd = lookup_str(ad, "Cmd")
    name = cmd.rsplit("/", 1)[-1] if cmd is not None else ""
    args = lookup_str(ad, "Arguments") or lookup_str(ad, "Args")
    return f"{name} {args}" if args else name


def history_line(ad: ClassAd, zone: int = 0) -> str:
    """One job's line of the table, newline included."""
    job = f"{lookup_int(ad, 'ClusterId') or 0}.{lookup_int(ad, 'ProcId') or 0}"
    owner = lookup_str(ad, "Owner") or ""
    status = STATUS_LETTERS.get(lookup_int(ad, "JobStatus") or 0, "?")
    run_time = format_duration(lookup_int(ad, "RemoteWallClockTime") or 0)
    completed = lookup_int(ad, "CompletionDate") or 0
    completed_cell = _date(completed, zone) if completed > 0 else ""
    return (f"{job:<12} {owner:<12} {_date(lookup_int(ad, 'QDate') or 0, zone):>11} {run_time:>12} "
            f"{status:<2} {completed_cell:>11} {_command(ad)}\n")


def format_history(ads: Iterable[ClassAd], zone: int = 0) -> str:
    """The default condor_history table for ``ads``, printed in the order given."""
    return HEADING + "".join(history_line(ad, zone) for ad in ads)
