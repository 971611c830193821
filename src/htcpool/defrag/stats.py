"""The defrag daemon's statistics, as its ad publishes them.

HTCondor's manual, "Defrag ClassAd Attributes", lists them; this module keeps them and
writes them into the ad:

* lifetime counts ``DrainSuccesses`` / ``DrainFailures`` and their ``Recent*`` forms, the
  count over the last ``RecentWindowMax`` seconds (ten polling intervals), kept as a ring
  of one bucket per interval that ``tick(now)`` advances;
* the last poll's ``MachinesDraining`` and ``WholeMachines`` and the largest values
  seen (``MachinesDrainingPeak``, ``WholeMachinesPeak``);
* ``AvgDrainingBadput`` / ``AvgDrainingUnclaimed``: the pool's draining cost, each
  startd's ``TotalMachineDrainingBadput`` (``…UnclaimedTime``) over its age, summed and
  divided by the pool's cores (``DrainingCost``, worked out from the last poll's ads when the
  ad is published, outside the poll's decision);
* arrivals of drained machines: a machine newly whole, or one no longer draining,
  counts as arrived; from the second arrival on, ``DrainedMachines`` is the number
  arrived, ``MeanDrainedArrival`` machines per second over the time they took and
  ``MeanDrainedArrivalSD`` the spread of the per-arrival rate around that mean;
* ``RecentDrainsList`` and ``RecentCancelsList``: the last ten drain and cancel
  commands, newest first, as ads ``[when; who; what]`` / ``[when; who]``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from htcpool.classad import ClassAd, EvalContext
from htcpool.defrag.evaluate import attributes

RECENT_BUCKETS = 10
#: what the draining cost reads of each ad (lower-case names), in ``DrainingCost.add``'s order
COSTED = ("slotid", "totalmachinedrainingbadput", "totalmachinedrainingunclaimedtime", "daemonstarttime",
          "lastheardfrom", "totalcpus")
LIST_LENGTH = 10


@dataclass
class RecentCount:
    """A lifetime count and its count over the last ``RECENT_BUCKETS`` quanta."""

    total: int = 0
    buckets: deque[int] = field(default_factory=lambda: deque([0], maxlen=RECENT_BUCKETS))

    def add(self, n: int = 1) -> None:
        self.total += n
        self.buckets[-1] += n

    def advance(self, quanta: int) -> None:
        for _ in range(min(quanta, RECENT_BUCKETS)):
            self.buckets.append(0)

    @property
    def recent(self) -> int:
        return sum(self.buckets)


@dataclass
class Arrivals:
    """Drained machines arriving (HTCondor's defrag: newly whole plus no longer draining)."""

    arrived: int = 0
    last_arrival: float = 0.0
    interval_sum: float = 0.0
    squared_deviation: float = 0.0
    mean: float = 0.0
    sd: float = 0.0

    def record(self, now: float, newly: int) -> None:
        if newly <= 0:
            return
        rate = 0.0
        if self.last_arrival > 0:
            self.arrived += newly
            waited = max(1.0, math.floor(now - self.last_arrival))
            self.interval_sum += newly * waited
            rate = newly / waited
        self.last_arrival = now
        if self.interval_sum > 0:
            self.mean = self.arrived / self.interval_sum
            diff = rate - self.mean
            self.squared_deviation += diff * diff
            self.sd = math.sqrt(self.squared_deviation / self.arrived)


@dataclass(frozen=True, slots=True)
class Command:
    """One drain or cancel command as the recent lists show it."""

    when: float
    who: str
    what: str = ""

    def ad(self) -> ClassAd:
        fields: dict[str, Any] = {"when": int(self.when), "who": self.who}
        if self.what:
            fields["what"] = self.what
        return ClassAd(fields)


@dataclass
class DrainingCost:
    """AvgDrainingBadput and AvgDrainingUnclaimed, summed one ad at a time: over the ads of
    ``SlotID == 1`` that carry the startd's draining totals, each total over the startd's age,
    summed, over the pool's cores (``average``)."""

    badput: float = 0.0
    unclaimed: float = 0.0
    cpus: int = 0

    def add(self, slot_id: Any, badput: Any, unclaimed: Any, started: Any, heard: Any, cpus: Any) -> None:
        """One ad's ``SlotID``, ``TotalMachineDrainingBadput``, ``TotalMachineDrainingUnclaimedTime``,
        ``DaemonStartTime``, ``LastHeardFrom`` and ``TotalCpus`` (None when absent)."""
        if slot_id != 1 or (badput is None and unclaimed is None):
            return
        if type(started) is not int or type(heard) is not int:
            started, heard = _int(started), _int(heard)
        age = heard - started
        if not started or not heard or age <= 0:
            return
        self.badput += (badput if type(badput) is int else _int(badput)) / age
        self.unclaimed += (unclaimed if type(unclaimed) is int else _int(unclaimed)) / age
        self.cpus += cpus if type(cpus) is int else _int(cpus)

    @classmethod
    def of(cls, ads: Iterable[ClassAd], ctx: EvalContext) -> tuple[float, float]:
        """The averages over ``ads``."""
        cost = cls()
        for ad in ads:
            cost.add(*attributes(ad, COSTED, ctx))
        return cost.average()

    def average(self) -> tuple[float, float]:
        if self.cpus > 0:
            return self.badput / self.cpus, self.unclaimed / self.cpus
        return self.badput, self.unclaimed


def _int(value: object) -> int:
    return int(value) if type(value) in (int, float) else 0  # type: ignore[call-overload]


@dataclass
class DefragStats:
    """Everything the Defrag ad counts (see the module docstring)."""

    started: float
    quantum: float = 600.0
    last_tick: float = 0.0
    successes: RecentCount = field(default_factory=RecentCount)
    failures: RecentCount = field(default_factory=RecentCount)
    machines_draining: int = 0
    machines_draining_peak: int = 0
    whole_machines: int = 0
    whole_machines_peak: int = 0
    avg_draining_badput: float = 0.0
    avg_draining_unclaimed: float = 0.0
    arrivals: Arrivals = field(default_factory=Arrivals)
    drains: deque[Command] = field(default_factory=lambda: deque(maxlen=LIST_LENGTH))
    cancels: deque[Command] = field(default_factory=lambda: deque(maxlen=LIST_LENGTH))

    def __post_init__(self) -> None:
        self.last_tick = self.started

    def tick(self, now: float) -> None:
        """Move the recent windows on by the whole quanta since the last tick."""
        if self.quantum <= 0 or now <= self.last_tick:
            return
        quanta = int((now - self.last_tick) // self.quantum)
        if quanta:
            self.successes.advance(quanta)
            self.failures.advance(quanta)
            self.last_tick += quanta * self.quantum

    def observe(self, draining: int, whole: int) -> None:
        self.machines_draining = draining
        self.machines_draining_peak = max(self.machines_draining_peak, draining)
        self.whole_machines = whole
        self.whole_machines_peak = max(self.whole_machines_peak, whole)

    @property
    def window(self) -> float:
        return RECENT_BUCKETS * self.quantum

    def publish(self, ad: ClassAd, now: float) -> None:
        """Write every statistic into ``ad`` (the Defrag ad)."""
        self.tick(now)
        lifetime = max(0.0, now - self.started)
        ad.update({
            "DrainSuccesses": self.successes.total, "RecentDrainSuccesses": self.successes.recent,
            "DrainFailures": self.failures.total, "RecentDrainFailures": self.failures.recent,
            "MachinesDraining": self.machines_draining, "MachinesDrainingPeak": self.machines_draining_peak,
            "WholeMachines": self.whole_machines, "WholeMachinesPeak": self.whole_machines_peak,
            "AvgDrainingBadput": self.avg_draining_badput, "AvgDrainingUnclaimed": self.avg_draining_unclaimed,
            "DrainedMachines": self.arrivals.arrived, "MeanDrainedArrival": self.arrivals.mean,
            "MeanDrainedArrivalSD": self.arrivals.sd,
            "RecentDrainsList": [c.ad() for c in reversed(self.drains)],
            "RecentCancelsList": [c.ad() for c in reversed(self.cancels)],
            "StatsLifetime": int(lifetime), "StatsLastUpdateTime": int(now),
            "RecentStatsLifetime": int(min(lifetime, self.window)), "RecentWindowMax": int(self.window),
            "RecentStatsTickTime": int(self.last_tick),
        })
