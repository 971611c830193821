"""Which jobs a command names: ``cluster``, ``cluster.proc``, user names or a constraint.

condor_hold, condor_release, condor_rm, condor_vacate_job and condor_prio take
job ids, clusters, users (every job they own) and ``-constraint``. ``select_jobs``
reads the targets against the queue's jobs and returns the ids chosen, in queue
order, and one line for each target that matches nothing, worded as HTCondor's
tools report it. A constraint counts a job when it evaluates to true.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree
from htcpool.schedd.store import JobId

_ID = re.compile(r"^(\d+)(?:\.(\d+))?$")


@dataclass
class Selection:
    jobs: list[JobId] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def select_jobs(jobs: Mapping[JobId, ClassAd], targets: Iterable[str], constraint: str,
                context: EvalContext) -> Selection:
    """The ids selected, in queue order; ``ValueError`` for a malformed constraint."""
    chosen: set[JobId] = set()
    out = Selection()
    for target in targets:
        found = _ID.match(target)
        if found is not None:
            cluster = int(found.group(1))
            if found.group(2) is not None:
                job_id = (cluster, int(found.group(2)))
                if job_id in jobs:
                    chosen.add(job_id)
                else:
                    out.missing.append(f"Job {cluster}.{found.group(2)} not found")
            else:
                hits = {j for j in jobs if j[0] == cluster}
                if hits:
                    chosen |= hits
                else:
                    out.missing.append(f"Cluster {cluster} not found")
        else:
            hits = {j for j, ad in jobs.items() if ad.get("Owner") == target}
            if hits:
                chosen |= hits
            else:
                out.missing.append(f"User {target} has no jobs")
    if constraint:
        try:
            test = ExprTree(constraint)
        except ClassAdError as e:
            raise ValueError(f"the constraint {constraint!r} does not parse: {e}") from None
        hits = {j for j, ad in jobs.items() if test.evaluate(ad, None, context) is True}
        if not hits:
            out.missing.append(f"Couldn't find/process matching jobs for constraint {constraint}")
        chosen |= hits
    out.jobs = sorted(chosen)
    return out


__all__ = ["Selection", "select_jobs"]
