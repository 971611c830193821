"""Text to typed values, the way HTCondor's ``param_integer``/``param_double``/``param_boolean`` do it.

Each conversion first tries the text as a plain literal (C ``strtoll``/``strtod`` on the
whole text, trailing whitespace allowed; ``true``/``false``/``1``/``0`` for booleans) and
otherwise evaluates it as a ClassAd expression with :mod:`htcpool.classad`, imported
lazily because the configuration package must load without it. So ``5*60`` is 300,
``(2+3)`` is 5 and ``2*$(MINUTE)`` works once expanded.

What each type accepts from an evaluation (HTCondor's ``EvalInteger``/``EvalFloat``/
``EvalBool``):

* an integer: an integer, a real truncated toward zero (``10.7`` is 10) or a boolean
  (``true`` is 1); the result must fit a 64-bit integer (HTCondor reads most integer
  knobs into a C ``int`` and refuses more than 2147483647; htcpool has one integer
  reader for every knob, sizes read as 64-bit included, so it holds to the wider bound);
* a real: an integer, a real or a boolean;
* a boolean: a boolean or a number (non-zero is true).

Anything else (a string, ``undefined``, ``error``, a list, text that is not an
expression) is refused: :func:`to_int`, :func:`to_float` and :func:`to_bool` raise
:class:`NotConvertible` with the reason. The ``text_to_*`` forms answer None instead, for
``$INT()``/``$REAL()`` which word their own errors.

:func:`integer_value`, :func:`real_value` and :func:`boolean_value` are the whole of
HTCondor's ``param_integer``/``param_double``/``param_boolean`` for one knob's expanded
text: the conversion above, then the range the parameter table gives the knob
(``range=`` in ``param_info.in``; HTCondor refuses a value outside it rather than
clamping it) or, for a knob holding a length of time that the table leaves open, htcpool's
own (``knob_range``: at least 1 s for the daemons' cycle periods, never negative for the
other waits they schedule by, at most 2147483647 s for any length of time); a real that is not finite (``nan``, ``inf``, ``1e400``) is refused for every
knob. They raise :class:`~htcpool.config.ConfigValueError` naming the knob, where
it was defined and why. :class:`~htcpool.config.Config`'s ``get_int``/``get_float``/
``get_bool`` use them, and so does any settings builder that holds a knob's text.

The evaluation has no ad around it and reads the time only from the ``clock`` it is
given: a value that calls ``time()`` without one is refused, saying so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

from htcpool.config.errors import ConfigValueError
from htcpool.config.table import param_info

_INT_LITERAL = re.compile(r"[ \t\n\r\f\v]*([+-]?\d+)[ \t\n\r\f\v]*\Z")
_REAL_LITERAL = re.compile(
    r"[ \t\n\r\f\v]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))"
    r"[ \t\n\r\f\v]*\Z",
    re.IGNORECASE,
)
_BOOL_WORDS = (("true", True), ("1", True), ("false", False), ("0", False))

#: The integers a configuration value may hold (HTCondor reads them as C ``long long``).
INT_LOWEST = -(1 << 63)
INT_HIGHEST = (1 << 63) - 1

Clock = Callable[[], float]
T = TypeVar("T", int, float, bool)


class NotAnExpression(ValueError):
    """The text does not parse as a ClassAd expression."""


class NotConvertible(ValueError):
    """The text is not a value of the type asked for; the message says why."""


def evaluate_classad(text: str, clock: Clock | None = None) -> Any:
    """Evaluate ``text`` as a ClassAd expression with no ad around it.

    Returns a Python value (int, float, str, bool, list, ...) or the classad library's
    ``Value.Undefined`` / ``Value.Error``; raises :class:`NotAnExpression` when the text
    does not parse and :class:`NotConvertible` when the evaluation cannot complete (it
    reads the time and ``clock`` is None).
    """
    from htcpool.classad.classad import to_python

    return to_python(_evaluate(text, clock))


def _evaluate(text: str, clock: Clock | None) -> Any:
    """The engine value of ``text`` (see :func:`evaluate_classad`)."""
    from htcpool.classad import ClassAdEvaluationError, ClassAdParseError, EvalContext, ExprTree

    try:
        tree = ExprTree(text)
    except ClassAdParseError as exc:
        raise NotAnExpression(str(exc)) from exc
    try:
        return tree.evaluate(context=EvalContext(clock=clock))
    except ClassAdEvaluationError as exc:
        raise NotConvertible(f"it cannot be evaluated: {exc}") from None


def _evaluated(text: str, clock: Clock | None) -> Any:
    """:func:`_evaluate` with a parse failure turned into :class:`NotConvertible`."""
    try:
        return _evaluate(text, clock)
    except NotAnExpression:
        raise NotConvertible("it is not a number and not a valid ClassAd expression") from None


def _refused(value: Any) -> NotConvertible:
    from htcpool.classad.classad import to_node
    from htcpool.classad.unparse import unparse

    return NotConvertible(f"it evaluates to {unparse(to_node(value))}")


def _in_range(value: int) -> int:
    if not INT_LOWEST <= value <= INT_HIGHEST:
        raise NotConvertible("it is out of range for an integer")
    return value


def to_int(text: str, clock: Clock | None = None) -> int:
    """The integer ``text`` denotes; :class:`NotConvertible` says why when there is none."""
    match = _INT_LITERAL.match(text)
    if match:
        return _in_range(int(match.group(1)))
    value = _evaluated(text, clock)
    kind = type(value)
    if kind is bool or kind is int:
        return _in_range(int(value))
    if kind is float:
        if not math.isfinite(value):
            raise NotConvertible("it is out of range for an integer")
        return _in_range(int(value))
    raise _refused(value)


def to_float(text: str, clock: Clock | None = None) -> float:
    """The real number ``text`` denotes; :class:`NotConvertible` says why when there is none."""
    match = _REAL_LITERAL.match(text)
    if match:
        return float(match.group(1))
    value = _evaluated(text, clock)
    if type(value) in (bool, int, float):
        return float(value)
    raise _refused(value)


def to_bool(text: str, clock: Clock | None = None) -> bool:
    """The boolean ``text`` denotes; :class:`NotConvertible` says why when there is none."""
    lowered = text.lower()
    for word, result in _BOOL_WORDS:
        if lowered.startswith(word) and lowered[len(word) :].strip(" \t\n\r\f\v") == "":
            return result
    value = _evaluated(text, clock)
    kind = type(value)
    if kind is bool:
        return bool(value)
    if kind is int or kind is float:
        return bool(value != 0)
    raise _refused(value)


def text_to_int(text: str, clock: Clock | None = None) -> int | None:
    """The integer ``text`` denotes, or None when it is not a valid integer."""
    try:
        return to_int(text, clock)
    except NotConvertible:
        return None


def text_to_float(text: str, clock: Clock | None = None) -> float | None:
    """The real number ``text`` denotes, or None when it is not a valid number."""
    try:
        return to_float(text, clock)
    except NotConvertible:
        return None


def text_to_bool(text: str, clock: Clock | None = None) -> bool | None:
    """The boolean ``text`` denotes, or None when it is not a valid boolean."""
    try:
        return to_bool(text, clock)
    except NotConvertible:
        return None


#: the periods htcpool's daemons schedule their work by, which the parameter table leaves
#: without a range: one below 1 second would make a daemon loop without pause
CYCLE_PERIODS = frozenset({
    "SCHEDD_INTERVAL", "UPDATE_INTERVAL", "MASTER_UPDATE_INTERVAL", "COLLECTOR_UPDATE_INTERVAL",
    "NEGOTIATOR_UPDATE_INTERVAL", "POLLING_INTERVAL", "ALIVE_INTERVAL", "STARTER_UPDATE_INTERVAL",
})
#: other lengths of time htcpool's daemons wait by (0 is allowed: "the default" or "at once")
WAITS = frozenset({
    "NEGOTIATOR_INTERVAL", "NEGOTIATOR_MIN_INTERVAL", "NEGOTIATOR_CYCLE_DELAY", "CLASSAD_LIFETIME",
    "PERIODIC_EXPR_INTERVAL", "CGROUP_POLLING_INTERVAL", "STARTER_INITIAL_UPDATE_INTERVAL",
    "SHUTDOWN_GRACEFUL_TIMEOUT", "SHUTDOWN_FAST_TIMEOUT", "MASTER_BACKOFF_CONSTANT",
    "MASTER_BACKOFF_CEILING", "MASTER_RECOVER_FACTOR",
})
#: name endings of the knobs that hold a length of time
PERIOD_SUFFIXES = ("_INTERVAL", "_TIMEOUT", "_DELAY", "_LIFETIME", "_HALFLIFE", "_PERIOD")
#: the longest length of time a knob may hold: HTCondor reads them into a C ``int``
PERIOD_HIGHEST = (1 << 31) - 1


def knob_range(name: str) -> tuple[int | float | None, int | float | None]:
    """The (low, high) a numeric knob's value must lie in (None: open). The parameter table's
    ``range=`` where it gives one; otherwise htcpool's own for a length of time: at least 1 for
    ``CYCLE_PERIODS``, 0 for ``WAITS``, and at most ``PERIOD_HIGHEST`` for every knob whose
    name says it holds one (``PERIOD_SUFFIXES``; some take -1 for "never")."""
    info = param_info(name)
    low, high = (info.low, info.high) if info is not None else (None, None)
    if low is not None or high is not None:
        return low, high
    base = name.rsplit(".", 1)[-1].upper()
    if base in CYCLE_PERIODS:
        return 1, PERIOD_HIGHEST
    if base in WAITS:
        return 0, PERIOD_HIGHEST
    if base.endswith(PERIOD_SUFFIXES):
        return None, PERIOD_HIGHEST
    return None, None


def _short(text: str) -> str:
    """Knob text for a message: a value of 400 digits is shown by its start and its length."""
    text = text.strip()
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def _knob(name: str, text: str, kind: str, convert: Callable[[str, Clock | None], T],
          source: str, line: int, clock: Clock | None) -> T:
    try:
        value = convert(text, clock)
    except NotConvertible as exc:
        raise ConfigValueError(f"{name} = {_short(text)} is not a valid {kind}: {exc}", source, line) from None
    if type(value) is bool:
        return value
    if type(value) is float and not math.isfinite(value):
        raise ConfigValueError(f"{name} = {_short(text)} is not a valid {kind}: it is not finite", source, line)
    low, high = knob_range(name)
    if (low is None or value >= low) and (high is None or value <= high):
        return value
    allowed = (f"from {low} to {high}" if low is not None and high is not None
               else f"at least {low}" if low is not None else f"at most {high}")
    too = "low" if low is not None and value < low else "high"
    raise ConfigValueError(f"{name} = {_short(text)} is too {too}: it must be {allowed}", source, line)


def integer_value(name: str, text: str, *, source: str = "", line: int = 0, clock: Clock | None = None) -> int:
    """Knob ``name``'s expanded ``text`` as an integer, checked against the table's range.

    ``source`` and ``line`` say where the text was defined, for the error."""
    return _knob(name, text, "integer", to_int, source, line, clock)


def real_value(name: str, text: str, *, source: str = "", line: int = 0, clock: Clock | None = None) -> float:
    """Knob ``name``'s expanded ``text`` as a real number, checked against the table's range."""
    return _knob(name, text, "number", to_float, source, line, clock)


def boolean_value(name: str, text: str, *, source: str = "", line: int = 0, clock: Clock | None = None) -> bool:
    """Knob ``name``'s expanded ``text`` as a boolean."""
    return _knob(name, text, "boolean", to_bool, source, line, clock)
