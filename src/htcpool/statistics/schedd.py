"""The schedd's statistics (the ``SCHEDD`` collection): what happened to its jobs.

Counted from the job events the schedd core records (the same events its user logs get), each
with a lifetime total and a ``Recent`` total over the window (the manual's schedd ClassAd
attributes):

* ``JobsSubmitted``: submit events; ``JobsStarted`` and ``ShadowsStarted``: execute events (a
  run of a job begins; htcpool's schedd runs jobs without shadow processes, so the two agree);
* ``JobsExited``: runs that ended, by termination or eviction; ``JobsCompleted``: terminations
  (the job finished and leaves the queue); ``JobsExitedNormally``: terminations by the job's
  own exit rather than a signal; ``JobsKilled``: evictions (a run stopped before the job ended);
* ``ShadowsRunning``: the jobs running now (a value, not a count, so it has no ``Recent``).

Level 1 publishes these with ``StatsLifetime`` and ``RecentStatsLifetime``; level 2 adds
``StatsLastUpdateTime``, ``RecentWindowMax`` and ``RecentStatsTickTime``. With ``!Z`` a count
that is 0 over both its lifetime and its window is left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from htcpool.statistics.publish import Publish
from htcpool.statistics.window import RecentSum, Window, publish_recent

#: the user-log event codes counted (HTCondor's ULogEventNumber)
SUBMIT, EXECUTE, EVICTED, TERMINATED = 0, 1, 4, 5
COUNTS = ("JobsSubmitted", "JobsStarted", "JobsExited", "JobsCompleted", "JobsExitedNormally", "JobsKilled",
          "ShadowsStarted")


class ScheddStats:
    def __init__(self, window: Window) -> None:
        self.window = window
        self.counts = {name: RecentSum(window) for name in COUNTS}
        self.last_update = window.started

    def count(self, code: int, now: float, *, signalled: bool = False) -> None:
        """One job event: its user-log code, its time, and for a termination whether a signal ended it."""
        names: tuple[str, ...] = ()
        if code == SUBMIT:
            names = ("JobsSubmitted",)
        elif code == EXECUTE:
            names = ("JobsStarted", "ShadowsStarted")
        elif code == EVICTED:
            names = ("JobsExited", "JobsKilled")
        elif code == TERMINATED:
            names = ("JobsExited", "JobsCompleted") if signalled else ("JobsExited", "JobsCompleted",
                                                                       "JobsExitedNormally")
        for name in names:
            self.counts[name].add(1, now)

    def count_all(self, events: Iterable[tuple[int, float, bool]]) -> None:
        """Many events, each ``(code, time, signalled)``; submit events counted in one step."""
        submitted: dict[float, int] = {}
        for code, when, signalled in events:
            if code == SUBMIT:
                submitted[when] = submitted.get(when, 0) + 1
            elif code in (EXECUTE, EVICTED, TERMINATED):
                self.count(code, when, signalled=signalled)
        for when, n in submitted.items():
            self.counts["JobsSubmitted"].add(n, when)

    def publish(self, flags: Publish, now: float, running: int) -> dict[str, object]:
        attrs: dict[str, object] = {}
        if not flags.on:
            return attrs
        attrs["StatsLifetime"] = self.window.lifetime(now)
        if flags.level >= 2:
            attrs["StatsLastUpdateTime"] = int(self.last_update)
        if flags.recent:
            attrs["RecentStatsLifetime"] = self.window.recent_lifetime(now)
            if flags.level >= 2:
                attrs["RecentWindowMax"] = self.window.seconds
                attrs["RecentStatsTickTime"] = int(now)
        for name, counter in self.counts.items():
            publish_recent(attrs, name, counter, now, lifetime=flags.lifetime, recent=flags.recent,
                           zeros=flags.zeros)
        if flags.lifetime and (flags.zeros or running):
            attrs["ShadowsRunning"] = running
        self.last_update = now
        return attrs


__all__ = ["COUNTS", "ScheddStats"]
