"""The JSON form messages travel in, and the registry of message types.

``encode(message)`` gives a JSON-ready dict ``{"type": ClassName, field: value}``;
ClassAds travel as ``{"$ad": text}`` in the new ClassAd syntax, tuples as lists and
enums by their value. In a field of ads (``tuple[ClassAd, ...]``: ``Submit``,
``IdleJobs``, ``AdList``), an ad that has every attribute of the ad before it, spelled
the same, travels as ``{"$prev": text}``: only the attributes whose expressions
differ from the previous ad's (the same expression object, or equal plain literals,
count as the same). The jobs of a cluster and the idle jobs of a queue are such runs
(one job ad copied for every proc), so a 10,000-job submit carries one full ad and
9,999 ads of a few attributes each, as condor_submit sends a cluster ad and proc ads;
the decoded ads share the unchanged expressions, which the schedd's per-cluster
shortcuts recognise. When every changed attribute is a plain literal (a string, an
integer, a boolean or a finite real), as ``ProcId`` is from one job of a cluster to
the next, the changes travel as a JSON object instead, ``{"$set": {"ProcId": 7}}``,
which needs no ClassAd parsing on either side (JSON keeps the four types apart:
``7`` and ``7.0`` read back as an integer and a real). An ad decoded from ``$set``
values that add no attribute shares the previous ad's table of names; both copy their
tables before their first change (the ``ClassAd``'s copy-on-write flag).

``decode(data)`` checks the type name, the fields and their simple types (an enum
field takes only its members' values) and raises ``ProtocolError`` naming the field
for anything else, so a malformed request is refused at the boundary and never
reaches a core.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import math
import types
import typing
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, parseOne
from htcpool.classad.nodes import Literal
from htcpool.classad.unparse import unparse
from htcpool.classad.values import wrap_int
from htcpool.protocol.adchanges import as_ad, changed_nodes


class ProtocolError(ValueError):
    """A message that cannot be decoded: unknown type, missing or mistyped field."""


def message_types(modules: Iterable[types.ModuleType]) -> dict[str, type]:
    """Every dataclass defined in ``modules``, by class name (names are unique)."""
    out: dict[str, type] = {}
    for module in modules:
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                if obj.__name__ in out and out[obj.__name__] is not obj:
                    raise TypeError(f"two protocol messages are named {obj.__name__}")
                out[obj.__name__] = obj
    return out


class _Registry(Mapping[str, type]):
    """The message classes by name. The admin's and the schedd's messages, which every tool
    speaks, are read at once; the others (the startd's, the most numerous, the collector's and
    the negotiator's: creating their classes is most of importing the package) are imported on
    the first lookup of a name not found among those, or when the whole registry is listed. A
    tool that speaks only to the schedd (``htcpool submit``) never imports them."""

    def __init__(self) -> None:
        from htcpool.protocol import admin, schedd

        self._eager = (schedd, admin)
        self._types = message_types(self._eager)
        self._complete = False

    def _everything(self) -> dict[str, type]:
        if not self._complete:
            from htcpool.protocol import collector, negotiator, startd

            self._types = message_types((startd, collector, negotiator, *self._eager))
            self._complete = True
        return self._types

    def __getitem__(self, name: str) -> type:
        found = self._types.get(name)
        if found is None:
            return self._everything()[name]
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())


MESSAGE_TYPES: Mapping[str, type] = _Registry()


def _plain_values(changed: dict[str, Any], names: dict[str, str]) -> dict[str, Any] | None:
    """``changed`` as JSON values by attribute name when every node is a plain literal; else None."""
    out: dict[str, Any] = {}
    for key, node in changed.items():
        if type(node) is not Literal:
            return None
        value = node.value
        t = type(value)
        if t is not int and t is not str and t is not bool and (t is not float or not math.isfinite(value)):
            return None
        out[names[key]] = value
    return out


#: runs of at least this many ads are encoded and decoded with the cyclic garbage collector held
#: off (``htcpool.gcpause`` says why; the protocol imports nothing of htcpool but the ClassAds)
_LARGE_RUN = 1000


def _encode_ads(ads: tuple[ClassAd, ...]) -> list[Any]:
    """A field of ads: whole, or as the changes from the ad before (see the module docstring)."""
    if len(ads) >= _LARGE_RUN and gc.isenabled():  # many ads, no cycles: as htcpool.gcpause does
        gc.disable()
        try:
            return _encode_ads(ads)
        finally:
            gc.enable()
    out: list[Any] = []
    prev: ClassAd | None = None
    for ad in ads:
        changed = changed_nodes(ad, prev) if prev is not None else None
        if changed is None:
            out.append({"$ad": unparse(ad)})
        else:
            names = ad._names
            values = _plain_values(changed, names)
            if values is not None:
                out.append({"$set": values})
            else:
                out.append({"$prev": unparse(as_ad(changed, ad))})
        prev = ad
    return out


def _encode_value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
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
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            choices = ", ".join(repr(member.value) for member in hint)
            raise ProtocolError(f"{where}: expected one of {choices}") from None
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
    """``{"$ad": text}``, or in a list ``{"$prev": text}`` or ``{"$set": {name: value}}``: the
    previous ad with these attributes."""
    if prev is not None and isinstance(value, Mapping) and "$set" in value:
        return _with_values(prev, value["$set"], where)
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


class _BadValues(Exception):
    """What is wrong with a ``"$set"`` object, as the end of a sentence that names the ad."""


def _with_values(prev: ClassAd, values: Any, where: str, index: int | None = None) -> ClassAd:
    """``prev`` with the plain values of a ``{"$set": {...}}`` (strings, numbers, booleans);
    ``where`` (with ``[index]`` when given) names the ad in an error, made only for one."""
    try:
        return _set_values(prev, values)
    except _BadValues as e:
        raise ProtocolError(f"{where if index is None else f'{where}[{index}]'}{e}") from None


def _set_values(prev: ClassAd, values: Any) -> ClassAd:
    if type(values) is not dict and not isinstance(values, Mapping):
        raise _BadValues(': "$set" must be an object of attribute values')
    exprs, names = prev._exprs.copy(), prev._names
    added: dict[str, str] | None = None
    for name, v in values.items():
        t = type(v)
        if t is int:
            node = Literal(wrap_int(v))
        elif t is str or t is bool or t is float:
            node = Literal(v)
        else:
            raise _BadValues(f".{name}: expected a string, a number or true/false")
        if not name:
            raise _BadValues(": an attribute name is empty")
        key = name.lower()
        if key not in names and (added is None or key not in added):
            if added is None:
                added = {}
            added[key] = name
        exprs[key] = node
    if added is not None:
        return ClassAd._from_tables(exprs, names | added)
    ad = ClassAd._from_tables(exprs, names)  # the name table is shared: each ad copies it before a change
    ad._shared = prev._shared = True
    return ad


def _decode_ads(values: list[Any], where: str) -> tuple[ClassAd, ...]:
    if len(values) >= _LARGE_RUN and gc.isenabled():
        gc.disable()
        try:
            return _decode_ads(values, where)
        finally:
            gc.enable()
    out: list[ClassAd] = []
    prev: ClassAd | None = None
    for i, value in enumerate(values):
        if prev is not None and type(value) is dict and "$set" in value:  # the common case, at once
            prev = _with_values(prev, value["$set"], where, i)
        else:
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
