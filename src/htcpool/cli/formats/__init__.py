"""Text of htcpool's HTCondor-compatible tools, byte for byte as HTCondor 25 prints it.

Every function here is pure: ads and numbers in, text out. Nothing reads the
clock or the local time zone; ``now`` (seconds since the epoch) and ``zone``
(local time's offset east of UTC, in seconds) are parameters, and ``width``
is the console width, None for output to a pipe or file.

Modules:

* ``queue``, ``batches``: condor_q's tables and totals;
* ``status``: condor_status's tables and totals;
* ``history``: condor_history's default table;
* ``analyze`` (with ``clauses``): ``condor_q -better-analyze``;
* ``adtext``: ``-long``, ``-json`` and ``-af``, shared by condor_q, condor_status
  and condor_history;
* ``actions``: the one-line reports of condor_hold/release/rm/vacate_job,
  condor_prio's errors and condor_submit's report;
* ``fields``: attribute reads and the date, duration and column helpers.
"""

from htcpool.cli.formats.actions import (
    ACTIONS,
    NO_JOBS_SPECIFIED,
    PRIO_NO_PRIORITY,
    format_action_totals,
    format_job_result,
    format_prio_error,
    format_selection_result,
    format_submit_result,
    prio_usage,
    selection_constraint,
)
from htcpool.cli.formats.adtext import format_autoformat, format_json, format_long
from htcpool.cli.formats.analyze import format_better_analyze
from htcpool.cli.formats.fields import format_duration, format_short_date, summarize_address
from htcpool.cli.formats.history import format_history
from htcpool.cli.formats.queue import format_queue
from htcpool.cli.formats.status import format_status, totals_table

format_status_af = format_autoformat  # condor_status -af prints exactly as condor_q -af

__all__ = [
    "ACTIONS",
    "NO_JOBS_SPECIFIED",
    "PRIO_NO_PRIORITY",
    "format_action_totals",
    "format_autoformat",
    "format_better_analyze",
    "format_duration",
    "format_history",
    "format_job_result",
    "format_json",
    "format_long",
    "format_prio_error",
    "format_queue",
    "format_selection_result",
    "format_short_date",
    "format_status",
    "format_status_af",
    "format_submit_result",
    "prio_usage",
    "selection_constraint",
    "summarize_address",
    "totals_table",
]
