"""One session with one submitter: its jobs matched, best first, until a limit stops it.

Rules (HTCondor 25's ``negotiateWithGroup`` and ``matchmakingAlgorithm``):

* The submitter's requests are taken in order (best job priority first); the jobs of a request
  are matched one by one. A request whose job finds no slot is rejected as a whole (its
  autocluster), and the session goes on with the next one.
* A limit admits a match when ``used + cost ≤ limit``, or once per spin when nothing is used yet
  (so fractional shares do not strand slots). Unclaimed slots count against the unclaimed limit
  (capped by the group's room), preemption by priority against the limit, rank preemption against
  nothing. Past its limit on the first spin with preemption considered, the submitter may still
  take slots whose ``RANK`` prefers its jobs (startd-rank-only mode).
* The session ends at the submitter's ceiling, at the deadline its time limits give, or when its
  limit is used; it is done with the pie when every request is placed or rejected.
* Every match is recorded and charged to the accountant at once; a job's concurrency limits are
  counted; with NEGOTIATOR_DEPTH_FIRST the jobs the schedd will pack into the slot go with it.
* A job whose matching meets an expression that cannot be evaluated at all (a ``ClassAdError``)
  is rejected like a job that found no slot, with the error as the reason, and named in the
  cycle's ``failures``; the session goes on with the next request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, ClassAdError, EvalContext
from htcpool.classad.nodes import Literal
from htcpool.negotiator.exprinfo import literal, number
from htcpool.negotiator.matchlist import Candidate
from htcpool.negotiator.outcomes import Match, PreemptState, Rejection
from htcpool.negotiator.requests import ResourceRequest

if TYPE_CHECKING:
    from htcpool.negotiator.cycle import NegotiationCycle
    from htcpool.negotiator.pie import SubmitterState

__all__ = ["SubmitterSession"]

_EPS = 1e-9


def _permits(used: float, allowed: float, cost: float) -> bool:
    """The submitter-limit test. A relative tolerance of 1e-6 keeps a share such as 9.999999 (left
    by a nice user's tiny slice) from stranding the tenth slot for the nice user's round-up."""
    return used + cost <= allowed * (1 + 1e-6) + _EPS or (used <= 0 and allowed > 0)


class SubmitterSession:
    """One session with one submitter: its jobs matched in order until a limit stops it.

    Within a group, no match may take the group past its limit: the once-per-spin round-up of
    the submitter limit does not apply to the group's quota (HTCondor truncates the group limit
    to whole slots instead, which under-serves weighted slots)."""

    def __init__(self, cyc: NegotiationCycle, s: SubmitterState, limit: float, limit_unclaimed: float,
                 ignore_limit: bool, ceil_left: float, negotiating_group: str, autoregroup: bool,
                 group: str | None = None, group_quota: float = math.inf, deadline: float = math.inf) -> None:
        self.cyc, self.s = cyc, s
        self.limit, self.limit_unclaimed, self.ignore_limit = limit, limit_unclaimed, ignore_limit
        self.ceil_left, self.deadline = ceil_left, deadline
        self.negotiating_group, self.autoregroup = negotiating_group, autoregroup
        self.group, self.group_quota = group, group_quota
        self.used = self.used_unclaimed = 0.0
        self.rank_only = False  # past the slice on the first spin: only RANK preemption is left
        self.limit_rejection = False

    def permit(self, state: PreemptState, cost: float) -> bool:
        """Whether the limits admit a match of this kind and cost (see the module's rules)."""
        if state is PreemptState.RANK:
            return True
        group = self.group
        if group is not None and \
                self.cyc.accountant.weighted_usage(group) + cost > self.group_quota * (1 + 1e-6) + _EPS:
            return False
        if state is PreemptState.PRIO:
            return _permits(self.used, self.limit, cost)
        return _permits(self.used_unclaimed, self.limit_unclaimed, cost)

    def run(self) -> bool:
        """Match the submitter's requests in order; True when it is done for this pie (everything
        placed or rejected), False when a limit or the time stopped it."""
        cyc, s, stats = self.cyc, self.s, self.cyc.stats
        if s.name not in cyc.negotiated:
            cyc.negotiated.add(s.name)
            stats.active_submitter_count += 1
            stats.num_idle_jobs += s.advertised_idle
        rejected: set[int] = set()
        for ri, req in enumerate(s.requests):
            if s.placed[ri] >= len(req.jobs) or req.autocluster in rejected:
                continue
            if not self._request(ri, req, rejected):
                return False
        if self.used >= self.limit - _EPS or self.limit_rejection:
            if s.name not in stats.submitters_share_limit:
                stats.submitters_share_limit.append(s.name)
            return False
        return True

    def _request(self, ri: int, req: ResourceRequest, rejected: set[int]) -> bool:
        """Match the jobs of one request; False when the session must end (a limit, the time)."""
        cyc, s, mm, stats = self.cyc, self.s, self.cyc.matchmaker, self.cyc.stats
        limit = self.limit
        job: ClassAd | None = None  # the request ad with the ephemeral attributes, made when needed
        token: Hashable = cyc.session_token(s.name, self.negotiating_group)
        static_limits, admit = _limit_checks(cyc, req.ad)
        while s.placed[ri] < len(req.jobs):
            if cyc.timer() >= self.deadline:
                return False
            used = self.used
            if used >= limit - _EPS and not (used <= 0 and limit > 0):
                if not self.ignore_limit:
                    return False
                self.rank_only = True
            if used >= self.ceil_left:
                return False
            stats.num_jobs_considered += 1
            jid = req.jobs[s.placed[ri]]
            try:
                barred = cyc.limits.exhausted(static_limits) if static_limits else None
                if barred is not None:
                    cand, reason = None, f"concurrency limit {barred} reached"
                elif self.rank_only and not mm.rank_possible:
                    cand, reason = None, "no match found"  # nothing to preempt by RANK: no scan needed
                else:
                    if job is None:
                        job = cyc.request_ad(s.name, req.ad, self.negotiating_group, self.autoregroup)
                        static_limits, admit = _limit_checks(cyc, job)
                    if cyc.live_sensitive:
                        cyc.refresh_request(job, s.name)
                    cand, reason, token = mm.best(s.name, req.signature, token, job, self.rank_only,
                                                  self.permit, mm.cost, admit)
                    self.limit_rejection = self.limit_rejection or (cand is None and mm.limit_rejected)
                if cand is not None:
                    assert job is not None
                    limits = static_limits if admit is None else \
                        _evaluated_limits(cyc, job, cyc.table.ads[cand.index])
                    self._take(ri, req, jid, cand, job, limits)
                    continue
            except ClassAdError as e:  # the job cannot be matched at all: pass it over, go on
                reason = f"job could not be evaluated: {e}"
                cyc.result.failures.append(f"job {jid[0]}.{jid[1]} of {s.name}: {reason}")
            stats.rejections += 1
            cyc.result.rejections.append(Rejection(s.name, jid, reason))
            rejected.add(req.autocluster)
            return True
        return True

    def _take(self, ri: int, req: ResourceRequest, jid: tuple[int, int], cand: Candidate, job: ClassAd,
              limits: str) -> None:
        """Record the match of job ``jid`` with the candidate and charge it at once."""
        cyc, s, mm = self.cyc, self.s, self.cyc.matchmaker
        cost = mm.cost(cand)
        n = _packed(cyc.table.ads[cand.index], job, cyc.context) if cyc.policy.depth_first else 1
        packed = req.jobs[s.placed[ri] + 1: s.placed[ri] + n]
        _record(cyc, s, jid, cand, cost, self.negotiating_group, self.autoregroup, packed, limits)
        mm.take(cand)
        cyc.accountant.add_match(s.name, cost, cyc.now)
        if limits:
            cyc.limits.add(limits)
        cyc.usage_epoch += 1
        s.placed[ri] += 1 + len(packed)
        self.used += cost
        if cand.state is PreemptState.NONE:
            self.used_unclaimed += cost


def _limit_checks(cyc: NegotiationCycle, job: ClassAd) -> tuple[str, Callable[[int], str | None] | None]:
    """A job's ``ConcurrencyLimits``: a literal string is checked once per job (lower-cased); an
    expression is evaluated against each candidate slot (MY = job, TARGET = slot), as HTCondor
    does, through the returned ``admit`` check."""
    node = job._exprs.get("concurrencylimits")
    if node is None:
        return "", None
    if type(node) is Literal:
        return (node.value.lower(), None) if type(node.value) is str else ("", None)

    def admit(i: int) -> str | None:
        return cyc.limits.exhausted(_evaluated_limits(cyc, job, cyc.table.ads[i]))

    return "", admit


def _evaluated_limits(cyc: NegotiationCycle, job: ClassAd, slot: ClassAd) -> str:
    v = job.evaluate("ConcurrencyLimits", cyc.context, slot)
    return v.lower() if type(v) is str else ""


def _packed(slot: ClassAd, job: ClassAd, context: EvalContext) -> int:
    """NEGOTIATOR_DEPTH_FIRST: how many of the request's jobs the schedd will start in the slot,
    ``min(Cpus / RequestCpus, Memory / RequestMemory)`` in whole jobs, at least 1."""
    fits = []
    for have, want in (("Cpus", "RequestCpus"), ("Memory", "RequestMemory")):
        h = number(literal(slot, have, context))
        w = number(job.evaluate(want, context, slot))
        if h is not None and w is not None and w > 0:
            fits.append(int(h // w))
    return max(1, min(fits)) if fits else 1


def _record(cyc: NegotiationCycle, s: SubmitterState, jid: tuple[int, int], cand: Candidate,
            cost: float, negotiating_group: str, autoregroup: bool,
            packed: tuple[tuple[int, int], ...] = (), limits: str = "") -> None:
    t = cyc.table
    groups = cyc.groups
    group = groups.assigned_group(s.name) if groups is not None and groups.has_groups else None
    preempted = None
    if cand.state is not PreemptState.NONE and not cand.dslots:
        preempted = t.remote_users[cand.index]
    cyc.result.matches.append(
        Match(
            submitter=s.name,
            schedd=s.schedd,
            job=jid,
            slot=t.names[cand.index],
            reason=cand.state,
            cost=cost,
            negotiating_group=negotiating_group,
            autoregroup=autoregroup,
            preempted_user=preempted,
            preempted_dslots=tuple(t.names[j] for j in cand.dslots),
            consumed=cand.evaluation.consumed,
            packed_jobs=packed,
            concurrency_limits=limits,
            group=group,
        )
    )
    cyc.stats.matches += 1
    if s.name in cyc.result.shares:
        cyc.result.shares[s.name].matches += 1
