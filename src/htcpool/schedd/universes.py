"""Which jobs the schedd runs itself: the local (12) and scheduler (7) universes.

Every other module asks here, so the rule is written once: ``offers`` leaves these jobs
out of negotiation, ``ads`` counts them apart, ``localjobs`` runs them. The numbers are
HTCondor's ``JobUniverse`` values (condor_submit's man page, *universe*).
"""

from __future__ import annotations

from enum import IntEnum

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Literal


class Universe(IntEnum):
    """The universes the schedd runs itself (HTCondor's numbers)."""

    SCHEDULER = 7
    LOCAL = 12


_BY_NUMBER = {int(u): u for u in Universe}


def universe_of(ad: ClassAd) -> Universe | None:
    """The job's universe when the schedd runs it itself, else None."""
    node = ad._exprs.get("jobuniverse")
    if node is None:
        return None
    value = node.value if type(node) is Literal else ad.get("JobUniverse")  # a literal is read, not evaluated
    return _BY_NUMBER.get(value) if type(value) is int else None


def runs_on_access_point(ad: ClassAd) -> bool:
    """Whether the job is a local or scheduler universe job (never offered for matchmaking)."""
    return universe_of(ad) is not None


__all__ = ["Universe", "runs_on_access_point", "universe_of"]
