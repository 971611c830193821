"""Negotiation cycle statistics, published as HTCondor's ``LastNegotiationCycle*<i>`` attributes.

The core has no clock of its own: the cycle is handed a ``timer`` (a monotonic clock from the
driver, or none, in which case every duration is 0) and the cycle's ``now``. Unlike HTCondor 25,
``SlotShareIter`` counts the pie spins and ``CpuTime`` is the whole cycle's time (HTCondor 25's
``matchmaker.cpp`` never increments the first and sets the second to the first phase's CPU time,
defects not copied).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CycleStats:
    time: float = 0.0  # LastNegotiationCycleTime: the cycle's ``now``
    end: float = 0.0
    period: float = 0.0
    duration: float = 0.0
    phase1_duration: float = 0.0  # reading the slots and submitters
    phase2_duration: float = 0.0  # priorities, accounting, trimming, classes
    phase3_duration: float = 0.0  # sorting submitters
    phase4_duration: float = 0.0  # matching
    total_slots: int = 0
    trimmed_slots: int = 0
    candidate_slots: int = 0
    slot_share_iter: int = 0
    num_schedulers: int = 0
    num_idle_jobs: int = 0
    num_jobs_considered: int = 0
    matches: int = 0
    rejections: int = 0
    active_submitter_count: int = 0
    pies: int = 0
    pie_spins: int = 0
    submitters_share_limit: list[str] = field(default_factory=list)
    submitters_failed: list[str] = field(default_factory=list)
    submitters_out_of_time: list[str] = field(default_factory=list)
    schedds_out_of_time: list[str] = field(default_factory=list)

    @property
    def match_rate(self) -> float:
        return self.matches / self.duration if self.duration > 0 else 0.0

    @property
    def match_rate_sustained(self) -> float:
        return self.matches / self.period if self.period > 0 else 0.0

    def attributes(self, suffix: int) -> dict[str, Any]:
        p = "LastNegotiationCycle"
        out: dict[str, Any] = {
            f"{p}Time{suffix}": int(self.time),
            f"{p}End{suffix}": int(self.end),
            f"{p}Period{suffix}": int(self.period),
            f"{p}Duration{suffix}": self.duration,
            f"{p}Phase1Duration{suffix}": self.phase1_duration,
            f"{p}Phase2Duration{suffix}": self.phase2_duration,
            f"{p}Phase3Duration{suffix}": self.phase3_duration,
            f"{p}Phase4Duration{suffix}": self.phase4_duration,
            f"{p}TotalSlots{suffix}": self.total_slots,
            f"{p}TrimmedSlots{suffix}": self.trimmed_slots,
            f"{p}CandidateSlots{suffix}": self.candidate_slots,
            f"{p}SlotShareIter{suffix}": self.slot_share_iter,
            f"{p}NumSchedulers{suffix}": self.num_schedulers,
            f"{p}NumIdleJobs{suffix}": self.num_idle_jobs,
            f"{p}NumJobsConsidered{suffix}": self.num_jobs_considered,
            f"{p}Matches{suffix}": self.matches,
            f"{p}Rejections{suffix}": self.rejections,
            f"{p}MatchRate{suffix}": self.match_rate,
            f"{p}MatchRateSustained{suffix}": self.match_rate_sustained,
            f"{p}ActiveSubmitterCount{suffix}": self.active_submitter_count,
            f"{p}Pies{suffix}": self.pies,
            f"{p}PieSpins{suffix}": self.pie_spins,
            f"{p}CpuTime{suffix}": self.duration,
            f"{p}SubmittersShareLimit{suffix}": ",".join(self.submitters_share_limit),
            f"{p}SubmittersFailed{suffix}": ",".join(self.submitters_failed),
            f"{p}SubmittersOutOfTime{suffix}": ",".join(self.submitters_out_of_time),
            f"{p}ScheddsOutOfTime{suffix}": ",".join(self.schedds_out_of_time),
        }
        return out


class CycleStatsHistory:
    """The last ``NEGOTIATION_CYCLE_STATS_LENGTH`` cycles; suffix 0 is the newest."""

    def __init__(self, length: int = 3) -> None:
        self.length = max(0, min(100, length))
        self.cycles: deque[CycleStats] = deque(maxlen=self.length or 1)

    def record(self, stats: CycleStats) -> None:
        if self.length == 0:
            return
        stats.period = stats.end - self.cycles[0].end if self.cycles else 0.0
        self.cycles.appendleft(stats)

    def attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, s in enumerate(self.cycles):
            out.update(s.attributes(i))
        return out
