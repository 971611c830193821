"""Messages of the collector: advertise, withdraw and query ads."""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.classad import ClassAd

# --------------------------------------------------------------------------- collector


@dataclass(frozen=True, slots=True)
class UpdateAd:
    """Advertise an ad; ``private`` attributes (claim ids) are shown only to the negotiator."""

    ad: ClassAd
    private: ClassAd | None = None


@dataclass(frozen=True, slots=True)
class InvalidateAd:
    my_type: str
    name: str = ""
    constraint: str = ""


@dataclass(frozen=True, slots=True)
class QueryAds:
    """Ads of one type (``Any`` for all) satisfying a constraint, optionally projected."""

    my_type: str
    constraint: str = ""
    projection: tuple[str, ...] = ()
    private: bool = False
    limit: int = 0
    #: condor_status -statistics: the statistics the answering daemon publishes in its own ad
    #: (STATISTICS_TO_PUBLISH's syntax; empty: as configured)
    statistics: str = ""


@dataclass(frozen=True, slots=True)
class AdList:
    ads: tuple[ClassAd, ...] = ()
