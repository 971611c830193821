"""The text ``condor_submit -dry-run`` prints for a set of jobs.

The first job's attributes, less ``ProcId`` and ``JobStatus``, form the cluster
ad: ``ClusterId`` first, then the rest ordered by name length and then name
(case-insensitively), as HTCondor's hash table happens to list them. Each job
then prints ``ProcId`` and ``JobStatus`` and every attribute whose text differs
from the cluster ad, ending with a line holding ``.``; a last line counts them.
Values are old-ClassAd text with no spaces around ``=``.
"""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.classad.unparse import unparse_old

PROC_ONLY = ("procid", "jobstatus")


def _order(ad: ClassAd) -> list[str]:
    keys = [k for k in ad._exprs if k not in PROC_ONLY and k != "clusterid"]
    return sorted(keys, key=lambda k: (len(k), k))


def format_dry_run(jobs: list[ClassAd], cluster_id: int) -> str:
    """The dry-run listing of ``jobs`` (all of one cluster)."""
    out = ["Dry-Run job(s)"]
    if not jobs:
        out.append(f"0 job(s) dry-run to cluster {cluster_id}.")
        return "\n".join(out) + "\n"
    first = jobs[0]
    texts = {k: unparse_old(first._exprs[k]) for k in first._exprs}
    out.append(f"ClusterId={cluster_id}")
    out.extend(f"{first._names[k]}={texts[k]}" for k in _order(first))
    for job in jobs:
        for k in PROC_ONLY:
            if k in job._exprs:
                out.append(f"{job._names[k]}={unparse_old(job._exprs[k])}")
        if job is not first:
            for k in _order(job):
                text = unparse_old(job._exprs[k])
                if texts.get(k) != text:
                    out.append(f"{job._names[k]}={text}")
        out.append(".")
    out.append(f"{len(jobs)} job(s) dry-run to cluster {cluster_id}.")
    return "\n".join(out) + "\n"
