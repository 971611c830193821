"""Where a flocking schedd's ads go: the other pools' collectors (``FLOCK_COLLECTOR_HOSTS``).

``schedd/flocking.py`` decides how many of the flock pools each submitter reaches; this module
turns the knob's ``host[:port]`` entries into URLs (read as ``COLLECTOR_HOST`` is:
``runtime/network.py``, port 9618 when none is given, https where encryption is wanted) and
says which of them get each message the schedd core sends its collector: a Submitter ad those
its submitter's flock level reaches, the Scheduler ad those the farthest-flocking submitter
reaches (a pool reached for the first time gets it at once: its startds look the schedd up by
name), a withdrawal (the schedd stopping) all of them.
Entries and numbers that cannot be used are logged, naming the knob, and left out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from htcpool.config import Config, ConfigError
from htcpool.protocol import InvalidateAd, UpdateAd
from htcpool.runtime.network import CollectorHost, parse_collector_host
from htcpool.schedd.flocking import Flocking, FlockSettings, flock_settings

log = logging.getLogger("htcpool.schedd")


class FlockAdvertiser:
    """The flock collectors' URLs and each submitter's flock level."""

    def __init__(self, config: Config, interval: float) -> None:
        self.flocking = Flocking(_settings(config, interval))
        self.urls = _urls(config, self.flocking.settings)
        self.schedd_ad: UpdateAd | None = None  # the last Scheduler ad

    def reconfigure(self, config: Config, interval: float) -> None:
        self.flocking.reconfigure(_settings(config, interval))
        self.urls = _urls(config, self.flocking.settings)

    def sends(self, message: Any, now: float) -> list[tuple[str, Any]]:
        """The (flock collector URL, message) pairs that ``message`` to the schedd's own collector
        brings (module docstring)."""
        if not self.urls:
            return []
        if isinstance(message, InvalidateAd):
            return [(url, message) for url in self.urls]
        if not isinstance(message, UpdateAd):
            return []
        ad = message.ad
        kind = str(ad.get("MyType", ""))
        if kind == "Scheduler":
            self.schedd_ad = message
            return [(url, message) for url in self.urls[:self.flocking.reach()]]
        if kind != "Submitter":
            return []
        before = self.flocking.reach()
        reach = self.flocking.note(str(ad.get("Name", "")), _count(ad.get("IdleJobs")),
                                   _count(ad.get("RunningJobs")), now)
        first = self.schedd_ad  # a pool reached for the first time hears of the schedd at once
        news = [(url, first) for url in self.urls[before:self.flocking.reach()] if first is not None]
        return news + [(url, message) for url in self.urls[:reach]]

    @staticmethod
    def resolver(url: str) -> Callable[[], Awaitable[str | None]]:
        async def resolve() -> str | None:
            return url
        return resolve


def _settings(config: Config, interval: float) -> FlockSettings:
    def get(knob: str) -> str | None:  # unset: flock_settings has HTCondor's defaults
        return config.get_str(knob, subsystem="SCHEDD") if config.is_defined(knob, subsystem="SCHEDD") else None

    settings = flock_settings(get, interval)
    for problem in settings.problems:
        log.warning("configuration: %s", problem)
    return settings


def _urls(config: Config, settings: FlockSettings) -> tuple[str, ...]:
    urls = []
    for entry in settings.collectors:
        try:
            host, port = parse_collector_host(entry)
        except ConfigError as e:
            log.warning("configuration: FLOCK_COLLECTOR_HOSTS: %s; that pool is left out", e)
            continue
        urls.append(CollectorHost(host, port).url(config))
    return tuple(urls)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["FlockAdvertiser"]
