"""A daemon's DaemonCore statistics in the live pool: readings of its process, added to its ads.

``DaemonStatistics`` holds the daemon's ``statistics.DaemonCoreStats`` and its ``DC`` settings
(``STATISTICS_TO_PUBLISH``, the window knobs), counts the requests it answers and the passes of
its timer loop, and reads its process for the self-monitor: CPU time (``os.times``), image and
resident sizes (``/proc/self/statm``) and open sockets (``/proc/self/fd``). Reading the process is
done at most once a second, however many ads go out. ``decorate(ad, now)`` gives the ad with the
statistics attributes added; every ad a daemon advertises about itself gets them, a Submitter ad
(a user's, not the schedd's) does not.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.statistics import (
    Collection,
    DaemonCoreStats,
    SelfReading,
    StatsSettings,
    parse_publish,
    statistics_settings,
)

log = logging.getLogger("htcpool.statistics")
_NOT_THE_DAEMONS = frozenset({"submitter"})
_PAGE_KIB = max(1, os.sysconf("SC_PAGE_SIZE") // 1024) if hasattr(os, "sysconf") else 4


def read_process() -> SelfReading:
    """This process's CPU time, sizes and open sockets (0 where the system does not say)."""
    times = os.times()
    image = resident = sockets = 0
    try:
        fields = Path("/proc/self/statm").read_text().split()
        image, resident = int(fields[0]) * _PAGE_KIB, int(fields[1]) * _PAGE_KIB
    except (OSError, ValueError, IndexError):
        pass
    try:
        with os.scandir("/proc/self/fd") as entries:
            for entry in entries:
                try:
                    sockets += os.readlink(entry.path).startswith("socket:")
                except OSError:
                    continue
    except OSError:
        pass
    return SelfReading(times.user + times.system, image, resident, sockets)


class DaemonStatistics:
    def __init__(self, config: Config, started: float, name: str) -> None:
        self.name = name
        self.settings = self._settings(config)
        self.stats = DaemonCoreStats(started, self.settings.make_window(started))
        self._read_at = float("-inf")
        self._attrs: dict[str, object] = {}

    def _settings(self, config: Config) -> StatsSettings:
        problems: list[str] = []
        settings = statistics_settings(config.get_str, Collection.DC, problems)
        for problem in problems:
            log.warning("%s: %s", self.name, problem)
        return settings

    def reconfigure(self, config: Config) -> None:
        self.settings = self._settings(config)

    def attributes(self, now: float, which: str = "") -> dict[str, object]:
        """The statistics attributes at ``now``: as configured, or as ``which`` asks (the syntax of
        ``STATISTICS_TO_PUBLISH``, from ``condor_status -statistics``; read afresh)."""
        if which:
            return self.stats.publish(parse_publish(which, Collection.DC), now, read_process())
        if now - self._read_at >= 1.0:
            self._read_at = now
            self._attrs = self.stats.publish(self.settings.publish, now, read_process())
        return self._attrs

    def decorate(self, ad: ClassAd, now: float) -> ClassAd:
        """``ad`` with the statistics attributes (a copy; the ad itself is left alone)."""
        my_type = ad.get("MyType")
        if not isinstance(my_type, str) or my_type.lower() in _NOT_THE_DAEMONS:
            return ad
        out = ad.copy()
        out.update(self.attributes(now))
        return out
