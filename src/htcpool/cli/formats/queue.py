"""condor_q's tables: the batch view (default), ``-nobatch``, ``-run``, ``-hold``, ``-totals``.

``format_queue`` returns the whole text condor_q prints for one schedd:

    (blank)(blank)
    -- Schedd: NAME : <ADDRESS?... @ MM/DD/YY HH:MM:SS
    headings and one row per job or batch
    (blank)
    Total for query: N jobs; ... suspended_
    [Total for USER: N jobs; ... suspended_]
    Total for all users: N jobs; ... suspended
    (blank)

The query and user lines end in a space (shown ``_`` above) and the all-users
line does not, as HTCondor prints them. ``-totals`` leaves out the headings and the blank line
before the totals; ``-run`` has no totals at all.

Column layout (HTCondor 25's print formats):

* job views start with the job id, the cluster right-aligned in 4 columns and
  ``.proc`` left-aligned in 4, then the owner in 14 (wider names overflow);
  when a cluster reaches 5 digits or a proc 4 digits the id columns widen;
* ``-nobatch``: SUBMITTED, RUN_TIME, ST, PRI, SIZE (MemoryUsage MB, else
  ImageSize KB / 1024, one decimal), CMD (``(JobDescription)`` or the
  executable's base name and the arguments);
* ``-run``: SUBMITTED, RUN_TIME, HOST(S) (RemoteHost);
* ``-hold``: HELD_SINCE (EnteredCurrentStatus), CODE/SUB as ``%4d/%-3d``,
  HOLD_REASON; this view is always printed wide;
* batch: one row per batch: the jobs of a cluster, or of every cluster of one
  owner sharing a JobBatchName, or of a DAG (node jobs folded under the
  DAGMan job that runs them). OWNER is as wide as the longest owner (8 when
  that is shorter than the heading), BATCH_NAME at least 10; the counters are
  ``%6d`` with ``_`` for zero; the HOLD column appears only when some batch
  has held jobs (or there is no batch at all). DONE and TOTAL come from
  TotalSubmitProcs (DAG_NodesDone/DAG_NodesTotal for a DAG): TOTAL is the
  number submitted and DONE those no longer in the queue.

RUN_TIME is RemoteWallClockTime plus, for a running job, the time since
ShadowBday (JobCurrentStartDate when there is no ShadowBday), with ``now``
standing for the schedd's ServerTime; it prints as ``days+hh:mm:ss``.

``width`` is the console width: None means output to a pipe or file (as the
goldens were captured), where HTCondor neither cuts lines nor squeezes
columns and only trims trailing blanks; with a width every table line is cut
to ``width - 1`` characters and the batch view shares the spare width among
OWNER, BATCH_NAME and JOB_IDS as condor_q does.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd
from htcpool.cli.formats.batches import batch_rows
from htcpool.cli.formats.fields import (
    COMPLETED,
    HELD,
    IDLE,
    REMOVED,
    RUNNING,
    SUSPENDED,
    TRANSFERRING_OUTPUT,
    Column,
    fit_line,
    format_duration,
    format_short_date,
    format_stamp,
    job_id,
    lookup_bool,
    lookup_float,
    lookup_int,
    lookup_str,
    render_headings,
    render_row,
    summarize_address,
)

STATUS_LETTERS = {
    IDLE: "I",
    RUNNING: "R",
    REMOVED: "X",
    COMPLETED: "C",
    HELD: "H",
    TRANSFERRING_OUTPUT: ">",
    SUSPENDED: "S",
}

VIEWS = ("batch", "nobatch", "run", "hold", "totals")


# ---------------------------------------------------------------- cells


def status_code(job: ClassAd) -> str:
    """The two-character ST cell: the status letter, or ``<`` / ``>`` marks for file transfer."""
    status = lookup_int(job, "JobStatus")
    if status is None:
        return "  "
    cell = [STATUS_LETTERS.get(status, " "), " "]
    queued = lookup_bool(job, "TransferQueued") is True
    if lookup_bool(job, "TransferringInput") is True:
        cell = ["<", "q" if queued else " "]
    if lookup_bool(job, "TransferringOutput") is True or status == TRANSFERRING_OUTPUT:
        cell = ["q" if queued else " ", ">"]
    return "".join(cell)


def run_time(job: ClassAd, now: int) -> float:
    """Wall-clock seconds: earlier runs plus the current one for a running job."""
    total = lookup_float(job, "RemoteWallClockTime") or 0.0
    status = lookup_int(job, "JobStatus")
    if status in (RUNNING, TRANSFERRING_OUTPUT, SUSPENDED):
        started = lookup_int(job, "ShadowBday")
        if started is None:
            started = lookup_int(job, "JobCurrentStartDate")
        if started:
            total += now - started
    return total


def memory_mb(job: ClassAd) -> float | None:
    used = lookup_int(job, "MemoryUsage")
    if used is not None:
        return float(used)
    image = lookup_int(job, "ImageSize")
    if image is not None:
        return image / 1024.0
    return None


def job_description(job: ClassAd) -> str:
    """The CMD cell: ``(JobDescription)``, else the executable's base name and its arguments."""
    described = lookup_str(job, "MATCH_EXP_JobDescription") or lookup_str(job, "JobDescription")
    if described:
        return f"({described})"
    cmd = lookup_str(job, "Cmd")
    if cmd is None:
        return ""
    name = cmd.replace("\\", "/").rsplit("/", 1)[-1]
    args = lookup_str(job, "Arguments")
    if args is None:
        args = lookup_str(job, "Args")
    return f"{name} {args}" if args else name


def _date_cell(job: ClassAd, attr: str, zone: int) -> str:
    t = lookup_int(job, attr)
    return "    ???    " if t is None or t < 0 else format_short_date(t, zone)


# ---------------------------------------------------------------- job views


def _widths(jobs: Sequence[ClassAd], width: int | None) -> tuple[int, int, int, bool]:
    """Cluster, proc and owner widths, and whether the table needed widening at all."""
    max_cluster = max([0] + [job_id(j)[0] for j in jobs])
    max_proc = max([0] + [job_id(j)[1] for j in jobs])
    longest_owner = max([0] + [len(lookup_str(j, "Owner") or "") for j in jobs])
    widen = max_cluster >= 9999 or max_proc >= 999 or longest_owner > 14
    cluster_width, proc_width, owner_width = 4, 3, 14
    if widen:
        if 4 < len(str(max_cluster)) <= 9:
            cluster_width = len(str(max_cluster))
        if 3 < len(str(max_proc)) <= 9:
            proc_width = len(str(max_proc))
        if width is not None and longest_owner > 14:
            owner_width = max(14, min(longest_owner, 14 + width - 80))
    return cluster_width, proc_width, owner_width, widen


def job_time(job: ClassAd, now: int, which: str = "run") -> float:
    """The RUN_TIME cell's seconds: ``run`` (all runs), ``current`` (this run only, condor_q
    -currentrun) or ``cpu`` (RemoteUserCpu + RemoteSysCpu, -cputime's CPU_TIME)."""
    if which == "cpu":
        return (lookup_float(job, "RemoteUserCpu") or 0.0) + (lookup_float(job, "RemoteSysCpu") or 0.0)
    if which == "current":
        if lookup_int(job, "JobStatus") not in (RUNNING, TRANSFERRING_OUTPUT, SUSPENDED):
            return 0.0
        started = lookup_int(job, "ShadowBday") or lookup_int(job, "JobCurrentStartDate")
        return float(now - started) if started else 0.0
    return run_time(job, now)


def _job_table(
    jobs: Sequence[ClassAd], view: str, now: int, zone: int, width: int | None,
    owner_heading: str = "OWNER", time_kind: str = "run",
) -> list[str]:
    cw, pw, ow, widen = _widths(jobs, width)
    columns = [Column(" ID", cw), Column(" ", -(pw + 1), prefix=""), Column(owner_heading, -ow)]
    if view == "hold":
        columns += [Column("HELD_SINCE", -11), Column("CODE/SUB", -8), Column("HOLD_REASON", 0)]
    elif view == "run":
        columns += [Column("  SUBMITTED", 11), Column("    RUN_TIME", 12), Column("HOST(S)", 0)]
    else:
        size_width = 4
        if widen:  # HTCondor widens SIZE only when it widens the other columns
            sizes = [memory_mb(j) for j in jobs]
            size_width = max([4] + [len("%.1f" % s) for s in sizes if s is not None])
        columns += [
            Column("  SUBMITTED", 11),
            Column("    CPU_TIME" if time_kind == "cpu" else "    RUN_TIME", 12),
            Column("ST", -2),
            Column("PRI", -3),
            Column("SIZE", size_width),
            Column("CMD", 0),
        ]
    lines = [render_headings(columns)]
    for job in jobs:
        cluster, proc = job_id(job)
        cells = [str(cluster), "." + str(proc).ljust(pw), lookup_str(job, "Owner") or ""]
        if view == "hold":
            code = lookup_int(job, "HoldReasonCode") or 0
            sub = lookup_int(job, "HoldReasonSubCode") or 0
            cells += [
                _date_cell(job, "EnteredCurrentStatus", zone),
                "%4d/%-3d" % (code, sub),
                lookup_str(job, "HoldReason") or "",
            ]
        elif view == "run":
            cells += [
                _date_cell(job, "QDate", zone),
                format_duration(run_time(job, now)),
                lookup_str(job, "RemoteHost") or "",
            ]
        else:
            size = memory_mb(job)
            prio = lookup_int(job, "JobPrio")
            cells += [
                _date_cell(job, "QDate", zone),
                format_duration(job_time(job, now, time_kind)),
                status_code(job),
                "" if prio is None else str(prio),
                "" if size is None else "%.1f" % size,
                job_description(job),
            ]
        lines.append(render_row(columns, cells))
    line_width = None if view == "hold" else width
    return [fit_line(line, line_width) for line in lines]


# ---------------------------------------------------------------- totals


def count_states(jobs: Sequence[ClassAd]) -> dict[str, int]:
    """Job counts by state for the totals lines (output transfer counts as running)."""
    counts = dict.fromkeys(("completed", "removed", "idle", "running", "held", "suspended"), 0)
    names = {
        IDLE: "idle",
        RUNNING: "running",
        TRANSFERRING_OUTPUT: "running",
        REMOVED: "removed",
        COMPLETED: "completed",
        HELD: "held",
        SUSPENDED: "suspended",
    }
    for job in jobs:
        name = names.get(lookup_int(job, "JobStatus") or 0)
        if name is not None:
            counts[name] += 1
    return counts


def totals_line(label: str, jobs: Sequence[ClassAd]) -> str:
    c = count_states(jobs)
    return (
        f"Total for {label}: {len(jobs)} jobs; {c['completed']} completed, {c['removed']} removed, "
        f"{c['idle']} idle, {c['running']} running, {c['held']} held, {c['suspended']} suspended"
    )


def _summary(jobs: Sequence[ClassAd], all_jobs: Sequence[ClassAd], user: str | None) -> str:
    lines = [totals_line("query", jobs) + " \n"]
    if user is not None:
        mine = [j for j in all_jobs if lookup_str(j, "User") == user]
        lines.append(totals_line(user, mine) + " \n")
    lines.append(totals_line("all users", all_jobs) + "\n")
    return "".join(lines)


# ---------------------------------------------------------------- the whole output


def format_queue(
    jobs: Sequence[ClassAd],
    *,
    now: int,
    schedd_name: str,
    schedd_address: str,
    view: str = "batch",
    all_jobs: Sequence[ClassAd] | None = None,
    zone: int = 0,
    user: str | None = None,
    width: int | None = None,
    owner_heading: str = "OWNER",
    time_kind: str = "run",
    ordered_as_given: bool = False,
) -> str:
    """condor_q's output for the ``jobs`` one query selected from a schedd.

    ``all_jobs`` is the whole queue (for the all-users totals; default ``jobs``);
    ``user``, when given, adds HTCondor's ``Total for USER`` line, counting the
    jobs whose ``User`` equals it. ``view`` is one of ``VIEWS``. ``owner_heading`` (``-dag``:
    ``OWNER/NODENAME``), ``time_kind`` (``job_time``) and ``ordered_as_given`` (rows in the
    order passed, as ``-dag`` orders them) adjust the job views.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown condor_q view {view!r}; expected one of {', '.join(VIEWS)}")
    everything = list(jobs if all_jobs is None else all_jobs)
    ordered = list(jobs) if ordered_as_given else sorted(jobs, key=job_id)
    out = [
        "\n\n-- Schedd: %s : %s @ %s\n"
        % (schedd_name, summarize_address(schedd_address), format_stamp(now, zone))
    ]
    if view == "batch":
        out.extend(line + "\n" for line in batch_rows(ordered, zone, width))
    elif view != "totals":
        out.extend(line + "\n" for line in _job_table(ordered, view, now, zone, width, owner_heading, time_kind))
    if view == "run":
        return "".join(out)
    if view != "totals":
        out.append("\n")
    out.append(_summary(ordered, everything, user))
    out.append("\n")
    return "".join(out)
