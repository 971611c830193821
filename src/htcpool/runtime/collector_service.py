"""The collector daemon: the ad store of ``htcpool.collector`` behind the protocol.

It takes ``UpdateAd`` and ``InvalidateAd`` from every daemon and answers
``QueryAds``; ads older than their lifetime (``CLASSAD_LIFETIME``, default
900 s, or the ad's own ``ClassAdLifetime``) are dropped every
``COLLECTOR_EXPIRE_INTERVAL`` seconds (htcpool's knob; default 10). It
advertises itself as a ``Collector`` ad.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad import ClassAd
from htcpool.collector import AdStore, CollectorError, CollectorQueryError
from htcpool.protocol import AdList, DaemonCommand, InvalidateAd, Ok, QueryAds, UpdateAd
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused


class CollectorService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        self.store = AdStore(default_lifetime=float(config.get_int("CLASSAD_LIFETIME") or 900))
        self.expire_interval = float(config.get_int("COLLECTOR_EXPIRE_INTERVAL") or 10)
        self.next_expiry = daemon.clock() + self.expire_interval

    def _own_ad(self) -> ClassAd:
        host = self.daemon.config.get_str("FULL_HOSTNAME") or "localhost"
        return ClassAd({"MyType": "Collector", "Name": f"collector@{host}", "Machine": host,
                        "MyAddress": self.daemon.url, "DaemonStartTime": int(self.daemon.clock())})

    async def start(self) -> None:
        self.store.update(self._own_ad(), self.daemon.clock())

    async def handle(self, message: Any) -> Any:
        now = self.daemon.clock()
        if isinstance(message, UpdateAd):
            if "MyType" not in message.ad or "Name" not in message.ad:
                raise RequestRefused(400, "UpdateAd: the ad needs MyType and Name")
            self.store.update(message.ad, now, private=message.private)
            return Ok()
        if isinstance(message, InvalidateAd):
            try:
                count = self.store.invalidate(message.my_type, message.name or None,
                                              message.constraint or None, now=now)
            except CollectorError as e:
                raise RequestRefused(400, str(e)) from None
            return Ok(f"{count} ads removed")
        if isinstance(message, DaemonCommand):
            if message.command == "off":
                self.daemon.request_stop(message.how)
                return Ok()
            if message.command == "reconfig":
                return Ok("nothing to re-read")
            raise RequestRefused(400, f"unknown command {message.command!r}")
        if isinstance(message, QueryAds):
            try:
                ads = self.store.query(message.my_type, message.constraint or None,
                                       list(message.projection) or None, now=now,
                                       include_private=message.private, limit=message.limit or None)
            except CollectorQueryError as e:
                raise RequestRefused(400, str(e)) from None
            return AdList(tuple(ads))
        raise RequestRefused(400, f"the collector does not take {type(message).__name__}")

    def next_deadline(self) -> float | None:
        return self.next_expiry

    async def on_timer(self, now: float) -> None:
        if now >= self.next_expiry:
            self.store.expire(now)
            self.store.update(self._own_ad(), now)
            self.next_expiry = now + self.expire_interval

    async def stop(self, how: str) -> None:
        return None
