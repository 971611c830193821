"""Typed messages between daemons, and the JSON form they travel in.

Every message is a small frozen dataclass. The startd's messages and actions
(``htcpool.startd.messages``) are part of the protocol as they are: the schedd
sends ``RequestClaim``, ``ActivateClaim`` … and the startd answers with
``ClaimReply``, ``ActivateReply``, ``NotifySchedd`` …. This module adds the
messages of the collector, the negotiator, the schedd's clients and the job
updates a startd sends about its starters.

``encode(message)`` gives a JSON-ready dict ``{"type": ClassName, field: value}``;
ClassAds travel as ``{"$ad": text}`` in the new ClassAd syntax and tuples as lists.
In a field of ads (``tuple[ClassAd, ...]``: ``Submit``, ``IdleJobs``,
``AdList``), an ad that has every attribute of the ad before it, spelled the
same, travels as ``{"$prev": text}``: only the attributes whose expressions
differ from the previous ad's (the same expression object, or equal plain
literals, count as the same). The jobs of a cluster and the idle jobs of a
queue are such runs (one job ad copied for every proc), so a 10,000-job submit
carries one full ad and 9,999 ads of a few attributes each, as condor_submit
sends a cluster ad and proc ads; the decoded ads share the unchanged
expressions, which the schedd's per-cluster shortcuts recognise.
``decode(data)`` checks the type name, the fields and their simple types and
raises ``ProtocolError`` naming the field for anything else, so a malformed
request is refused at the boundary and never reaches a core.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, parseOne
from htcpool.classad.nodes import Literal
from htcpool.classad.unparse import unparse
from htcpool.startd import messages as startd_messages


class ProtocolError(ValueError):
    """A message that cannot be decoded: unknown type, missing or mistyped field."""


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


@dataclass(frozen=True, slots=True)
class AdList:
    ads: tuple[ClassAd, ...] = ()


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
    """The negotiator tells a schedd: ``job`` may claim the slot with ``claim_id``."""

    claim_id: str
    slot_ad: ClassAd
    cluster: int
    proc: int
    submitter: str
    preempt_claim_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UserprioQuery:
    """What condor_userprio reads: accounting ads (``quotas`` for the -quotas view)."""

    all_users: bool = True


@dataclass(frozen=True, slots=True)
class UserprioCommand:
    """condor_userprio -setfactor / -setprio / -setaccum / -setceiling / -setfloor / -resetusage /
    -resetall / -delete."""

    op: str
    name: str = ""
    value: float = 0.0
    duration: float = 0.0  # -duration: a lease on a factor, ceiling or floor (0: none)


@dataclass(frozen=True, slots=True)
class Records:
    """Plain records answered by a query (accounting rows, job-id lists, …)."""

    rows: tuple[Mapping[str, Any], ...] = ()


# --------------------------------------------------------------------------- schedd


@dataclass(frozen=True, slots=True)
class Submit:
    """condor_submit: one cluster of job ads made by the submit core on the client."""

    owner: str
    ads: tuple[ClassAd, ...]


@dataclass(frozen=True, slots=True)
class Submitted:
    cluster: int
    count: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueQuery:
    constraint: str = ""
    projection: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    constraint: str = ""
    limit: int = 0


@dataclass(frozen=True, slots=True)
class JobAction:
    """condor_hold, _release, _rm, _vacate_job, _prio on job ids or a constraint.

    ``action`` is one of hold, release, remove, vacate, prio; ``targets`` are
    ``cluster`` or ``cluster.proc`` or user names; ``value`` is the new priority
    (``relative``: an adjustment) for prio.
    """

    action: str
    user: str
    targets: tuple[str, ...] = ()
    constraint: str = ""
    reason: str = ""
    value: int = 0
    relative: bool = False


@dataclass(frozen=True, slots=True)
class ActionResult:
    """Per target: the job ids acted on and the errors met."""

    done: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobUpdate:
    """A startd reports what the starter of a claim's job did.

    ``event`` is provisioned (sent before the activation's reply), started,
    suspended, continued, usage, error or exited; ``killed`` is
    true when the startd itself killed the job (vacate, preemption).
    """

    claim_id: str
    slot: str
    event: str
    exit_code: int | None = None
    exit_signal: int | None = None
    killed: bool = False
    user_cpu: float = 0.0
    sys_cpu: float = 0.0
    rss_kb: int = 0
    image_size_kb: int = 0
    wall: float = 0.0
    processes: int = 0  # "suspended": how many of the job's processes were stopped
    message: str = ""
    #: "provisioned": what the slot gives the job (Cpus/Memory/Disk/GPUsProvisioned, CondorScratchDir)
    resources: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reconnect:
    """A restarted schedd asks whether a claim and its job are still alive at the startd."""

    claim_id: str
    schedd: str


@dataclass(frozen=True, slots=True)
class ReconnectReply:
    claim_id: str
    alive: bool
    slot: str = ""
    activity: str = ""


# --------------------------------------------------------------------------- every daemon


@dataclass(frozen=True, slots=True)
class DaemonCommand:
    """Administrative commands: off (peaceful/graceful/fast), on, restart, reconfig."""

    command: str
    how: str = "graceful"
    daemons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ok:
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Failure:
    """A refused request: a status (HTTP-like) and a message naming what was wrong."""

    status: int
    detail: str


_OWN = (UpdateAd, InvalidateAd, QueryAds, AdList, Reschedule, FetchRequests, IdleJobs, MatchInfo,
        UserprioQuery, UserprioCommand, Records, Submit, Submitted, QueueQuery, HistoryQuery,
        JobAction, ActionResult, JobUpdate, Reconnect, ReconnectReply, DaemonCommand, Ok, Failure)
_STARTD = tuple(
    obj for obj in vars(startd_messages).values()
    if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == startd_messages.__name__
)
MESSAGE_TYPES: dict[str, type] = {cls.__name__: cls for cls in (*_STARTD, *_OWN)}

# --------------------------------------------------------------------------- JSON form


def _same_node(a: Any, b: Any) -> bool:
    """Whether two expressions are surely the same: one object, or equal plain literals."""
    if a is b:
        return True
    if type(a) is not Literal or type(b) is not Literal:
        return False
    va, vb = a.value, b.value
    t = type(va)
    if t is not type(vb) or t not in _PLAIN_LITERALS or va != vb:
        return False
    return t is not float or va != 0.0 or math.copysign(1.0, va) == math.copysign(1.0, vb)  # 0.0, -0.0


_PLAIN_LITERALS = (int, str, bool, float)


def _changes(ad: ClassAd, prev: ClassAd) -> ClassAd | None:
    """The attributes of ``ad`` that differ from ``prev``; None when ``ad`` lacks one of
    ``prev``'s attributes or spells one differently (then it travels whole)."""
    exprs, names = ad._exprs, ad._names
    prev_exprs, prev_names = prev._exprs, prev._names
    changed: dict[str, Any] = {}
    shared = 0
    for key, node in exprs.items():
        old = prev_exprs.get(key)
        if old is not None:
            if names[key] != prev_names[key]:
                return None
            shared += 1
            if _same_node(old, node):
                continue
        changed[key] = node
    if shared != len(prev_exprs):
        return None
    return ClassAd._from_tables(changed, {key: names[key] for key in changed})


def _encode_ads(ads: tuple[ClassAd, ...]) -> list[Any]:
    """A field of ads: whole, or as the changes from the ad before (see the module docstring)."""
    out: list[Any] = []
    prev: ClassAd | None = None
    for ad in ads:
        delta = _changes(ad, prev) if prev is not None else None
        out.append({"$ad": unparse(ad)} if delta is None else {"$prev": unparse(delta)})
        prev = ad
    return out


def _encode_value(value: Any) -> Any:
    if isinstance(value, ClassAd):
        return {"$ad": unparse(value)}
    if isinstance(value, tuple | list):
        return [_encode_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _encode_value(v) for k, v in value.items()}
    return value


def encode(message: object) -> dict[str, Any]:
    """The JSON-ready form of a protocol message."""
    cls = type(message)
    if cls.__name__ not in MESSAGE_TYPES:
        raise TypeError(f"{cls.__name__} is not a protocol message")
    out: dict[str, Any] = {"type": cls.__name__}
    ad_lists = _ad_list_fields(cls)
    for f in dataclasses.fields(message):  # type: ignore[arg-type]
        value = getattr(message, f.name)
        if f.name in ad_lists and isinstance(value, tuple) and all(isinstance(v, ClassAd) for v in value):
            out[f.name] = _encode_ads(value)
        else:
            out[f.name] = _encode_value(value)
    return out


_AD_LISTS: dict[type, frozenset[str]] = {}


def _ad_list_fields(cls: type) -> frozenset[str]:
    """The fields of a message class declared as ``tuple[ClassAd, ...]``."""
    names = _AD_LISTS.get(cls)
    if names is None:
        names = _AD_LISTS[cls] = frozenset(
            name for name, hint in _hints(cls).items()
            if typing.get_origin(hint) is tuple and typing.get_args(hint)[:1] == (ClassAd,))
    return names


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        module = vars(__import__(cls.__module__, fromlist=["_"]))
        hints = typing.get_type_hints(cls, globalns=module)
        _HINTS[cls] = hints
    return hints


def _decode_value(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode_value(value, arg, where)
            except ProtocolError as e:
                errors.append(str(e))
        raise ProtocolError(errors[0] if errors else f"{where}: unexpected null")
    if hint is ClassAd:
        return _decode_ad(value, None, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise ProtocolError(f"{where}: expected a list")
        item = args[0] if args else Any
        if item is ClassAd:
            return _decode_ads(value, where)
        return tuple(_decode_value(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict) or hint in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise ProtocolError(f"{where}: expected an object")
        vhint = args[1] if len(args) == 2 else Any
        return {str(k): _decode_value(v, vhint, f"{where}.{k}") for k, v in value.items()}
    if hint is Any:
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProtocolError(f"{where}: expected a number")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError(f"{where}: expected an integer")
        return value
    if hint in (str, bool):
        if not isinstance(value, hint):
            raise ProtocolError(f"{where}: expected {'a string' if hint is str else 'true or false'}")
        return value
    if hint is type(None):
        if value is not None:
            raise ProtocolError(f"{where}: expected null")
        return None
    return value


def _decode_ad(value: Any, prev: ClassAd | None, where: str) -> ClassAd:
    """``{"$ad": text}``, or in a list ``{"$prev": text}``: the previous ad with these attributes."""
    whole_text = value.get("$ad") if isinstance(value, Mapping) else None
    delta = value.get("$prev") if isinstance(value, Mapping) and prev is not None else None
    text = whole_text if isinstance(whole_text, str) else delta
    if not isinstance(text, str):
        raise ProtocolError(f"{where}: expected a ClassAd as {{\"$ad\": text}}"
                            + (" or {\"$prev\": text}" if prev is not None else ""))
    try:
        ad = parseOne(text)
    except (ClassAdError, ValueError) as e:
        raise ProtocolError(f"{where}: the ClassAd does not parse: {e}") from None
    if text is whole_text or prev is None:
        return ad
    whole = prev.copy()
    for key, node in ad._exprs.items():
        whole.insert_node(ad._names[key], node)
    return whole


def _decode_ads(values: list[Any], where: str) -> tuple[ClassAd, ...]:
    out: list[ClassAd] = []
    prev: ClassAd | None = None
    for i, value in enumerate(values):
        prev = _decode_ad(value, prev, f"{where}[{i}]")
        out.append(prev)
    return tuple(out)


def decode(data: Any) -> Any:
    """The message a JSON object stands for; ``ProtocolError`` names what is wrong."""
    if not isinstance(data, Mapping):
        raise ProtocolError("a message must be a JSON object")
    name = data.get("type")
    cls = MESSAGE_TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message type {name!r}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    names = set()
    for f in dataclasses.fields(cls):
        names.add(f.name)
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ProtocolError(f"{name}: the field {f.name!r} is missing")
            continue
        kwargs[f.name] = _decode_value(data[f.name], hints[f.name], f"{name}.{f.name}")
    unknown = sorted(set(data) - names - {"type"})
    if unknown:
        raise ProtocolError(f"{name}: unknown field {unknown[0]!r}")
    return cls(**kwargs)


__all__ = [
    "MESSAGE_TYPES", "ActionResult", "AdList", "DaemonCommand", "Failure", "FetchRequests",
    "HistoryQuery", "IdleJobs", "InvalidateAd", "JobAction", "JobUpdate", "MatchInfo", "Ok", "ProtocolError",
    "QueryAds", "QueueQuery", "Reconnect", "ReconnectReply", "Records", "Reschedule", "Submit",
    "Submitted", "UpdateAd", "UserprioCommand", "UserprioQuery", "decode", "encode", "field",
]
