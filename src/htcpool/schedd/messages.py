"""What the schedd core hands its driver, and what the driver tells it back.

The core (``htcpool.schedd.core.Schedd``) answers every request and timer with an
``Outcome``: the reply for the sender, and ``actions`` for the driver to carry out in
order. Each action is a protocol message in an envelope that says where it goes:

* ``ToStartd``: a message for the startd at ``address`` (the ``MyAddress`` of the slot
  the claim was made on): ``RequestClaim``, ``ActivateClaim``, ``DeactivateClaim``,
  ``ReleaseClaim``, ``Alive``, and condor_suspend's ``SuspendClaim`` / ``ContinueClaim``;
* ``ToNegotiator``: ``Reschedule``, asking for a negotiation cycle soon;
* ``ToCollector``: the schedd's and its submitters' ads (``UpdateAd``), or their
  withdrawal (``InvalidateAd``);
* ``AskStartd``: a question whose answer the core waits for (``Reconnect`` after a
  restart). The driver hands the answer back to ``Schedd.handle``; when none came
  (the startd could not be reached) it hands back ``StartdUnreachable``;
* ``StartLocalJob`` / ``StopLocalJob``: run, or stop, a local or scheduler universe
  job on the access point itself (``localjobs``); the driver hands what the job's
  starter reports back to ``Schedd.handle`` as ``LocalJobReport``.

The live driver posts the envelopes over HTTP; a simulator delivers them in memory.
The envelopes and ``StartdUnreachable`` never travel between daemons themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from htcpool.classad import ClassAd
from htcpool.protocol import InvalidateAd, JobUpdate, Reconnect, Reschedule, UpdateAd
from htcpool.protocol.startd import (
    ActivateClaim,
    Alive,
    ContinueClaim,
    DeactivateClaim,
    ReleaseClaim,
    RequestClaim,
    SuspendClaim,
)

StartdMessage = (RequestClaim | ActivateClaim | DeactivateClaim | ReleaseClaim | Alive | SuspendClaim
                 | ContinueClaim)


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


@dataclass(frozen=True, slots=True)
class StartLocalJob:
    """Run ``job`` (a local or scheduler universe job) here, as run ``run_id``; ``user``: the
    account to run it as, empty for the schedd's own."""

    run_id: str
    cluster: int
    proc: int
    job: ClassAd
    user: str = ""


@dataclass(frozen=True, slots=True)
class StopLocalJob:
    """Send run ``run_id`` ``kill_sig``, then SIGKILL if it still runs ``grace`` seconds later."""

    run_id: str
    kill_sig: str
    grace: float


@dataclass(frozen=True, slots=True)
class LocalJobReport:
    """What the starter of a local run reported (``update.claim_id`` is the run id); ``subcode``:
    the system error number of a start failure, when the driver knows it."""

    update: JobUpdate
    subcode: int = 0


Action = ToStartd | ToNegotiator | ToCollector | AskStartd | StartLocalJob | StopLocalJob


@dataclass(frozen=True, slots=True)
class Outcome:
    """The reply to a request (None for a timer) and the actions it caused, in order."""

    reply: Any = None
    actions: list[Action] = field(default_factory=list)


__all__ = ["Action", "AskStartd", "LocalJobReport", "Outcome", "StartLocalJob", "StartdMessage",
           "StartdUnreachable", "StopLocalJob", "ToCollector", "ToNegotiator", "ToStartd"]
