"""The collector daemon: the ad store of ``htcpool.collector`` behind the protocol.

It takes ``UpdateAd`` and ``InvalidateAd`` from every daemon and answers
``QueryAds``. An ad older than its lifetime (``CLASSAD_LIFETIME``, default
900 s, or the ad's own ``ClassAdLifetime``) is dropped when the store's
``next_deadline`` comes: the timer is armed for exactly that second. The
collector advertises itself as a ``Collector`` ad every
``COLLECTOR_UPDATE_INTERVAL`` seconds (default 900), and more often when its
own ad would otherwise outlive ``CLASSAD_LIFETIME``. With ``ABSENT_REQUIREMENTS`` set, an
expiring Machine ad that meets it is kept as absent for ``ABSENT_EXPIRE_ADS_AFTER`` seconds
(``collector.store``); a value that does not parse stops the collector with a message naming
the knob. With ``COLLECTOR_PERSISTENT_AD_LOG`` set (a path; a relative one is taken from the
pool's local directory) beside ``ABSENT_REQUIREMENTS``, the absent ads are written there whenever they change and read back
when the collector starts, so they survive a restart (``runtime/absent_file.py``). The file is
written as soon as machines go absent (one write for all that expire together); the other
changes, an absent ad replaced by its machine's return, invalidated or forgotten, within a second
(a burst of returns is one write), and when the collector stops: a crash loses at most a second
of returns, whose machines replace their restored absent ads with their next update anyway.

The collector's own ad carries the pool summary and the update counts of
``statistics.collector`` (``COLLECTOR`` in ``STATISTICS_TO_PUBLISH``) and DaemonCore's statistics;
it is brought up to date for every query that can return it, with the statistics a query's
``statistics`` field asks for (``condor_status -collector -statistics WHICH``).

Messages and administrative commands are dispatched by table; a malformed
constraint or an ad without ``MyType`` and ``Name`` is refused with 400.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd
from htcpool.collector import (
    DEFAULT_ABSENT_LIFETIME,
    AbsentPolicy,
    AdStore,
    CollectorError,
    compile_constraint,
)
from htcpool.config import Config
from htcpool.config.errors import ConfigValueError
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    Ok,
    QueryAds,
    UpdateAd,
)
from htcpool.runtime.absent_file import read_absent_file, write_absent_file
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.statistics import (
    Collection,
    CollectorStats,
    parse_publish,
    pool_summary,
    statistics_settings,
)

log = logging.getLogger("htcpool.collector")
#: at most this many seconds between a change to the absent ads and its writing to the log
ABSENT_LOG_DELAY = 1.0


def absent_policy(config: Config) -> AbsentPolicy | None:
    """``ABSENT_REQUIREMENTS`` and ``ABSENT_EXPIRE_ADS_AFTER``; None when no requirements are set."""
    text = config.get_expr("ABSENT_REQUIREMENTS")
    if text is None or not text.strip():
        return None
    try:
        requirements = compile_constraint(text)
    except CollectorError as e:
        raise ConfigValueError(f"ABSENT_REQUIREMENTS = {text} is not a valid expression: {e}") from None
    assert requirements is not None  # the text is not blank
    lifetime = config.get_int("ABSENT_EXPIRE_ADS_AFTER", default=DEFAULT_ABSENT_LIFETIME)
    return AbsentPolicy(requirements, max(0, lifetime or 0))


class CollectorService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        lifetime = float(config.get_int("CLASSAD_LIFETIME") or 900)
        self.store = AdStore(default_lifetime=lifetime, absent=absent_policy(config))
        self.update_interval = max(1.0, min(float(config.get_int("COLLECTOR_UPDATE_INTERVAL") or 900), lifetime))
        self.started = daemon.clock()
        self.next_advert = self.started
        problems: list[str] = []
        self.stats_settings = statistics_settings(config.get_str, Collection.COLLECTOR, problems)
        for problem in problems:
            log.warning("collector: %s", problem)
        self.stats = CollectorStats(self.stats_settings.make_window(self.started))
        self.absent_file = self._absent_file(config)
        self.absent_saved = self.store.absent_version
        self.absent_due: float | None = None  # when the changed absent ads are to be written
        self.handlers: dict[type, Callable[[Any, float], Awaitable[Any]]] = {
            UpdateAd: self._update,
            InvalidateAd: self._invalidate,
            QueryAds: self._query,
            DaemonCommand: self._command,
        }
        self.commands: dict[Command, Callable[[DaemonCommand], Awaitable[Ok]]] = {
            Command.OFF: self._off,
            Command.RECONFIG: self._reconfig,
        }

    def _advertise(self, now: float, statistics: str = "") -> None:
        host = self.daemon.host
        ad = ClassAd({"MyType": "Collector", "Name": f"collector@{host}", "Machine": host,
                      "MyAddress": self.daemon.url, "DaemonStartTime": int(self.started),
                      **pool_summary(self.store.query("Machine", projection=("State",), now=now),
                                     self.store.query("Submitter", projection=("RunningJobs", "IdleJobs"), now=now))})
        flags = self.stats_settings.publish if not statistics else parse_publish(statistics, Collection.COLLECTOR)
        ad.update(self.stats.publish(flags, now))
        ad.update(self.daemon.statistics.attributes(now, statistics))
        self.store.update(ad, now)
        self.next_advert = now + self.update_interval

    def _absent_file(self, config: Config) -> Path | None:
        text = config.get_str("COLLECTOR_PERSISTENT_AD_LOG")
        if not text or not text.strip() or self.store.absent is None:  # no absent ads to keep
            return None
        path = Path(text.strip()).expanduser()
        return path if path.is_absolute() else self.daemon.layout.root / path

    def _absent_changed(self, now: float) -> None:
        """An update or invalidation may have changed the absent ads: write the log within
        ``ABSENT_LOG_DELAY`` seconds, so a burst (many machines coming back at once) is one write."""
        if self.absent_file is not None and self.store.absent_version != self.absent_saved \
                and self.absent_due is None:
            self.absent_due = now + ABSENT_LOG_DELAY
            self.daemon.poke()

    def _save_absent(self) -> None:
        """Rewrite the persistent ad log when the absent ads changed since it was last written."""
        self.absent_due = None
        if self.absent_file is not None and self.store.absent_version != self.absent_saved:
            self.absent_saved = self.store.absent_version
            write_absent_file(self.absent_file, self.store.absent_ads())

    async def start(self) -> None:
        now = self.daemon.clock()
        if self.absent_file is not None:
            for ad in read_absent_file(self.absent_file):
                self.store.restore_absent(ad, now)
            self._save_absent()
        self._advertise(now)

    async def stop(self, how: How) -> None:
        self._save_absent()

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        handler = self.handlers.get(type(message))
        if handler is None:
            raise RequestRefused(400, f"the collector does not take {type(message).__name__}")
        return await handler(message, self.daemon.clock())

    async def _update(self, message: UpdateAd, now: float) -> Ok:
        if "MyType" not in message.ad or "Name" not in message.ad:
            raise RequestRefused(400, "UpdateAd: the ad needs MyType and Name")
        held, lost = self.store.count(), self.store.lost_total
        self.store.update(message.ad, now, private=message.private)
        self.stats.note_update(now, initial=self.store.count() > held, lost=self.store.lost_total - lost)
        self._absent_changed(now)
        return Ok()

    async def _invalidate(self, message: InvalidateAd, now: float) -> Ok:
        try:
            count = self.store.invalidate(message.my_type, message.name or None,
                                          message.constraint or None, now=now)
        except CollectorError as e:
            raise RequestRefused(400, str(e)) from None
        self._absent_changed(now)
        return Ok(f"{count} ads removed")

    async def _query(self, message: QueryAds, now: float) -> AdList:
        if message.my_type.lower() in ("collector", "any"):
            self._advertise(now, message.statistics)  # its own ad as it stands now
        try:
            ads = self.store.query(message.my_type, message.constraint or None,
                                   list(message.projection) or None, now=now,
                                   include_private=message.private, limit=message.limit or None)
        except CollectorError as e:
            raise RequestRefused(400, str(e)) from None
        return AdList(tuple(ads))

    async def _command(self, message: DaemonCommand, now: float) -> Ok:
        return await self.daemon.command_handler(self.commands, message)(message)

    async def _off(self, message: DaemonCommand) -> Ok:
        return self.daemon.stop_on_command(message)

    async def _reconfig(self, message: DaemonCommand) -> Ok:
        return Ok("nothing to re-read")

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        times = [self.next_advert, *(t for t in (self.store.next_deadline(), self.absent_due) if t is not None)]
        return min(times)

    async def on_timer(self, now: float) -> None:
        if now >= self.next_advert:
            self._advertise(now)  # first, so the collector's own ad is never the one that expires
        before = self.store.absent_version
        self.store.expire(now)
        if self.store.absent_version != before or (self.absent_due is not None and now >= self.absent_due):
            self._save_absent()  # ads that went absent are written at once, one write per pass
