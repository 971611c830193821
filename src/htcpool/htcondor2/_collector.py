"""``Collector``: the pool's ads through HTCondor's bindings API.

``query`` sends ``QueryAds`` for the ad type an ``AdType`` names (HTCondor's
``MyType`` values: ``Machine`` for slots, ``Scheduler``, ``DaemonMaster`` …);
``locate`` and ``locateAll`` find daemons by their ads and answer location ads
(``MyType``, ``Name``, ``Machine``, ``MyAddress``) that ``Schedd``, ``Startd``,
``Negotiator``, ``RemoteParam`` and ``send_command`` accept; ``directQuery`` asks
a startd itself (as ``condor_status -direct``) and other daemons through their
collector ad; ``advertise`` sends ``UpdateAd`` (or ``InvalidateAd`` for the
``INVALIDATE_*`` commands). HTCondor manual, "Python bindings, version 2 API
reference", class Collector.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from htcpool.htcondor2._enums import AdType, DaemonType
from htcpool.htcondor2._errors import HTCondorException
from htcpool.htcondor2._jobspec import constraint_text, projection_names
from htcpool.htcondor2._pool import Connection, default_connection

AD_TYPES = {AdType.Startd: "Machine", AdType.Slot: "Machine", AdType.StartDaemon: "StartDaemon",
            AdType.Schedd: "Scheduler", AdType.Master: "DaemonMaster", AdType.Submitter: "Submitter",
            AdType.Collector: "Collector", AdType.License: "License", AdType.Any: "Any",
            AdType.Negotiator: "Negotiator", AdType.HAD: "HAD", AdType.Generic: "Generic",
            AdType.Credd: "CredD", AdType.Grid: "Grid", AdType.Placementd: "Placementd",
            AdType.Defrag: "Defrag", AdType.Accounting: "Accounting"}
DAEMON_AD_TYPES = {DaemonType.Master: "DaemonMaster", DaemonType.Schedd: "Scheduler",
                   DaemonType.Startd: "Machine", DaemonType.Collector: "Collector",
                   DaemonType.Negotiator: "Negotiator", DaemonType.Generic: "Generic",
                   DaemonType.Any: "Any"}
#: what a location ad carries
LOCATION = ("MyType", "Name", "Machine", "MyAddress")


def location_ad(ad: Any) -> Any:
    from htcpool.classad import ClassAd

    return ClassAd({name: ad[name] for name in LOCATION if name in ad})


class Collector:
    """The pool's collector (the HTCondor manual's ``htcondor2.Collector``)."""

    def __init__(self, pool: Any = None, security: Any = None) -> None:
        self._conn = default_connection()
        self._address: str | None = None
        if isinstance(pool, list | tuple):
            pool = pool[0] if pool else None
        if isinstance(pool, str) and pool:
            if pool.startswith(("http://", "https://")):
                self._address = pool
            elif (Path(pool) / "pool.token").exists():
                self._conn = Connection(pool)
            else:
                raise HTCondorException(f"cannot find the pool {pool!r}: give the collector's URL or "
                                        "the pool's local directory")
        elif pool is not None and hasattr(pool, "get"):
            self._address = pool.get("MyAddress")

    @classmethod
    def _of(cls, conn: Connection) -> Collector:
        collector = cls.__new__(cls)
        collector._conn, collector._address = conn, None
        return collector

    def _query(self, my_type: str, constraint: str = "", projection: tuple[str, ...] = (),
               statistics: str = "") -> list[Any]:
        from htcpool.protocol import QueryAds

        reply = self._conn.send("collector", QueryAds(my_type, constraint, projection, statistics=statistics),
                                self._address)
        return list(reply.ads)

    def query(self, ad_type: AdType = AdType.Any, constraint: Any = None,
              projection: Iterable[str] | None = None, statistics: str | None = None) -> list[Any]:
        """Ads of ``ad_type`` for which ``constraint`` is true (only ``projection``'s attributes)."""
        if not isinstance(ad_type, AdType):
            raise TypeError("ad_type must be an AdType")
        if ad_type is AdType.StartdPrivate:
            raise HTCondorException("AdType.StartdPrivate is not served: claim ids are given to the "
                                    "negotiator only")
        return self._query(AD_TYPES[ad_type], constraint_text(constraint), projection_names(projection),
                           statistics or "")

    def locateAll(self, daemon_type: DaemonType) -> list[Any]:  # noqa: N802 - htcondor2's name
        """Location ads of every daemon of ``daemon_type``."""
        my_type = _daemon_ad_type(daemon_type)
        seen: dict[str, Any] = {}
        for ad in self._query(my_type, "", LOCATION):
            key = str(ad.get("MyAddress", "")) if my_type == "Machine" else str(ad.get("Name", ""))
            if key not in seen:
                seen[key] = location_ad(ad)
        return list(seen.values())

    def locate(self, daemon_type: DaemonType, name: str | None = None) -> Any:
        """The location ad of the daemon of ``daemon_type`` named ``name`` (any one without)."""
        for ad in self.locateAll(daemon_type):
            if name is None or name.lower() in (str(ad.get("Name", "")).lower(),
                                                str(ad.get("Machine", "")).lower()):
                return ad
        raise HTCondorException(f"Unable to find the {daemon_type.name.lower()} daemon"
                                + (f" named {name}" if name else "") + " in the collector")

    def directQuery(self, daemon_type: DaemonType, name: str | None = None,  # noqa: N802
                    projection: Iterable[str] | None = None, statistics: str | None = None) -> Any:
        """The ad of one daemon, from the daemon itself where it answers queries (the startd)."""
        from htcpool.protocol import QueryAds

        names = projection_names(projection)
        location = self.locate(daemon_type, name)
        if daemon_type is DaemonType.Startd:
            reply = self._conn.send("startd", QueryAds("Machine", "", names, statistics=statistics or ""),
                                    location["MyAddress"])
            ads = list(reply.ads)
        else:
            constraint = f"Name == {_quote(location.get('Name', ''))}"
            ads = self._query(_daemon_ad_type(daemon_type), constraint, names, statistics or "")
        if not ads:
            raise HTCondorException(f"the {daemon_type.name.lower()} at {location.get('MyAddress')} "
                                    "answered no ad")
        return ads[0]

    def advertise(self, ad_list: list[Any], command: str = "UPDATE_AD_GENERIC",
                  use_tcp: bool = True) -> None:
        """Send ``ad_list`` to the collector (``INVALIDATE_…`` commands withdraw them)."""
        from htcpool.classad import ClassAd
        from htcpool.protocol import InvalidateAd, UpdateAd

        if not isinstance(command, str) or not command.upper().startswith(("UPDATE_", "INVALIDATE_",
                                                                           "MERGE_")):
            raise ValueError(f"unknown advertise command {command!r}")
        for ad in ad_list:
            if not isinstance(ad, ClassAd):
                raise TypeError("ad_list must be a list of ClassAds")
            if "MyType" not in ad or "Name" not in ad:
                raise HTCondorException("an advertised ad needs MyType and Name")
            if command.upper().startswith("INVALIDATE_"):
                message: Any = InvalidateAd(str(ad["MyType"]), str(ad["Name"]))
            else:
                message = UpdateAd(ad)
            self._conn.send("collector", message, self._address)


def _daemon_ad_type(daemon_type: DaemonType) -> str:
    if not isinstance(daemon_type, DaemonType):
        raise TypeError("daemon_type must be a DaemonType")
    found = DAEMON_AD_TYPES.get(daemon_type)
    if found is None:
        raise HTCondorException(f"htcpool pools have no {daemon_type.name} daemon")
    return found


def _quote(text: Any) -> str:
    from htcpool.classad import quote

    return quote(str(text))
