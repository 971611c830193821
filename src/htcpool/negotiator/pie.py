"""The pie spin: sharing a pool (or a group's quota) among submitters by their priorities.

Rules (seed sections 3.6.5 and 3.6.6; HTCondor 25 ``negotiateWithGroup``):

* Each spin, submitter *i* gets the share ``(1/EUP_i) / Σ (1/EUP)`` of the pie (the pool's weighted
  size, or the group's quota), less what it already uses: EUPs 5, 10 and 20 get 4:2:1.
* Submitters are walked in EUP order (then starvation, then input order: a stable sort where
  HTCondor's is not). Each gets jobs matched, best job priority first, until its slice is used; a
  slice is never more than what is left of the pie. A submitter whose slice is below one slot's
  weight is skipped on later spins; one whose jobs are all placed or rejected is done.
* The pie spins again, shares recomputed among those left, while a spin made progress and both
  slots and submitters remain.
* On the first spin with preemption considered, a submitter past its slice may still take slots
  whose ``RANK`` prefers its jobs (startd-rank-only mode).
* A limit admits a match when ``used + cost ≤ limit``, or once per spin when nothing is used yet
  (so fractional shares do not strand slots). Unclaimed slots count against the unclaimed limit
  (capped by the group's room), preemption by priority against the limit, rank preemption against
  nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Literal
from htcpool.negotiator.exprinfo import literal, number
from htcpool.negotiator.globalprios import INT_MIN, JobPriosSource, consolidate
from htcpool.negotiator.matchlist import Candidate
from htcpool.negotiator.outcomes import Match, PreemptState, Rejection, SubmitterShare
from htcpool.negotiator.requests import ResourceRequest
from htcpool.negotiator.settings import ROOT_GROUP

if TYPE_CHECKING:
    from htcpool.negotiator.cycle import NegotiationCycle

_EPS = 1e-9


@dataclass(eq=False)
class SubmitterState:
    """A submitter during one cycle: its requests and how far each has been placed."""

    name: str
    schedd: str
    requests: list[ResourceRequest]
    order: int
    running_jobs: int = 0
    placed: list[int] = field(default_factory=list)  # jobs placed per request
    weighted_running_jobs: float | None = None  # WeightedRunningJobs of the submitter ad
    weighted_idle_jobs: float | None = None  # WeightedIdleJobs of the submitter ad
    advertised_idle: int = 0  # IdleJobs of the submitter ad, as the cycle started
    #: USE_GLOBAL_JOB_PRIOS (``globalprios``): the submitter's idle jobs, shared by its entries;
    #: this entry's JobPrio; the band [JOBPRIO_MIN, JOBPRIO_MAX] its sessions negotiate
    source: JobPriosSource | None = None
    job_prio: int | None = None
    band: tuple[int, int] | None = None

    def idle_jobs(self) -> int:
        if self.source is not None and self.band is not None:
            return self.source.idle_in(self.band)
        return sum(len(r.jobs) - p for r, p in zip(self.requests, self.placed, strict=True))

    def begin_session(self) -> None:
        """An entry's requests for this session: what the schedd sends for its band now."""
        if self.source is not None and self.band is not None:
            self.requests = self.source.requests_for(self.band)
            self.placed = [0] * len(self.requests)

    def end_session(self) -> None:
        if self.source is not None:
            self.source.record(self.requests, self.placed)
            self.requests, self.placed = [], []


def _permits(used: float, allowed: float, cost: float) -> bool:
    """The submitter-limit test. A relative tolerance of 1e-6 keeps a share such as 9.999999 (left
    by a nice user's tiny slice) from stranding the tenth slot for the nice user's round-up."""
    return used + cost <= allowed * (1 + 1e-6) + _EPS or (used <= 0 and allowed > 0)


def negotiate_with_group(
    cyc: NegotiationCycle,
    submitters: list[SubmitterState],
    group_quota: float,
    group: str | None,
    *,
    negotiating_group: str = ROOT_GROUP,
    autoregroup: bool = False,
    floor_round: bool = False,
) -> None:
    """Spin the pie for ``submitters`` within ``group_quota`` (``math.inf`` for no group limit)."""
    acct, pol, stats = cyc.accountant, cyc.policy, cyc.stats
    stats.pies += 1
    subs = list(submitters)
    spin = 0
    while True:
        spin += 1
        stats.pie_spins += 1
        cyc.matchmaker.forget_walks()
        ignore_limit = spin == 1 and pol.consider_preemption
        group_usage = acct.weighted_usage(group) if group else 0.0
        if group and not ignore_limit and group_usage >= group_quota:
            break
        if not pol.consider_preemption:
            subs = [s for s in subs if s.idle_jobs() > 0]
        if not subs:
            break
        eup = {s.name: acct.effective_priority(s.name) for s in subs}
        inv_sum = sum(1.0 / e for e in eup.values())
        pie = min(cyc.pool_weight, group_quota)

        def limits(
            s: SubmitterState,
            floor: bool = floor_round,
            eup: dict[str, float] = eup,
            inv_sum: float = inv_sum,
            pie: float = pie,
            group_usage: float = group_usage,
        ) -> tuple[float, float, float]:
            share = (1.0 / eup[s.name]) / inv_sum
            usage = acct.weighted_usage(s.name)
            limit = math.inf if pol.ignore_user_priorities else max(0.0, share * pie - usage)
            unclaimed = limit
            if group:
                unclaimed = min(limit, max(0.0, group_quota - group_usage))
            if not pol.consider_preemption:
                limit = unclaimed
            if floor:
                limit = min(acct.record(s.name).floor, limit)
            return share, limit, unclaimed

        pie_left = 0.0
        starvation: dict[str, float] = {}
        for s in subs:
            _, lim, _ = limits(s, False)
            pie_left += lim
            usage = acct.weighted_usage(s.name)
            starvation[s.name] = usage / (usage + lim) if usage + lim > 0 else 3.4e38
        if not pol.consider_preemption and pie_left <= 0:
            break
        if spin == 1:
            t_sort = cyc.timer()
            if pol.use_global_job_prios:  # JobPrio between EUP and starvation, then merge neighbours
                subs.sort(key=lambda s: (eup[s.name], -(INT_MIN if s.job_prio is None else s.job_prio),
                                         starvation[s.name], s.order))
                subs = consolidate(subs)
            else:
                subs.sort(key=lambda s: (eup[s.name], starvation[s.name], s.order))
            stats.phase3_duration += cyc.timer() - t_sort
        pie_left_orig = pie_left
        removed = False
        for s in list(subs):
            if group and not ignore_limit and acct.weighted_usage(group) >= group_quota:
                break
            share, limit, unclaimed = limits(s)
            if spin == 1:
                cyc.result.shares.setdefault(s.name, SubmitterShare(share, share * pie, starvation[s.name]))
            limit = min(limit, pie_left)
            rec = acct.record(s.name)
            usage = acct.weighted_usage(s.name)
            ceil_left = math.inf if rec.ceiling < 0 else max(0.0, rec.ceiling - int(usage))
            # the outcome, first rule that applies (reference 2.5, step 11)
            t_start = cyc.timer()
            idle = s.idle_jobs()
            deadline = _deadline(cyc, s, t_start) if idle else None  # None: a time limit is spent
            done = False
            if not idle or deadline is None:
                done = True
            elif spin > 1 and (limit < cyc.min_slot_weight or pie_left < cyc.min_slot_weight):
                pass
            elif ceil_left == 0 or ceil_left < cyc.min_slot_weight:
                done = True
            else:
                s.begin_session()
                done, used = negotiate_submitter(
                    cyc, s, limit, unclaimed, ignore_limit, ceil_left, negotiating_group, autoregroup,
                    group, group_quota, deadline,
                )
                s.end_session()
                pie_left -= used
                elapsed = cyc.timer() - t_start
                cyc.submitter_time[s.name] = cyc.submitter_time.get(s.name, 0.0) + elapsed
                cyc.schedd_time[s.schedd] = cyc.schedd_time.get(s.schedd, 0.0) + elapsed
            if done:
                subs.remove(s)
                removed = True
        if floor_round or not subs or not cyc.table.left:
            break
        if not (pie_left < pie_left_orig - _EPS or removed):
            break


def _deadline(cyc: NegotiationCycle, s: SubmitterState, now: float) -> float | None:
    """When this session must end (reference 2.5, rule 7), or None when a limit is already spent
    (rules 2–4): the submitter's, its schedd's or the cycle's time, each as the injected timer
    counts it. The names are recorded as HTCondor's statistics list them."""
    pol, stats = cyc.policy, cyc.stats
    spent_submitter = cyc.submitter_time.get(s.name, 0.0)
    spent_schedd = cyc.schedd_time.get(s.schedd, 0.0)
    spent_cycle = now - cyc.started
    if spent_submitter >= pol.max_time_per_submitter:
        if s.name not in stats.submitters_out_of_time:
            stats.submitters_out_of_time.append(s.name)
        return None
    if spent_schedd >= pol.max_time_per_schedd:
        if s.schedd not in stats.schedds_out_of_time:
            stats.schedds_out_of_time.append(s.schedd)
        return None
    if spent_cycle >= pol.max_time_per_cycle:
        return None
    return now + min(pol.max_time_per_piespin, pol.max_time_per_cycle - spent_cycle,
                     pol.max_time_per_submitter - spent_submitter, pol.max_time_per_schedd - spent_schedd)


def negotiate_submitter(
    cyc: NegotiationCycle,
    s: SubmitterState,
    limit: float,
    limit_unclaimed: float,
    ignore_limit: bool,
    ceil_left: float,
    negotiating_group: str,
    autoregroup: bool,
    group: str | None = None,
    group_quota: float = math.inf,
    deadline: float = math.inf,
) -> tuple[bool, float]:
    """One session with one submitter; returns (done, weighted usage matched).

    Within a group, no match may take the group past its limit: the once-per-spin round-up of
    the submitter limit does not apply to the group's quota (HTCondor truncates the group limit
    to whole slots instead, which under-serves weighted slots)."""
    acct, mm, stats, now = cyc.accountant, cyc.matchmaker, cyc.stats, cyc.now
    used = used_unclaimed = 0.0
    rank_only = False
    limit_rejection = False
    rejected: set[int] = set()
    if s.name not in cyc.negotiated:
        cyc.negotiated.add(s.name)
        stats.active_submitter_count += 1
        stats.num_idle_jobs += s.advertised_idle

    def permit(state: PreemptState, cost: float) -> bool:
        if state is PreemptState.RANK:
            return True
        if group is not None and acct.weighted_usage(group) + cost > group_quota * (1 + 1e-6) + _EPS:
            return False
        if state is PreemptState.PRIO:
            return _permits(used, limit, cost)
        return _permits(used_unclaimed, limit_unclaimed, cost)

    for ri, req in enumerate(s.requests):
        if s.placed[ri] >= len(req.jobs) or req.autocluster in rejected:
            continue
        job: ClassAd | None = None  # the request ad with the ephemeral attributes, made when needed
        token: Hashable = cyc.session_token(s.name, negotiating_group)
        static_limits, admit = _limit_checks(cyc, req.ad)
        while s.placed[ri] < len(req.jobs):
            if cyc.timer() >= deadline:
                return False, used
            if used >= limit - _EPS and not (used <= 0 and limit > 0):
                if not ignore_limit:
                    return False, used
                rank_only = True
            if used >= ceil_left:
                return False, used
            stats.num_jobs_considered += 1
            jid = req.jobs[s.placed[ri]]
            barred = cyc.limits.exhausted(static_limits) if static_limits else None
            if barred is not None:
                cand, reason = None, f"concurrency limit {barred} reached"
            elif rank_only and not mm.rank_possible:
                cand, reason = None, "no match found"  # nothing to preempt by RANK: no scan needed
            else:
                if job is None:
                    job = cyc.request_ad(s.name, req.ad, negotiating_group, autoregroup)
                    static_limits, admit = _limit_checks(cyc, job)
                if cyc.live_sensitive:
                    cyc.refresh_request(job, s.name)
                cand, reason, token = mm.best(s.name, req.signature, token, job, rank_only, permit, mm.cost,
                                              admit)
                limit_rejection = limit_rejection or (cand is None and mm.limit_rejected)
            if cand is None:
                stats.rejections += 1
                cyc.result.rejections.append(Rejection(s.name, jid, reason))
                rejected.add(req.autocluster)
                break
            assert job is not None
            cost = mm.cost(cand)
            slot_ad = cyc.table.ads[cand.index]
            limits = static_limits if admit is None else _evaluated_limits(cyc, job, slot_ad)
            n = _packed(slot_ad, job) if cyc.policy.depth_first else 1
            packed = req.jobs[s.placed[ri] + 1: s.placed[ri] + n]
            _record(cyc, s, jid, cand, cost, negotiating_group, autoregroup, packed, limits)
            mm.take(cand)
            acct.add_match(s.name, cost, now)
            if limits:
                cyc.limits.add(limits)
            cyc.usage_epoch += 1
            s.placed[ri] += 1 + len(packed)
            used += cost
            if cand.state is PreemptState.NONE:
                used_unclaimed += cost
    if used >= limit - _EPS or limit_rejection:
        if s.name not in stats.submitters_share_limit:
            stats.submitters_share_limit.append(s.name)
        return False, used
    return True, used


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


def _packed(slot: ClassAd, job: ClassAd) -> int:
    """NEGOTIATOR_DEPTH_FIRST: how many of the request's jobs the schedd will start in the slot,
    ``min(Cpus / RequestCpus, Memory / RequestMemory)`` in whole jobs, at least 1."""
    fits = []
    for have, want in (("Cpus", "RequestCpus"), ("Memory", "RequestMemory")):
        h = number(literal(slot, have))
        w = number(job.evaluate(want, None, slot))
        if h is not None and w is not None and w > 0:
            fits.append(int(h // w))
    return max(1, min(fits)) if fits else 1


def _record(cyc: NegotiationCycle, s: SubmitterState, jid: tuple[int, int], cand: Candidate,
            cost: float, negotiating_group: str, autoregroup: bool,
            packed: tuple[tuple[int, int], ...] = (), limits: str = "") -> None:
    t = cyc.table
    slot: ClassAd = t.ads[cand.index]
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
        )
    )
    del slot
    cyc.stats.matches += 1
    if s.name in cyc.result.shares:
        cyc.result.shares[s.name].matches += 1
