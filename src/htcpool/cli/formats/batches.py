"""condor_q's batch view: jobs rolled up into one line per batch.

How jobs are grouped (HTCondor 25's rules, restated):

1. A job with ``DAGManJobId`` whose DAGMan job is also in the query belongs to
   that DAGMan job's batch (through any depth of nested DAGs).
2. Otherwise a job with ``JobBatchName`` shares a batch with every job of the
   same owner and the same name, across clusters.
3. Otherwise a cluster is a batch of its own.

A batch is printed on the line of its lowest job id, in job-id order, showing
that job's owner and QDate. Its name is JobBatchName, ``DAG: <cluster>`` for a
DAGMan job without one, or ``ID: <cluster>``.

The counters: RUN counts running jobs and jobs transferring output; IDLE
counts idle and suspended jobs; HOLD held jobs. TOTAL and DONE come from the
submission, not from the queue: for each plain cluster TOTAL adds
TotalSubmitProcs and DONE adds TotalSubmitProcs minus the cluster's jobs still
in the query (with late materialization, JobMaterializeNextProcId minus
those jobs); for a DAG they are DAG_NodesTotal and DAG_NodesDone of its DAGMan
jobs. When some plain cluster does not say how many jobs it submitted, both
print ``_``. JOB_IDS spans the lowest to the highest job id of the batch's
non-DAGMan jobs: ``1.0-2`` within one cluster, ``3.0 ... 5.1`` across
clusters, ``3.0`` for one job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    HELD,
    IDLE,
    RUNNING,
    SUSPENDED,
    TRANSFERRING_OUTPUT,
    Column,
    fit_line,
    format_short_date,
    job_id,
    lookup_int,
    lookup_str,
    render_headings,
    render_row,
)

SCHEDULER_UNIVERSE = 7

# the fixed part of the batch line (date, counters and separators) when squeezing to a console
_FIXED_WIDTH = 50


@dataclass(slots=True)
class Batch:
    """The jobs of one batch line, first job first."""

    jobs: list[ClassAd] = field(default_factory=list)

    @property
    def first(self) -> ClassAd:
        return self.jobs[0]


def _is_dagman(job: ClassAd) -> bool:
    return lookup_int(job, "JobUniverse") == SCHEDULER_UNIVERSE


def _dagman_cluster(job: ClassAd) -> int | None:
    """The cluster of the DAGMan job running ``job`` (DAGManJobId may be ``201`` or ``"201.0"``)."""
    dag = lookup_int(job, "DAGManJobId")
    if dag is not None:
        return dag
    text = lookup_str(job, "DAGManJobId")
    if text is None:
        return None
    head = text.split(".", 1)[0]
    return int(head) if head.isdigit() and int(head) > 0 else None


def group_batches(jobs: Sequence[ClassAd]) -> list[Batch]:
    """The batches of ``jobs`` (sorted by job id) in the order their lines print."""
    by_id = {job_id(j): j for j in jobs}
    keys: dict[tuple[int, int], tuple[object, ...]] = {}

    def key_of(job: ClassAd, depth: int = 0) -> tuple[object, ...]:
        jid = job_id(job)
        if jid in keys:
            return keys[jid]
        dag = _dagman_cluster(job)
        parent = by_id.get((dag, 0)) if dag is not None else None
        if parent is not None and parent is not job and depth < 64:
            key = key_of(parent, depth + 1)
        else:
            name = lookup_str(job, "JobBatchName")
            if name is not None:
                key = ("name", name, lookup_str(job, "Owner"))
            else:
                key = ("cluster", jid[0])
        keys[jid] = key
        return key

    batches: dict[tuple[object, ...], Batch] = {}
    for job in jobs:
        batches.setdefault(key_of(job), Batch()).jobs.append(job)
    return sorted(batches.values(), key=lambda b: job_id(b.first))


@dataclass(slots=True)
class Progress:
    done: int = 0
    running: int = 0
    idle: int = 0
    held: int = 0
    total: int = 0
    ids: str = ""


def batch_name(first: ClassAd) -> str:
    name = lookup_str(first, "JobBatchName")
    if name is not None:
        return name
    cluster = job_id(first)[0]
    return f"DAG: {cluster}" if _is_dagman(first) else f"ID: {cluster}"


def _job_ids(jobs: Sequence[ClassAd]) -> str:
    ids = sorted(job_id(j) for j in jobs if not _is_dagman(j))
    if not ids:
        return ""
    (c1, p1), (c2, p2) = ids[0], ids[-1]
    if (c1, p1) == (c2, p2):
        return f"{c1}.{p1}"
    if c1 == c2:
        return f"{c1}.{p1}-{p2}"
    return f"{c1}.{p1} ... {c2}.{p2}"


def progress(batch: Batch) -> Progress:
    """The counters of one batch line."""
    p = Progress(ids=_job_ids(batch.jobs))
    in_dag = _is_dagman(batch.first)
    unknown_total = False
    clusters: dict[int, list[ClassAd]] = {}
    for job in batch.jobs:
        if _is_dagman(job):
            p.total += lookup_int(job, "DAG_NodesTotal") or 0
            p.done += lookup_int(job, "DAG_NodesDone") or 0
            continue
        status = lookup_int(job, "JobStatus")
        if status in (RUNNING, TRANSFERRING_OUTPUT):
            p.running += 1
        elif status in (IDLE, SUSPENDED):
            p.idle += 1
        elif status == HELD:
            p.held += 1
        clusters.setdefault(job_id(job)[0], []).append(job)
    if not in_dag:
        for members in clusters.values():
            submitted = lookup_int(members[0], "TotalSubmitProcs")
            if submitted is None:
                unknown_total = True
                continue
            materialized = lookup_int(members[0], "JobMaterializeNextProcId")
            p.total += submitted
            if materialized is not None and materialized >= 0:
                p.done += materialized - len(members)
            else:
                p.done += submitted - len(members)
    if unknown_total:
        p.done = p.total = 0
    return p


def _squeeze(owner: int, name: int, ids: int, width: int) -> tuple[int, int]:
    """Owner and batch-name widths that fit a console ``width`` columns wide (condor_q's rule)."""
    spare = width - _FIXED_WIDTH
    if owner + name + ids <= spare:
        return owner, name
    share = (spare - (8 + 10 + 9)) // 3
    nw = bw = iw = share
    if iw < ids and (name + owner) - (bw + nw + 10 + 8) > 7 and bw < 10:
        ids //= 2
    if iw + 9 > ids:
        rest = iw + 9 - ids
        nw += rest // 2
        bw += rest - rest // 2
    if bw + 10 > name:
        rest = bw + 10 - name
        nw = min(8 + nw + rest, owner) - 8
    if nw + 8 > owner:
        rest = nw + 8 - owner
        bw = min(10 + bw + rest, name) - 10
    return min(owner, nw + 8), min(name, bw + 10)


def _count(n: int) -> str:
    return str(n) if n > 0 else "_"


def batch_rows(jobs: Sequence[ClassAd], zone: int, width: int | None) -> list[str]:
    """Headings and batch lines for ``jobs`` (sorted by job id), without newlines."""
    batches = group_batches(jobs)
    rows = []
    for batch in batches:
        qdate = lookup_int(batch.first, "QDate")
        rows.append(
            (
                lookup_str(batch.first, "Owner") or "",
                batch_name(batch.first),
                "    ???    " if qdate is None else format_short_date(qdate, zone),
                progress(batch),
            )
        )
    owner_width, name_width, truncate_owner = 5, 12, False
    if rows:
        longest = max(len(r[0]) for r in rows)
        owner_width = longest if longest >= len("OWNER") else 8
        name_width = max(10, max(len(r[1]) for r in rows))
        if width is not None:
            ids = max(len(r[3].ids) for r in rows)
            squeezed, name_width = _squeeze(owner_width, name_width, ids, width)
            truncate_owner = squeezed < owner_width
            owner_width = squeezed
    show_held = not rows or any(r[3].held for r in rows)
    columns = [
        Column("OWNER", -owner_width),
        Column("BATCH_NAME", -name_width),
        Column("   SUBMITTED", 12),
        Column("  DONE", 6),
        Column("  RUN ", 6),
        Column("  IDLE", 6),
    ]
    if show_held:
        columns.append(Column("  HOLD", 6))
    columns += [Column(" TOTAL", 6), Column("JOB_IDS", 0)]
    lines = [fit_line(render_headings(columns), width)]
    for owner, name, submitted, p in rows:
        if truncate_owner:
            owner = owner[:owner_width]
        counters = [_count(p.done), _count(p.running), _count(p.idle)]
        if show_held:
            counters.append(_count(p.held))
        cells = [owner, name, submitted, *counters, _count(p.total), p.ids]
        lines.append(fit_line(render_row(columns, cells), width))
    return lines
