"""Every message between htcpool's daemons, and the one form they travel in.

Each message is a small frozen dataclass, in one module per daemon that takes it:

* ``startd``: what the schedd, the negotiator, the starters, the sensors and the
  administrators tell the startd core (``RequestClaim``, ``ActivateClaim``, ``Drain`` …),
  and the actions the core answers with (``StartJob``, ``ClaimReply``, ``NotifySchedd`` …);
* ``collector``: ads in and out (``UpdateAd``, ``QueryAds``, ``AdList``);
* ``negotiator``: ``Reschedule``, ``FetchRequests``/``IdleJobs``, ``MatchInfo`` and
  condor_userprio's ``UserprioQuery``/``UserprioCommand``;
* ``schedd``: ``Submit``, queue and history queries, ``JobAction``, the startds'
  ``JobUpdate`` reports and ``Reconnect``;
* ``admin``: ``DaemonCommand``, ``Ok``, ``Failure`` and condor_ping's ``Ping``/``PingReply``.

``codec`` turns any of them into JSON and back (``encode``/``decode``); ``memory``
hands them over within one process through the same codec. The package imports the
ClassAd language and nothing else of htcpool, so every core and both drivers can
share it without importing one another.
"""

from typing import TYPE_CHECKING, Any

from htcpool.protocol.admin import Command, DaemonCommand, Failure, How, Ok, Ping, PingReply
from htcpool.protocol.codec import MESSAGE_TYPES, ProtocolError, decode, encode  # noqa: I001 (after the messages)
from htcpool.protocol.memory import carry
from htcpool.protocol.schedd import (
    ActionResult,
    HistoryQuery,
    JobAction,
    JobActionKind,
    JobEvent,
    JobUpdate,
    QueueQuery,
    Reconnect,
    ReconnectReply,
    Submit,
    Submitted,
)

if TYPE_CHECKING:
    from htcpool.protocol.collector import AdList, InvalidateAd, QueryAds, UpdateAd
    from htcpool.protocol.negotiator import (
        FetchRequests,
        IdleJobs,
        MatchInfo,
        Records,
        Reschedule,
        UserprioCommand,
        UserprioOp,
        UserprioQuery,
    )

#: names taken from modules imported on first use: a tool that speaks only to the schedd
#: (``htcpool submit``, ``q``) never creates the collector's and negotiator's classes (5 ms)
_LATER = {
    **dict.fromkeys(("AdList", "InvalidateAd", "QueryAds", "UpdateAd"), "collector"),
    **dict.fromkeys(("FetchRequests", "IdleJobs", "MatchInfo", "Records", "Reschedule", "UserprioCommand",
                     "UserprioOp", "UserprioQuery"), "negotiator"),
}


def __getattr__(name: str) -> Any:
    # as htcpool.htcondor2 loads its names; not shared with it, since the protocol imports nothing
    # of htcpool but the ClassAd language
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MESSAGE_TYPES", "ActionResult", "AdList", "Command", "DaemonCommand", "Failure", "FetchRequests",
    "HistoryQuery", "How", "IdleJobs", "InvalidateAd", "JobAction", "JobActionKind", "JobEvent", "JobUpdate",
    "MatchInfo", "Ok", "Ping", "PingReply", "ProtocolError", "QueryAds", "QueueQuery", "Reconnect", "ReconnectReply", "Records",
    "Reschedule", "Submit", "Submitted", "UpdateAd", "UserprioCommand", "UserprioOp", "UserprioQuery",
    "carry", "decode", "encode",
]
