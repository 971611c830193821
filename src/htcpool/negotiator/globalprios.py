"""USE_GLOBAL_JOB_PRIOS: job priorities compared across submitters and schedds.

Without the knob a job's ``JobPrio`` only orders that submitter's own jobs at one schedd. With it
(HTCondor 25 ``obtainAdsFromCollector``, ``submitterLessThan``,
``consolidate_globaljobprio_submitter_ads``):

* The schedd advertises ``JobPrioArray``, the distinct ``JobPrio`` values of the submitter's idle
  jobs from high to low, at most MAX_GLOBAL_JOB_PRIOS (500) of them; jobs at lower priorities
  are then not negotiated. Here the array is read off the submitter's requests.
* The negotiator turns each submitter ad into one entry per value of the array, each carrying
  that ``JobPrio``. A submitter without idle jobs has an empty array and so no entry at all.
* Entries sort by EUP, then ``JobPrio`` descending, then starvation (then input order), so one
  user's high-priority jobs are negotiated before another user's low-priority jobs at equal EUP.
* After that sort (first spin of each pie) neighbouring entries of the same submitter at the same
  schedd merge into the first, whose band ``[JOBPRIO_MIN, JOBPRIO_MAX]`` then covers them all.
* A session of an entry sees what the schedd would send for its band: the submitter's idle jobs
  whose ``JobPrio`` lies in the band and that no earlier session of the cycle placed, regrouped
  into runs of one autocluster (``JobPriosSource.requests_for``).

Each pie consolidates the entries it is given afresh (HTCondor removes merged entries from its
list for good, so a group's later allocation rounds would see only the first entry's priority).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from htcpool.classad import EvalContext
from htcpool.negotiator.exprinfo import literal, number, with_values
from htcpool.negotiator.requests import ResourceRequest

if TYPE_CHECKING:
    from htcpool.negotiator.pie import SubmitterState

__all__ = ["JobPriosSource", "consolidate", "fan_out", "INT_MIN"]

INT_MIN = -(2**31)  # the JobPrio of an entry without one: the worst


def job_prios(req: ResourceRequest, context: EvalContext) -> tuple[int, ...]:
    """Each job's ``JobPrio`` (the request ad's, evaluated in ``context``, for every job when the
    request does not list them)."""
    if req.job_prios:
        return req.job_prios
    v = number(literal(req.ad, "JobPrio", context, 0))
    return (int(v) if v is not None else 0,) * len(req.jobs)


class JobPriosSource:
    """One submitter's idle jobs at one schedd, shared by its entries: what is still to place."""

    def __init__(self, requests: Sequence[ResourceRequest], context: EvalContext) -> None:
        self.requests = list(requests)
        self.prios = [job_prios(r, context) for r in self.requests]
        self.taken: set[tuple[int, int]] = set()

    def array(self, limit: int) -> list[int]:
        """``JobPrioArray``: the distinct priorities, high to low, at most ``limit``."""
        return sorted({p for ps in self.prios for p in ps}, reverse=True)[:max(0, limit)]

    def idle_in(self, band: tuple[int, int]) -> int:
        lo, hi = band
        return sum(
            1 for r, ps in zip(self.requests, self.prios, strict=True)
            for j, p in zip(r.jobs, ps, strict=True) if lo <= p <= hi and j not in self.taken
        )

    def requests_for(self, band: tuple[int, int]) -> list[ResourceRequest]:
        """The request list the schedd sends for ``band``: idle jobs in the band, in the schedd's
        order, consecutive jobs of one autocluster in one request."""
        lo, hi = band
        out: list[ResourceRequest] = []
        run: list[tuple[int, int]] = []
        run_prios: list[int] = []
        head: ResourceRequest | None = None
        for r, ps in zip(self.requests, self.prios, strict=True):
            for j, p in zip(r.jobs, ps, strict=True):
                if not lo <= p <= hi or j in self.taken:
                    continue
                if head is not None and head.autocluster == r.autocluster:
                    run.append(j)
                    run_prios.append(p)
                    continue
                if head is not None:
                    out.append(replace(head, jobs=tuple(run), job_prios=tuple(run_prios)))
                ad = r.ad if p == ps[0] else with_values(r.ad, [("JobPrio", p)])  # the run's first job's
                head, run, run_prios = replace(r, ad=ad), [j], [p]
        if head is not None:
            out.append(replace(head, jobs=tuple(run), job_prios=tuple(run_prios)))
        return out

    def record(self, requests: Sequence[ResourceRequest], placed: Sequence[int]) -> None:
        """The jobs a session placed (the first ``placed[i]`` of each request) are no longer idle."""
        for r, n in zip(requests, placed, strict=True):
            self.taken.update(r.jobs[:n])


def fan_out(states: Sequence[SubmitterState], limit: int, context: EvalContext) -> list[SubmitterState]:
    """One entry per ``JobPrioArray`` value of each submitter (none for one without idle jobs);
    ``context`` is the cycle's."""
    out: list[SubmitterState] = []
    for s in states:
        source = JobPriosSource(s.requests, context)
        for p in source.array(limit):
            out.append(replace(s, requests=[], placed=[], source=source, job_prio=p, band=(p, p)))
    return out


def consolidate(entries: Sequence[SubmitterState]) -> list[SubmitterState]:
    """Merge each run of neighbouring entries of one submitter at one schedd into its first, whose
    band then spans their priorities; entries without a source are passed over."""
    out: list[SubmitterState] = []
    prev: SubmitterState | None = None
    for s in entries:
        if s.source is None or s.job_prio is None:
            out.append(s)
            continue
        if prev is not None and prev.source is s.source and prev.band is not None:
            lo, hi = prev.band
            prev.band = (min(lo, s.job_prio), max(hi, s.job_prio))
            continue
        s.band = (s.job_prio, s.job_prio)
        prev = s
        out.append(s)
    return out
