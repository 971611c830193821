"""Messages every daemon takes or answers: administrative commands, success and refusal."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Command(StrEnum):
    """What an administrator asks of a daemon (condor_off, _on, _restart, _reconfig …)."""

    OFF = "off"
    ON = "on"
    RESTART = "restart"
    RECONFIG = "reconfig"
    RESCHEDULE = "reschedule"
    VACATE = "vacate"  # condor_vacate of a whole startd (``how``: graceful or fast)
    STATUS = "status"  # the master's view of its children


class How(StrEnum):
    """How a daemon stops (condor_off -peaceful / -graceful / -fast), or how fast jobs are vacated."""

    PEACEFUL = "peaceful"
    GRACEFUL = "graceful"
    FAST = "fast"


# --------------------------------------------------------------------------- every daemon


@dataclass(frozen=True, slots=True)
class DaemonCommand:
    """Administrative commands: off (peaceful/graceful/fast), on, restart, reconfig."""

    command: Command
    how: How = How.GRACEFUL
    daemons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ok:
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Failure:
    """A refused request: a status (HTTP-like) and a message naming what was wrong."""

    status: int
    detail: str


@dataclass(frozen=True, slots=True)
class Ping:
    """condor_ping: who am I at this daemon, and which of ``levels`` (all when empty) may I use?"""

    levels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PingReply:
    """The daemon's answer to ``Ping``: the identity it authenticated, by which method, the
    address it saw, whether the connection is encrypted (``TLS`` or ``none``), and for each asked
    level whether it is authorized (with the reason when not)."""

    identity: str
    method: str
    peer: str
    authorized: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    encryption: str = "none"
