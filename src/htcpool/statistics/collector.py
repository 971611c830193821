"""The collector's statistics (the ``COLLECTOR`` collection) and its own ad's pool summary.

Its own ``Collector`` ad always carries a summary of the pool it holds, as HTCondor's does (the
``condor_status -collector`` columns): ``HostsTotal`` (slot ads), ``HostsClaimed``,
``HostsUnclaimed`` and ``HostsOwner`` (by ``State``), ``RunningJobs`` and ``IdleJobs`` (the sums
over the Submitter ads), ``SubmitterAds`` and ``MachineAds``. Absent ads are not counted.

At level 1 it adds the updates it has received (the manual's collector ClassAd attributes):
``UpdatesTotal``, ``UpdatesInitial`` (updates of an ad it did not hold) and ``UpdatesLost``
(updates a daemon sent that never arrived, from the gaps in each daemon's
``UpdateSequenceNumber``), each with its ``Recent`` value, and ``StatsLifetime`` /
``RecentStatsLifetime``; level 2 adds ``RecentWindowMax``.
"""

from __future__ import annotations

from collections.abc import Iterable

from htcpool.classad import ClassAd, as_number
from htcpool.statistics.publish import Publish
from htcpool.statistics.window import RecentSum, Window, publish_recent


class CollectorStats:
    def __init__(self, window: Window) -> None:
        self.window = window
        self.total = RecentSum(window)
        self.initial = RecentSum(window)
        self.lost = RecentSum(window)

    def note_update(self, now: float, *, initial: bool, lost: int) -> None:
        self.total.add(1, now)
        if initial:
            self.initial.add(1, now)
        if lost > 0:
            self.lost.add(lost, now)

    def publish(self, flags: Publish, now: float) -> dict[str, object]:
        attrs: dict[str, object] = {}
        if not flags.on:
            return attrs
        attrs["StatsLifetime"] = self.window.lifetime(now)
        if flags.recent:
            attrs["RecentStatsLifetime"] = self.window.recent_lifetime(now)
            if flags.level >= 2:
                attrs["RecentWindowMax"] = self.window.seconds
        options = {"lifetime": flags.lifetime, "recent": flags.recent, "zeros": flags.zeros}
        publish_recent(attrs, "UpdatesTotal", self.total, now, **options)
        publish_recent(attrs, "UpdatesInitial", self.initial, now, **options)
        publish_recent(attrs, "UpdatesLost", self.lost, now, **options)
        return attrs


def _count(ad: ClassAd, attr: str) -> int:
    value = as_number(ad.get(attr))
    return int(value) if value is not None else 0


def pool_summary(machines: Iterable[ClassAd], submitters: Iterable[ClassAd]) -> dict[str, object]:
    """The pool summary of the collector's own ad (see the module rules)."""
    states = {"Claimed": 0, "Unclaimed": 0, "Owner": 0}
    hosts = 0
    for ad in machines:
        hosts += 1
        state = ad.get("State")
        if isinstance(state, str) and state in states:
            states[state] += 1
    running = idle = submitter_ads = 0
    for ad in submitters:
        submitter_ads += 1
        running += _count(ad, "RunningJobs")
        idle += _count(ad, "IdleJobs")
    return {"HostsTotal": hosts, "HostsClaimed": states["Claimed"], "HostsUnclaimed": states["Unclaimed"],
            "HostsOwner": states["Owner"], "RunningJobs": running, "IdleJobs": idle,
            "SubmitterAds": submitter_ads, "MachineAds": hosts}


__all__ = ["CollectorStats", "pool_summary"]
