"""The pie spin: sharing a pool (or a group's quota) among submitters by their priorities.

Rules (the HTCondor manual's "Negotiation" and "The Layperson's Description of the Pie Spin and
Pie Slice"; HTCondor 25 ``matchmaker.cpp``, ``negotiateWithGroup``):

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
* A submitter's turn is a session (``session.py``): its jobs are matched until its slice, its
  ceiling, its group's quota or its time runs out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from htcpool.negotiator.globalprios import INT_MIN, JobPriosSource, consolidate
from htcpool.negotiator.outcomes import SubmitterShare
from htcpool.negotiator.requests import ResourceRequest
from htcpool.negotiator.session import SubmitterSession
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


@dataclass(eq=False)
class _Spin:
    """One turn of the pie: the shares of the submitters still in it, and what each may take."""

    cyc: NegotiationCycle
    group: str | None
    group_quota: float
    number: int  # 1 for the first spin of this pie
    floor_round: bool
    negotiating_group: str
    autoregroup: bool
    eup: dict[str, float]
    inv_sum: float
    pie: float
    group_usage: float
    starvation: dict[str, float] = field(default_factory=dict)

    @property
    def ignore_limit(self) -> bool:
        """The first spin with preemption considered: RANK preemption past the slice is allowed."""
        return self.number == 1 and self.cyc.policy.consider_preemption

    def limits(self, s: SubmitterState, floor: bool) -> tuple[float, float, float]:
        """(share, limit, unclaimed limit) of ``s``: its slice of the pie less what it uses."""
        acct, pol = self.cyc.accountant, self.cyc.policy
        share = (1.0 / self.eup[s.name]) / self.inv_sum
        usage = acct.weighted_usage(s.name)
        limit = math.inf if pol.ignore_user_priorities else max(0.0, share * self.pie - usage)
        unclaimed = limit
        if self.group:
            unclaimed = min(limit, max(0.0, self.group_quota - self.group_usage))
        if not pol.consider_preemption:
            limit = unclaimed
        if floor:
            limit = min(acct.record(s.name).floor, limit)
        return share, limit, unclaimed

    def pie_left(self, subs: list[SubmitterState]) -> float:
        """The sum of the submitters' limits; records each one's starvation on the way."""
        acct = self.cyc.accountant
        left = 0.0
        for s in subs:
            _, lim, _ = self.limits(s, False)
            left += lim
            usage = acct.weighted_usage(s.name)
            self.starvation[s.name] = usage / (usage + lim) if usage + lim > 0 else 3.4e38
        return left

    def sort(self, subs: list[SubmitterState]) -> list[SubmitterState]:
        """The order of the walk: EUP, then (USE_GLOBAL_JOB_PRIOS) JobPrio, starvation, input order."""
        cyc, eup, starvation = self.cyc, self.eup, self.starvation
        t_sort = cyc.timer()
        if cyc.policy.use_global_job_prios:  # JobPrio between EUP and starvation, then merge neighbours
            subs.sort(key=lambda s: (eup[s.name], -(INT_MIN if s.job_prio is None else s.job_prio),
                                     starvation[s.name], s.order))
            subs = consolidate(subs)
        else:
            subs.sort(key=lambda s: (eup[s.name], starvation[s.name], s.order))
        cyc.stats.phase3_duration += cyc.timer() - t_sort
        return subs

    def offer(self, s: SubmitterState, pie_left: float) -> tuple[bool, float]:
        """The submitter's turn in this spin; returns (done with it, weighted usage matched).
        The outcome is the first of ``negotiateWithGroup``'s rules that applies: no idle jobs, the
        submitter's, schedd's or cycle's time spent, a slice or pie below one slot after the first
        spin, no ceiling headroom; otherwise negotiate."""
        cyc, acct = self.cyc, self.cyc.accountant
        share, limit, unclaimed = self.limits(s, self.floor_round)
        if self.number == 1:
            cyc.result.shares.setdefault(s.name, SubmitterShare(share, share * self.pie, self.starvation[s.name]))
        limit = min(limit, pie_left)
        rec = acct.record(s.name)
        usage = acct.weighted_usage(s.name)
        ceil_left = math.inf if rec.ceiling < 0 else max(0.0, rec.ceiling - int(usage))
        t_start = cyc.timer()
        idle = s.idle_jobs()
        deadline = _deadline(cyc, s, t_start) if idle else None  # None: a time limit is spent
        if not idle or deadline is None:
            return True, 0.0
        if self.number > 1 and (limit < cyc.min_slot_weight or pie_left < cyc.min_slot_weight):
            return False, 0.0
        if ceil_left == 0 or ceil_left < cyc.min_slot_weight:
            return True, 0.0
        s.begin_session()
        session = SubmitterSession(cyc, s, limit, unclaimed, self.ignore_limit, ceil_left, self.negotiating_group,
                           self.autoregroup, self.group, self.group_quota, deadline)
        done = session.run()
        s.end_session()
        elapsed = cyc.timer() - t_start
        cyc.submitter_time[s.name] = cyc.submitter_time.get(s.name, 0.0) + elapsed
        cyc.schedd_time[s.schedd] = cyc.schedd_time.get(s.schedd, 0.0) + elapsed
        return done, session.used


def _start_spin(cyc: NegotiationCycle, subs: list[SubmitterState], number: int, group: str | None,
                group_quota: float, group_usage: float, floor_round: bool, negotiating_group: str,
                autoregroup: bool) -> _Spin:
    eup = {s.name: cyc.accountant.effective_priority(s.name) for s in subs}
    return _Spin(cyc, group, group_quota, number, floor_round, negotiating_group, autoregroup, eup,
                 sum(1.0 / e for e in eup.values()), min(cyc.pool_weight, group_quota), group_usage)


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
    number = 0
    while True:
        number += 1
        stats.pie_spins += 1
        cyc.matchmaker.forget_walks()
        ignore_limit = number == 1 and pol.consider_preemption
        group_usage = acct.weighted_usage(group) if group else 0.0
        if group and not ignore_limit and group_usage >= group_quota:
            break
        if not pol.consider_preemption:
            subs = [s for s in subs if s.idle_jobs() > 0]
        if not subs:
            break
        spin = _start_spin(cyc, subs, number, group, group_quota, group_usage, floor_round,
                           negotiating_group, autoregroup)
        pie_left = spin.pie_left(subs)
        if not pol.consider_preemption and pie_left <= 0:
            break
        if number == 1:
            subs = spin.sort(subs)
        pie_left_orig = pie_left
        removed = False
        for s in list(subs):
            if group and not ignore_limit and acct.weighted_usage(group) >= group_quota:
                break
            done, used = spin.offer(s, pie_left)
            pie_left -= used
            if done:
                subs.remove(s)
                removed = True
        if floor_round or not subs or not cyc.table.left:
            break
        if not (pie_left < pie_left_orig - _EPS or removed):
            break


def _deadline(cyc: NegotiationCycle, s: SubmitterState, now: float) -> float | None:
    """When this session must end (``negotiateWithGroup``: now plus the least of the per-spin,
    cycle, submitter and schedd time left), or None when the submitter's, its schedd's or the
    cycle's time is already spent, each as the injected timer counts it. The names are recorded as
    HTCondor's statistics list them."""
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
