"""Authorization levels, how they imply one another, and the level every message needs.

HTCondor's manual ("HTCondor's Security Model", "Access Level Descriptions") defines the levels
a request is checked at. They form a partial order: WRITE implies READ; ADMINISTRATOR and
DAEMON imply WRITE (and so READ); CONFIG, NEGOTIATOR and the three ADVERTISE levels imply
READ. ``IMPLIED_BY[level]`` is every level whose holder may also do ``level`` (the level itself
included); an identity authorized at any of them passes a check at ``level``.

``LEVEL_OF`` maps every protocol message type to the level its sender needs; ``level_of`` reads
it, with two refinements: an ``UpdateAd`` or ``InvalidateAd`` needs the ADVERTISE level of its ad
type (a Machine ad ADVERTISE_STARTD, a Scheduler or Submitter ad ADVERTISE_SCHEDD, a Master ad
ADVERTISE_MASTER, any other daemon's ad DAEMON), and a ``DaemonCommand`` needs the level of its
command (``condor_reschedule`` WRITE, the master's status READ, the rest ADMINISTRATOR), and a
``QueryAds`` asking for the private attributes (claim ids) needs NEGOTIATOR. Answers
(``Ok``, ``AdList`` …) are never requests; they are mapped to DAEMON so that nobody but a daemon
could send one, and a type missing from the table also needs DAEMON (``test_levels`` checks that
the table covers every message). ``Ping`` needs only ALLOW: any authenticated client may ask
what it may do.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from htcpool.protocol import MESSAGE_TYPES, Command, DaemonCommand, InvalidateAd, QueryAds, UpdateAd


class Level(StrEnum):
    """An authorization level (``ALLOW_<LEVEL>`` / ``DENY_<LEVEL>``)."""

    ALLOW = "ALLOW"  # authenticated: nothing more is asked
    READ = "READ"
    WRITE = "WRITE"
    ADMINISTRATOR = "ADMINISTRATOR"
    CONFIG = "CONFIG"
    DAEMON = "DAEMON"
    NEGOTIATOR = "NEGOTIATOR"
    ADVERTISE_MASTER = "ADVERTISE_MASTER"
    ADVERTISE_STARTD = "ADVERTISE_STARTD"
    ADVERTISE_SCHEDD = "ADVERTISE_SCHEDD"


#: the levels a level directly implies (the manual's "Access Level Descriptions")
IMPLIES: dict[Level, tuple[Level, ...]] = {
    Level.ALLOW: (),
    Level.READ: (Level.ALLOW,),
    Level.WRITE: (Level.READ,),
    Level.ADMINISTRATOR: (Level.WRITE,),
    Level.CONFIG: (Level.READ,),
    Level.DAEMON: (Level.WRITE,),
    Level.NEGOTIATOR: (Level.READ,),
    Level.ADVERTISE_MASTER: (Level.READ,),
    Level.ADVERTISE_STARTD: (Level.READ,),
    Level.ADVERTISE_SCHEDD: (Level.READ,),
}


def _closure(level: Level) -> frozenset[Level]:
    out = {level}
    for lower in IMPLIES[level]:
        out |= _closure(lower)
    return frozenset(out)


#: every level that ``level`` implies, itself included
IMPLIED: dict[Level, frozenset[Level]] = {level: _closure(level) for level in Level}
#: every level whose holder may act at ``level``, itself included
IMPLIED_BY: dict[Level, frozenset[Level]] = {
    level: frozenset(higher for higher in Level if level in IMPLIED[higher]) for level in Level}

#: the levels ALLOW_/DENY_ knobs exist for (ALLOW itself is not configured)
CONFIGURED_LEVELS: tuple[Level, ...] = tuple(level for level in Level if level is not Level.ALLOW)

_R, _W, _A, _D, _N = Level.READ, Level.WRITE, Level.ADMINISTRATOR, Level.DAEMON, Level.NEGOTIATOR

#: message type name -> the level its sender needs
LEVEL_OF: dict[str, Level] = {
    # every daemon
    "DaemonCommand": _A, "Ok": _D, "Failure": _D, "Ping": Level.ALLOW, "PingReply": _D,
    # collector
    "QueryAds": _R, "UpdateAd": _D, "InvalidateAd": _D, "AdList": _D,
    # negotiator
    "Reschedule": _W, "UserprioQuery": _R, "UserprioCommand": _A, "FetchRequests": _N,
    "IdleJobs": _D, "MatchInfo": _N, "Records": _D,
    # schedd: users
    "NewCluster": _W, "Submit": _W, "SubmitFactory": _W, "JobAction": _W, "EditJobs": _W,
    "QueueQuery": _R, "QueueTotals": _R, "QueueCounts": _D,
    "HistoryQuery": _R, "ClusterReserved": _D, "Submitted": _D, "ActionResult": _D,
    # schedd and startd: claims and jobs between daemons
    "JobUpdate": _D, "Reconnect": _D, "ReconnectReply": _D,
    "RequestClaim": _D, "ClaimReply": _D, "ActivateClaim": _D, "ActivateReply": _D,
    "DeactivateClaim": _D, "DeactivateReply": _D, "ReleaseClaim": _D, "Alive": _D,
    "SuspendClaim": _D, "ContinueClaim": _D, "MatchNotification": _N,
    # startd: administrators
    "Drain": _A, "DrainReply": _D, "CancelDrain": _A, "Vacate": _A, "Shutdown": _A,
    # startd: its own actions and its starters' reports (never sent by another daemon)
    "StartJob": _D, "SuspendJob": _D, "ContinueJob": _D, "SoftKill": _D, "HardKill": _D,
    "KillStarterFamily": _D, "HoldJob": _D, "NotifySchedd": _D, "SendAd": _D, "DaemonAction": _D,
    "PolicyProblem": _D, "JobUsage": _D, "FinalJobUpdate": _D, "StarterExited": _D,
    "SensorReadings": _D, "RunBenchmarks": _D, "BenchmarksFinished": _D,
    "StartBackfillClient": _D, "KillBackfillClient": _D, "BackfillClientStarted": _D,
    "BackfillClientExited": _D,
}

#: ad type (MyType, lower case) -> the level advertising it needs
ADVERTISE_LEVEL: dict[str, Level] = {
    "machine": Level.ADVERTISE_STARTD, "scheduler": Level.ADVERTISE_SCHEDD,
    "submitter": Level.ADVERTISE_SCHEDD, "master": Level.ADVERTISE_MASTER,
}

#: DaemonCommand's commands that need less than ADMINISTRATOR
COMMAND_LEVEL: dict[Command, Level] = {Command.RESCHEDULE: Level.WRITE, Command.STATUS: Level.READ}


def _update_level(message: UpdateAd) -> Level:
    return ADVERTISE_LEVEL.get(str(message.ad.get("MyType", "")).lower(), Level.DAEMON)


def _invalidate_level(message: InvalidateAd) -> Level:
    return ADVERTISE_LEVEL.get(message.my_type.lower(), Level.DAEMON)


def _command_level(message: DaemonCommand) -> Level:
    return COMMAND_LEVEL.get(message.command, Level.ADMINISTRATOR)


def _query_level(message: QueryAds) -> Level:
    return Level.NEGOTIATOR if message.private else Level.READ  # claim ids are capabilities


#: the types whose level depends on their content
_BY_CONTENT: dict[type, Callable[[Any], Level]] = {
    UpdateAd: _update_level, InvalidateAd: _invalidate_level, DaemonCommand: _command_level,
    QueryAds: _query_level,
}
_BY_TYPE: dict[type, Level] = {cls: LEVEL_OF.get(name, Level.DAEMON) for name, cls in MESSAGE_TYPES.items()}


def level_of(message: object) -> Level:
    """The level the sender of ``message`` must hold (see the module docstring)."""
    kind = type(message)
    refine = _BY_CONTENT.get(kind)
    if refine is not None:
        return refine(message)
    return _BY_TYPE.get(kind, Level.DAEMON)


def unmapped_types() -> list[str]:
    """Message types the table does not name (there should be none)."""
    return sorted(name for name in MESSAGE_TYPES if name not in LEVEL_OF)


__all__ = ["ADVERTISE_LEVEL", "CONFIGURED_LEVELS", "IMPLIED", "IMPLIED_BY", "LEVEL_OF", "Level",
           "level_of", "unmapped_types"]
