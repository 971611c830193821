"""condor_watch_q's view: one line per batch of jobs with its progress, and a summary.

``Tracker`` remembers every cluster it has seen and how many jobs each submitted
(``TotalSubmitProcs``); a job that has left the queue counts as done. ``groups`` rolls
the jobs up, by default one row per batch (``JobBatchName``, else ``ID: CLUSTER``),
with ``-groupby cluster`` one per cluster. ``format_watch`` prints:

    BATCH       IDLE  RUN  HOLD  DONE  TOTAL  JOB_IDS
    ID: 12         1    2     -     3      6  12.0-5    [=======------]
    (blank)
    Total: 6 jobs; 3 completed, 2 running, 1 idle
    (blank)
    Updated at 2026-11-25 15:44:36

The HOLD column appears only while some job is held; a zero count prints ``-``. The
progress bar shows the share of done (``=``), running (``>``), held (``!``) and idle
(``-``) jobs in ``bar_width`` characters. ``exit_reached`` decides the ``-exit
GROUPER,STATUS`` conditions: GROUPER is ``all``, ``any`` or ``none`` of the tracked jobs,
STATUS one of ``done``, ``idle``, ``running``, ``held``, ``active`` (idle or running).
Everything here is pure: the caller passes the jobs, ``now`` and the time zone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    HELD,
    IDLE,
    RUNNING,
    SUSPENDED,
    TRANSFERRING_OUTPUT,
    job_id,
    local_time,
    lookup_int,
    lookup_str,
)

GROUPERS = ("all", "any", "none")
STATUSES = ("done", "idle", "running", "held", "active")


@dataclass
class Row:
    name: str
    idle: int = 0
    running: int = 0
    held: int = 0
    done: int = 0
    total: int = 0
    ids: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Tracker:
    """Clusters seen so far: cluster -> (batch name, jobs submitted)."""

    clusters: dict[int, tuple[str, int]] = field(default_factory=dict)

    def see(self, jobs: Sequence[ClassAd]) -> None:
        for job in jobs:
            cluster = job_id(job)[0]
            if cluster not in self.clusters:
                total = lookup_int(job, "TotalSubmitProcs") or 1
                self.clusters[cluster] = (lookup_str(job, "JobBatchName") or f"ID: {cluster}", total)


def _state(job: ClassAd) -> str:
    status = lookup_int(job, "JobStatus")
    if status in (RUNNING, TRANSFERRING_OUTPUT):
        return "running"
    if status == HELD:
        return "held"
    if status in (IDLE, SUSPENDED):
        return "idle"
    return "done"


def groups(tracker: Tracker, jobs: Sequence[ClassAd], by: str = "batch") -> list[Row]:
    """Rows for the tracked clusters, in cluster order, ``jobs`` being what is still queued."""
    queued: dict[int, list[ClassAd]] = {}
    for job in sorted(jobs, key=job_id):
        queued.setdefault(job_id(job)[0], []).append(job)
    rows: dict[str, Row] = {}
    for cluster in sorted(tracker.clusters):
        name, total = tracker.clusters[cluster]
        key = name if by == "batch" else f"ID: {cluster}"
        row = rows.setdefault(key, Row(key))
        present = queued.get(cluster, [])
        for job in present:
            setattr(row, _state(job), getattr(row, _state(job)) + 1)
            row.ids.append(job_id(job))
        row.done += max(0, total - len(present))
        row.total += total
        if not present:
            row.ids.append((cluster, -1))
    return list(rows.values())


def _ids(ids: list[tuple[int, int]]) -> str:
    known = sorted(i for i in ids if i[1] >= 0)
    if not known:
        clusters = sorted({c for c, _ in ids})
        return str(clusters[0]) if len(clusters) == 1 else f"{clusters[0]} ... {clusters[-1]}"
    first, last = known[0], known[-1]
    if first == last:
        return f"{first[0]}.{first[1]}"
    if first[0] == last[0]:
        return f"{first[0]}.{first[1]}-{last[1]}"
    return f"{first[0]}.{first[1]} ... {last[0]}.{last[1]}"


def progress_bar(row: Row, width: int) -> str:
    if row.total <= 0 or width <= 0:
        return ""
    parts = [(row.done, "="), (row.running, ">"), (row.held, "!")]
    cells = []
    for count, mark in parts:
        cells.append(mark * (count * width // row.total))
    used = sum(len(c) for c in cells)
    return "[" + "".join(cells) + "-" * (width - used) + "]"


def _count(n: int) -> str:
    return str(n) if n else "-"


def summary_line(rows: Sequence[Row]) -> str:
    total = sum(r.total for r in rows)
    parts = [(sum(r.done for r in rows), "completed"), (sum(r.running for r in rows), "running"),
             (sum(r.idle for r in rows), "idle"), (sum(r.held for r in rows), "held")]
    words = ", ".join(f"{n} {w}" for n, w in parts if n)
    return f"Total: {total} jobs; {words}" if words else f"Total: {total} jobs"


def format_watch(rows: Sequence[Row], *, now: int, zone: int = 0, bar_width: int = 40,
                 summary: bool = True, updated_at: bool = True) -> str:
    """The whole view (see the module docstring); ``bar_width`` 0 leaves the bars out."""
    if not rows:
        table = ["No jobs to watch."]
    else:
        with_hold = any(r.held for r in rows)
        headings = ["BATCH", "IDLE", "RUN"] + (["HOLD"] if with_hold else []) + ["DONE", "TOTAL", "JOB_IDS"]
        cells = []
        for r in rows:
            counts = [r.idle, r.running] + ([r.held] if with_hold else []) + [r.done, r.total]
            cells.append([r.name] + [_count(n) for n in counts] + [_ids(r.ids)])
        widths = [max(len(headings[i]), *(len(c[i]) for c in cells)) for i in range(len(headings))]

        def line(texts: list[str], bar: str = "") -> str:
            out = [texts[0].ljust(widths[0])]
            out += [t.rjust(w) for t, w in zip(texts[1:-1], widths[1:-1], strict=True)]
            out.append(texts[-1].ljust(widths[-1]) if bar else texts[-1])
            return ("  ".join(out) + (" " + bar if bar else "")).rstrip()

        table = [line(headings)]
        table += [line(c, progress_bar(r, bar_width)) for c, r in zip(cells, rows, strict=True)]
    out = table
    if summary and rows:
        out += ["", summary_line(rows)]
    if updated_at:
        out += ["", "Updated at " + time.strftime("%Y-%m-%d %H:%M:%S", local_time(now, zone))]
    return "\n".join(out) + "\n"


def exit_reached(rows: Sequence[Row], grouper: str, status: str) -> bool:
    """Whether ``-exit grouper,status`` holds for the jobs of ``rows``."""
    if grouper not in GROUPERS or status not in STATUSES:
        raise ValueError(f"-exit takes {'|'.join(GROUPERS)},{'|'.join(STATUSES)}, not {grouper},{status}")
    total = sum(r.total for r in rows)
    counts = {"done": sum(r.done for r in rows), "idle": sum(r.idle for r in rows),
              "running": sum(r.running for r in rows), "held": sum(r.held for r in rows)}
    counts["active"] = counts["idle"] + counts["running"]
    n = counts[status]
    if grouper == "all":
        return n == total  # vacuously true with no jobs, as Python's all() of condor_watch_q
    if grouper == "any":
        return n > 0
    return n == 0
