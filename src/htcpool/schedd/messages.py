"""What the schedd core hands its driver, and what the driver tells it back.

The core (``htcpool.schedd.core.Schedd``) answers every request and timer with an
``Outcome``: the reply for the sender, and ``actions`` for the driver to carry out in
order. Each action is a protocol message in an envelope that says where it goes:

* ``ToStartd``: a message for the startd at ``address`` (the ``MyAddress`` of the slot
  the claim was made on): ``RequestClaim``, ``ActivateClaim``, ``DeactivateClaim``,
  ``ReleaseClaim``, ``Alive``;
* ``ToNegotiator``: ``Reschedule``, asking for a negotiation cycle soon;
* ``ToCollector``: the schedd's and its submitters' ads (``UpdateAd``), or their
  withdrawal (``InvalidateAd``);
* ``AskStartd``: a question whose answer the core waits for (``Reconnect`` after a
  restart). The driver hands the answer back to ``Schedd.handle``; when none came
  (the startd could not be reached) it hands back ``StartdUnreachable``.

The live driver posts the envelopes over HTTP; a simulator delivers them in memory.
The envelopes and ``StartdUnreachable`` never travel between daemons themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from htcpool.protocol import InvalidateAd, Reconnect, Reschedule, UpdateAd
from htcpool.protocol.startd import (
    ActivateClaim,
    Alive,
    DeactivateClaim,
    ReleaseClaim,
    RequestClaim,
)

StartdMessage = RequestClaim | ActivateClaim | DeactivateClaim | ReleaseClaim | Alive


@dataclass(frozen=True, slots=True)
class ToStartd:
    """Send ``message`` to the startd at ``address``; no answer is needed."""

    address: str
    message: StartdMessage


@dataclass(frozen=True, slots=True)
class ToNegotiator:
    message: Reschedule


@dataclass(frozen=True, slots=True)
class ToCollector:
    message: UpdateAd | InvalidateAd


@dataclass(frozen=True, slots=True)
class AskStartd:
    """Send ``message`` to the startd at ``address`` and hand its answer back to the core."""

    address: str
    message: Reconnect


@dataclass(frozen=True, slots=True)
class StartdUnreachable:
    """The driver could not get an answer to an ``AskStartd`` about ``claim_id``."""

    claim_id: str


Action = ToStartd | ToNegotiator | ToCollector | AskStartd


@dataclass(frozen=True, slots=True)
class Outcome:
    """The reply to a request (None for a timer) and the actions it caused, in order."""

    reply: Any = None
    actions: list[Action] = field(default_factory=list)


__all__ = ["Action", "AskStartd", "Outcome", "StartdMessage", "StartdUnreachable", "ToCollector",
           "ToNegotiator", "ToStartd"]
