"""Hypothesis strategies for protocol messages, valid and hostile, as the JSON bodies daemons get.

``bodies()`` draws a request body: a well-formed message of any registered type (fields drawn
from their annotations), the same with fields replaced by hostile JSON values, dropped or
added, or bytes that are not a message at all.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from htcpool.classad import ClassAd, parseOne
from htcpool.protocol import MESSAGE_TYPES, encode

ADS = ("[ Name = \"slot1@exec.test\"; MyType = \"Machine\"; Memory = 1024; Requirements = true ]",
       "[ ClusterId = 1; ProcId = 0; JobStatus = 1; Owner = \"alice\"; Requirements = true ]",
       "[ a = b; b = a ]", "[ x = 1 / 0; y = strcat(\"a\", 10) ]", "[ ]")
WORDS = ("", "c1", "1.0", "slot1@exec.test", "alice", "(((", "[ x = ]", "true", "JobStatus == 1",
         "off", "release", "Machine", "\x00", "é" * 3, "a" * 300)

leaves = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
                   st.sampled_from(WORDS))
hostile: st.SearchStrategy[Any] = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(("$ad", "$prev", "$set", "type", "x")) | st.text(max_size=6),
                                            inner, max_size=3),
                            st.builds(lambda text: {"$ad": text}, st.sampled_from(ADS) | st.text(max_size=40))),
    max_leaves=10)


def _for_annotation(hint: Any) -> st.SearchStrategy[Any] | None:
    """A strategy of valid values for a field's type; None when it cannot be drawn."""
    origin = typing.get_origin(hint)
    if hint is str:
        return st.sampled_from(WORDS) | st.text(max_size=20)
    if hint is bool:
        return st.booleans()
    if hint is int:
        return st.integers(-(10**6), 10**6)
    if hint is float:
        return st.floats(-1e9, 1e9)
    if hint is ClassAd:
        return st.sampled_from(ADS).map(parseOne)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if origin in (typing.Union, types.UnionType):
        options = [s for a in typing.get_args(hint) if (s := _none_or(a)) is not None]
        return st.one_of(options) if options else None
    if origin is tuple:
        args = typing.get_args(hint)
        inner = _for_annotation(args[0]) if args else None
        return st.lists(inner, max_size=3).map(tuple) if inner is not None else None
    if origin in (dict, Mapping):
        args = typing.get_args(hint)
        key = _for_annotation(args[0]) if args else None
        value = _for_annotation(args[1]) if len(args) > 1 else None
        if key is None or value is None:
            return st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=3)
        return st.dictionaries(key, value, max_size=3)
    return None


def _none_or(hint: Any) -> st.SearchStrategy[Any] | None:
    return st.none() if hint is type(None) else _for_annotation(hint)


def valid(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    """Encoded messages of ``cls`` built from drawn field values (a field that cannot be drawn
    keeps its default; a type whose construction refuses the draw gives an empty body)."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in dataclasses.fields(cls):
        strategy = _for_annotation(hints.get(f.name))
        if strategy is not None:
            fields[f.name] = strategy
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            return st.just({"type": cls.__name__})

    def build(values: dict[str, Any]) -> dict[str, Any]:
        try:
            return encode(cls(**values))
        except (TypeError, ValueError):
            return {"type": cls.__name__, **{k: str(v) for k, v in values.items()}}

    return st.fixed_dictionaries(fields).map(build)


def _mutated(draw: st.DrawFn, body: dict[str, Any]) -> dict[str, Any]:
    body = dict(body)
    for name in list(body):
        if name != "type" and draw(st.integers(0, 3)) == 0:
            if draw(st.booleans()):
                body[name] = draw(hostile)
            else:
                del body[name]
    if draw(st.integers(0, 4)) == 0:
        body[draw(st.text(max_size=8))] = draw(hostile)
    return body


@st.composite
def bodies(draw: st.DrawFn, types_: tuple[str, ...] | None = None) -> bytes:
    """One request body (see the module docstring)."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
    if kind == 1:
        return json.dumps(draw(hostile)).encode()
    name = draw(st.sampled_from(types_ or sorted(MESSAGE_TYPES)))
    body = draw(valid(MESSAGE_TYPES[name]))
    if kind >= 5:
        body = _mutated(draw, body)
    return json.dumps(body, allow_nan=True).encode()


__all__ = ["bodies", "hostile", "valid"]
