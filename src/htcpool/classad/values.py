"""Run-time values of the ClassAd language.

A value is represented by the cheapest Python object that can carry it, so the
evaluator can test types with ``type(v) is int`` and the caller gets values it
can use directly (the same shape as HTCondor's ``classad2`` module):

    ClassAd type      Python representation
    ------------      ---------------------
    Undefined         ``Value.Undefined``  (a singleton; compare with ``is``)
    Error             ``Value.Error``      (a singleton; compare with ``is``)
    Boolean           ``bool``
    Integer           ``int``, kept inside the signed 64-bit range by ``wrap_int``
    Real              ``float``
    String            ``str`` (HTCondor's bytes read as UTF-8; bytes that are not
                      UTF-8 are kept as lone surrogates, ``surrogateescape``)
    AbsTime           ``AbsTime``  (seconds since the epoch and a zone offset)
    RelTime           ``RelTime``  (seconds, possibly fractional)
    List              ``ListValue`` (the list's expressions and the ad they live in)
    ClassAd           ``htcpool.classad.ClassAd``

``bool`` is a subclass of ``int`` in Python, so code that needs to tell them
apart must test ``type(v) is int``, never ``isinstance(v, int)``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from htcpool.classad.nodes import Node

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_MASK64 = (1 << 64) - 1


class Value(enum.Enum):
    """The two exceptional ClassAd values."""

    Error = 1
    Undefined = 2

    def __repr__(self) -> str:
        return f"<Value.{self.name}>"


UNDEFINED = Value.Undefined
ERROR = Value.Error


def wrap_int(n: int) -> int:
    """Bring an integer into the signed 64-bit range the way C arithmetic wraps."""
    if INT64_MIN <= n <= INT64_MAX:
        return n
    n &= _MASK64
    return n - (1 << 64) if n > INT64_MAX else n


@dataclass(frozen=True, slots=True)
class AbsTime:
    """An absolute time: whole seconds since the epoch, and the zone offset in seconds east of UTC."""

    secs: int
    offset: int = 0


@dataclass(frozen=True, slots=True)
class RelTime:
    """A relative time (an interval) in seconds."""

    secs: float


class ListValue:
    """A ClassAd list value: the unevaluated element expressions and the ad that encloses them.

    Lists are lazy in ClassAds: ``{a, b}`` evaluates to a list whose elements are still the
    expressions ``a`` and ``b``, to be evaluated later in the scope where the list was written.
    """

    __slots__ = ("items", "scope")

    def __init__(self, items: tuple[Node, ...], scope: Any = None) -> None:
        self.items = items
        self.scope = scope

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        from htcpool.classad.unparse import unparse

        return unparse(self)


def type_name(v: object) -> str:
    """The ClassAd type name of a value, for messages."""
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    t = type(v)
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "real"
    if t is str:
        return "string"
    if t is AbsTime:
        return "abstime"
    if t is RelTime:
        return "reltime"
    if t is ListValue:
        return "list"
    return "classad"


def as_number(v: object) -> float | int | None:
    """An evaluated value as a number when it is an integer or a real, else None.

    Booleans are not numbers here: callers reading a count, a size or a time from an
    ad want ``true`` refused, not read as 1. This is the one helper every core and
    driver uses to read a number out of a ClassAd value.
    """
    t = type(v)
    return v if t is int or t is float else None  # type: ignore[return-value]


def as_int(v: object, default: int = 0) -> int:
    """An evaluated integer or real as an int (reals truncated), else ``default``."""
    n = as_number(v)
    return default if n is None else int(n)


def as_float(v: object, default: float = 0.0) -> float:
    """An evaluated integer or real as a float, else ``default``."""
    n = as_number(v)
    return default if n is None else float(n)
