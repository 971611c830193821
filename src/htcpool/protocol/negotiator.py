"""Messages of the negotiator: reschedule, fetch the idle jobs, tell a match, condor_userprio."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from htcpool.classad import ClassAd

# --------------------------------------------------------------------------- negotiator


@dataclass(frozen=True, slots=True)
class Reschedule:
    """condor_reschedule: new work or free slots; negotiate soon."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class FetchRequests:
    """The negotiator asks a schedd for the idle jobs of some submitters (all when empty)."""

    submitters: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IdleJobs:
    """A schedd's answer to ``FetchRequests``: ``submitters[i]`` submitted ``ads[i]``."""

    submitters: tuple[str, ...] = ()
    ads: tuple[ClassAd, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """The negotiator tells a schedd: ``job`` may claim the slot with ``claim_id``.

    ``group``, ``negotiating_group`` and ``autoregroup`` are the job's accounting group, the group
    whose round made the match and whether it was an autoregroup round (HTCondor's offer carries
    them as ``RemoteGroup``, ``RemoteNegotiatingGroup``, ``RemoteAutoregroup``); the schedd puts
    them in its claim request, and the startd publishes them in the claimed slot's ad. ``group`` is
    empty when the pool has no accounting groups."""

    claim_id: str
    slot_ad: ClassAd
    cluster: int
    proc: int
    submitter: str
    preempt_claim_ids: tuple[str, ...] = ()
    group: str = ""
    negotiating_group: str = ""
    autoregroup: bool = False


@dataclass(frozen=True, slots=True)
class UserprioQuery:
    """What condor_userprio reads: accounting ads (``quotas`` for the -quotas view)."""

    all_users: bool = True


class UserprioOp(StrEnum):
    """condor_userprio's changes."""

    SETFACTOR = "setfactor"
    SETPRIO = "setprio"
    SETACCUM = "setaccum"
    SETCEILING = "setceiling"
    SETFLOOR = "setfloor"
    SETBEGIN = "setbegin"
    SETLAST = "setlast"
    RESETUSAGE = "resetusage"
    RESETALL = "resetall"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class UserprioCommand:
    """condor_userprio -setfactor / -setprio / -setaccum / -setceiling / -setfloor / -resetusage /
    -resetall / -delete."""

    op: UserprioOp
    name: str = ""
    value: float = 0.0
    duration: float = 0.0  # -duration: a lease on a factor, ceiling or floor (0: none)


@dataclass(frozen=True, slots=True)
class Records:
    """Plain records answered by a query (accounting rows, job-id lists, …)."""

    rows: tuple[Mapping[str, Any], ...] = ()
