"""Text to typed values, the way HTCondor's ``param_integer``/``param_double``/``param_boolean`` do it.

Each conversion first tries the text as a plain literal (C ``strtoll``/``strtod`` on the
whole text, trailing whitespace allowed; ``true``/``false``/``1``/``0`` for booleans) and
otherwise evaluates it as a ClassAd expression with :mod:`htcpool.classad`, imported
lazily because the configuration package must load without it. An integer accepts a
real (truncated toward zero) or a boolean; a real accepts an integer or a boolean; a
boolean accepts a number (non-zero is true). Anything else is "not valid", reported as
None.
"""

from __future__ import annotations

import math
import re
from typing import Any

_INT_LITERAL = re.compile(r"[ \t\n\r\f\v]*([+-]?\d+)[ \t\n\r\f\v]*\Z")
_REAL_LITERAL = re.compile(
    r"[ \t\n\r\f\v]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))"
    r"[ \t\n\r\f\v]*\Z",
    re.IGNORECASE,
)
_BOOL_WORDS = (("true", True), ("1", True), ("false", False), ("0", False))

#: Sentinel results of :func:`evaluate_classad` besides plain Python values.
UNDEFINED = "UNDEFINED-VALUE"
ERROR = "ERROR-VALUE"


class NotAnExpression(ValueError):
    """The text does not parse as a ClassAd expression."""


def evaluate_classad(text: str) -> Any:
    """Evaluate ``text`` as a ClassAd expression with no ad around it.

    Returns a Python value (int, float, str, bool, list, ...) or the classad library's
    ``Value.Undefined`` / ``Value.Error``; raises :class:`NotAnExpression` when the text
    does not parse.
    """
    from htcpool.classad import ClassAdParseError, ExprTree

    try:
        tree = ExprTree(text)
    except ClassAdParseError as exc:
        raise NotAnExpression(str(exc)) from exc
    return tree.eval()


def _is_special(value: Any) -> bool:
    from htcpool.classad import Value

    return value is Value.Undefined or value is Value.Error


def text_to_int(text: str) -> int | None:
    """The integer ``text`` denotes, or None when it is not a valid integer."""
    match = _INT_LITERAL.match(text)
    if match:
        return int(match.group(1))
    try:
        value = evaluate_classad(text)
    except NotAnExpression:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


def text_to_float(text: str) -> float | None:
    """The real number ``text`` denotes, or None when it is not a valid number."""
    match = _REAL_LITERAL.match(text)
    if match:
        return float(match.group(1))
    try:
        value = evaluate_classad(text)
    except NotAnExpression:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def text_to_bool(text: str) -> bool | None:
    """The boolean ``text`` denotes, or None when it is not a valid boolean."""
    lowered = text.lower()
    for word, result in _BOOL_WORDS:
        if lowered.startswith(word) and lowered[len(word) :].strip(" \t\n\r\f\v") == "":
            return result
    try:
        value = evaluate_classad(text)
    except NotAnExpression:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not _is_special(value):
        return value != 0
    return None
