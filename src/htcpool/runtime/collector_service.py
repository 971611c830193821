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
the knob.

Messages and administrative commands are dispatched by table; a malformed
constraint or an ad without ``MyType`` and ``Name`` is refused with 400.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused


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

    def _advertise(self, now: float) -> None:
        host = self.daemon.host
        self.store.update(ClassAd({"MyType": "Collector", "Name": f"collector@{host}", "Machine": host,
                                   "MyAddress": self.daemon.url, "DaemonStartTime": int(self.started)}), now)
        self.next_advert = now + self.update_interval

    async def start(self) -> None:
        self._advertise(self.daemon.clock())

    async def stop(self, how: How) -> None:
        return None

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        handler = self.handlers.get(type(message))
        if handler is None:
            raise RequestRefused(400, f"the collector does not take {type(message).__name__}")
        return await handler(message, self.daemon.clock())

    async def _update(self, message: UpdateAd, now: float) -> Ok:
        if "MyType" not in message.ad or "Name" not in message.ad:
            raise RequestRefused(400, "UpdateAd: the ad needs MyType and Name")
        self.store.update(message.ad, now, private=message.private)
        return Ok()

    async def _invalidate(self, message: InvalidateAd, now: float) -> Ok:
        try:
            count = self.store.invalidate(message.my_type, message.name or None,
                                          message.constraint or None, now=now)
        except CollectorError as e:
            raise RequestRefused(400, str(e)) from None
        return Ok(f"{count} ads removed")

    async def _query(self, message: QueryAds, now: float) -> AdList:
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
        expiry = self.store.next_deadline()
        return self.next_advert if expiry is None else min(expiry, self.next_advert)

    async def on_timer(self, now: float) -> None:
        if now >= self.next_advert:
            self._advertise(now)  # first, so the collector's own ad is never the one that expires
        self.store.expire(now)
