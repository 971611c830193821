"""What the defrag core asks its driver to do, and the events it is told back.

The core answers every call with a list of these (``QueryAds`` and ``UpdateAd`` from
``htcpool.protocol`` travel as they are):

* ``QueryAds``: fetch the startd ads (partitionable, not offline) and hand them back
  through ``Defrag.handle(now, AdList)``, or ``AdsUnavailable`` when the collector did not
  answer (an empty list would read as a pool whose machines all vanished);
* ``SendDrain`` / ``SendCancel``: send the message to the startd at ``address`` and tell
  the core how a drain went with ``Defrag.handle(now, DrainAnswer(...))``;
* ``UpdateAd``: advertise the Defrag ad to the collector;
* ``SaveState``: write ``text`` to DEFRAG_STATE_FILE (it holds the last poll time);
* ``LogLine``: write a line to DefragLog at its level.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from htcpool.protocol import QueryAds, UpdateAd
from htcpool.protocol.startd import CancelDrain, Drain


class LogLevel(StrEnum):
    INFO = "info"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class SendDrain:
    machine: str
    slot: str
    address: str
    message: Drain


@dataclass(frozen=True, slots=True)
class SendCancel:
    machine: str
    slot: str
    address: str
    message: CancelDrain


@dataclass(frozen=True, slots=True)
class SaveState:
    path: str
    text: str


@dataclass(frozen=True, slots=True)
class LogLine:
    level: LogLevel
    text: str


@dataclass(frozen=True, slots=True)
class DrainAnswer:
    """The startd's answer to a ``SendDrain`` (False also when it could not be reached)."""

    machine: str
    accepted: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class AdsUnavailable:
    """The answer to ``QueryAds`` when the collector could not be asked: the poll does nothing."""

    reason: str = ""


Action = QueryAds | SendDrain | SendCancel | UpdateAd | SaveState | LogLine
