"""Daemon statistics: counters with a recent window, published as ``STATISTICS_TO_PUBLISH`` asks.

A core like the others: every time is passed in and readings of the process come from the
driver. ``publish`` reads the knob's syntax; ``window`` holds the lifetime and ``Recent`` counts;
``daemoncore`` is what every daemon publishes (duty cycle, self-monitor); ``schedd`` and
``collector`` are those daemons' own collections; ``settings`` reads the knobs. docs/statistics.md
lists every attribute.
"""

from htcpool.statistics.collector import CollectorStats, pool_summary
from htcpool.statistics.daemoncore import DaemonCoreStats, SelfReading
from htcpool.statistics.publish import DEFAULTS, NOTHING, Collection, Publish, parse_publish
from htcpool.statistics.schedd import ScheddStats
from htcpool.statistics.settings import KNOB, StatsSettings, default_settings, statistics_settings
from htcpool.statistics.window import RecentSum, Window, publish_recent

__all__ = [
    "DEFAULTS",
    "KNOB",
    "NOTHING",
    "Collection",
    "CollectorStats",
    "DaemonCoreStats",
    "Publish",
    "RecentSum",
    "ScheddStats",
    "SelfReading",
    "StatsSettings",
    "Window",
    "default_settings",
    "parse_publish",
    "pool_summary",
    "publish_recent",
    "statistics_settings",
]
