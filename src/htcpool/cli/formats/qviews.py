"""condor_q's other views: ``-io``, ``-autocluster`` and ``-dag``'s node ordering.

``-io`` (one line per job, HTCondor's I/O columns):

     ID      OWNER            RUNS      ST INPUT     OUTPUT    RATE     MISC
     12.0    alice               1      R  1.2 KB    3.0 MB    12 B/s   -

RUNS is NumJobStarts; INPUT and OUTPUT the bytes moved so far (``BytesRecvd`` /
``BytesSent``, which file transfer records), RATE their sum over the job's wall-clock time,
MISC the transfer queue state (``-``, ``in``, ``out`` while a transfer is under way).

``-autocluster``: the idle and running jobs grouped by what they ask of a slot
(RequestCpus, RequestMemory, RequestDisk, RequestGPUs and Requirements, the attributes
htcpool's negotiator matches on), one line per group in order of its first job:

     AUTO_ID  COUNT  CPUS  MEMORY      DISK  GPUS  REQUIREMENTS
           1      3     1     128      1024     0  TARGET.Memory >= 128

``dag_order`` puts each DAG's node jobs right after their DAGMan job, labelled `` |-NODE``
in the owner column, as ``-dag -nobatch`` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd
from htcpool.classad.unparse import unparse_old
from htcpool.cli.formats.fields import job_id, lookup_float, lookup_int, lookup_str
from htcpool.cli.formats.queue import STATUS_LETTERS, run_time


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def format_io(jobs: Sequence[ClassAd], now: int) -> str:
    """The ``-io`` table (headings and one line per job; nothing for no jobs)."""
    if not jobs:
        return ""
    lines = [" ID      OWNER            RUNS      ST INPUT     OUTPUT    RATE     MISC"]
    for job in sorted(jobs, key=job_id):
        cluster, proc = job_id(job)
        received = lookup_float(job, "BytesRecvd") or 0.0
        sent = lookup_float(job, "BytesSent") or 0.0
        seconds = run_time(job, now)
        rate = (received + sent) / seconds if seconds > 0 else 0.0
        if job.get("TransferringInput") is True:
            misc = "in"
        elif job.get("TransferringOutput") is True:
            misc = "out"
        else:
            misc = "-"
        status = STATUS_LETTERS.get(lookup_int(job, "JobStatus") or 0, " ")
        lines.append(f"{f'{cluster}.{proc}':>7} {lookup_str(job, 'Owner') or '':<14} "
                     f"{lookup_int(job, 'NumJobStarts') or 0:>6}      {status:<2} {human_bytes(received):<9} "
                     f"{human_bytes(sent):<9} {human_bytes(rate) + '/s':<8} {misc}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


_SHAPE = ("RequestCpus", "RequestMemory", "RequestDisk", "RequestGPUs")


def _shape(job: ClassAd) -> tuple[str, ...]:
    cells = []
    for attr in _SHAPE:
        value = lookup_int(job, attr)
        cells.append("0" if value is None else str(value))
    requirements = unparse_old(job.lookup("Requirements").node) if "Requirements" in job else ""
    return (*cells, requirements)


def job_ids_text(jobs: Sequence[ClassAd]) -> str:
    """The jobs' ids, ``cluster.proc``, space-separated in queue order (an aggregate row's ``JobIDs``)."""
    return " ".join(f"{c}.{p}" for c, p in (job_id(j) for j in jobs))


def autocluster_ads(jobs: Sequence[ClassAd]) -> list[ClassAd]:
    """The autoclusters of the idle and running ``jobs`` as ads, in order of their first job:
    ``AutoClusterId`` (from 1), ``JobCount``, ``JobIDs``, ``AutoClusterAttrs`` (the attributes
    that define it), each of those attributes as its first job has it, and ``Owner`` and
    ``JobUniverse`` where every job of the autocluster agrees on them."""
    groups: dict[tuple[str, ...], list[ClassAd]] = {}
    for job in sorted(jobs, key=job_id):
        if lookup_int(job, "JobStatus") in (1, 2):
            groups.setdefault(_shape(job), []).append(job)
    out = []
    for number, members in enumerate(groups.values(), 1):
        first = members[0]
        ad = ClassAd({"AutoClusterId": number, "JobCount": len(members), "JobIDs": job_ids_text(members),
                      "AutoClusterAttrs": ",".join((*_SHAPE, "Requirements"))})
        for attr in (*_SHAPE, "Requirements"):
            if attr in first:
                ad[attr] = first.lookup(attr)
        for attr in ("Owner", "JobUniverse"):
            values = {str(job.get(attr)) for job in members}
            if attr in first and len(values) == 1:
                ad[attr] = first.lookup(attr)
        out.append(ad)
    return out


def format_autocluster(jobs: Sequence[ClassAd]) -> str:
    """The ``-autocluster`` table of the idle and running ``jobs``."""
    clusters = autocluster_ads(jobs)
    if not clusters:
        return ""
    lines = [" AUTO_ID  COUNT  CPUS  MEMORY      DISK  GPUS  REQUIREMENTS"]
    for ad in clusters:
        cpus, memory, disk, gpus, requirements = _shape(ad)
        lines.append(f"{ad['AutoClusterId']:>8} {ad['JobCount']:>6} {cpus:>5} {memory:>7} {disk:>9} {gpus:>5}  "
                     f"{requirements}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def dag_order(jobs: Sequence[ClassAd]) -> list[ClassAd]:
    """Jobs with each DAG's nodes after their DAGMan job, labelled `` |-NODE`` as owners."""
    ordered = sorted(jobs, key=job_id)
    present = {job_id(j)[0] for j in ordered}
    children: dict[int, list[ClassAd]] = {}
    roots = []
    for job in ordered:
        parent = lookup_int(job, "DAGManJobId")
        if parent is not None and parent in present:
            children.setdefault(parent, []).append(job)
        else:
            roots.append(job)
    out: list[ClassAd] = []

    def visit(job: ClassAd, depth: int) -> None:
        if depth:
            shown = job.copy()
            shown["Owner"] = " " * (depth - 1) + " |-" + (lookup_str(job, "DAGNodeName") or lookup_str(job, "Owner") or "")
            out.append(shown)
        else:
            out.append(job)
        for child in children.get(job_id(job)[0], []) if job_id(job)[1] == 0 else []:
            visit(child, depth + 1)

    for job in roots:
        visit(job, 0)
    return out
