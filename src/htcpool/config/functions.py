"""The ``$FUNC(...)`` macro functions of the configuration language.

Each function gets the :class:`~htcpool.config.macros.Expander` (for lookups, the
environment and the random source), the reference and the text it sits in, and the
chain of names being expanded (so a function that expands a macro's value cannot
loop). Most functions take a *name-or-literal* argument: when a macro of that name
exists its raw value is used, otherwise the argument text itself, and in both cases
the result is then expanded.

Errors (an index out of range, a value that is not a number, a bad printf format)
raise :class:`~htcpool.config.errors.ConfigExpansionError`; HTCondor aborts on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcpool.config.errors import ConfigRecursionError
from htcpool.config.macros import FILENAME, MacroRef
from htcpool.config.typed import (
    NotAnExpression,
    NotConvertible,
    evaluate_classad,
    text_to_float,
    text_to_int,
)

if TYPE_CHECKING:
    from htcpool.config.macros import Expander

_SPACE = " \t\n\r\f\v"
_PRINTF = re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d*))?(hh|h|ll|l|L|q|j|z|t|I64)?([diouxXeEfFgGaAcs])")
_STRTOL = re.compile(r"[ \t\n\r\f\v]*([+-]?\d+)")


def _value_of(ex: Expander, name: str, chain: tuple[str, ...]) -> str | None:
    """The expanded value of macro ``name``, or None when no macro has that name."""
    raw = ex.lookup(name)
    if raw is None:
        return None
    key = name.upper()
    if key in chain:
        raise ConfigRecursionError(
            f"macro {name} refers back to itself ({' -> '.join([*chain, key])})", *ex.where
        )
    return ex.expand(raw, (*chain, key))


def _name_or_literal(ex: Expander, text: str, chain: tuple[str, ...]) -> str:
    """A function argument: the named macro's expanded value, else the text expanded."""
    value = _value_of(ex, text, chain)
    return ex.expand(text, chain) if value is None else value


def _list_items(text: str, keep_empty: bool) -> list[str]:
    items = [item.strip(_SPACE) for item in text.split(",")]
    return items if keep_empty else [item for item in items if item]


def _printf(ex: Expander, fmt: str, value: Any, kinds: str, what: str) -> str:
    """Format ``value`` with a C printf format holding exactly one conversion of ``kinds``."""
    found = [m for m in _PRINTF.finditer(fmt.replace("%%", "\0\0"))]
    if len(found) != 1 or found[0].group(5) not in kinds:
        raise ex.fail(f"{what} error: '{fmt}' is not a valid format specifier")
    match = found[0]
    conversion = match.group(5)
    if conversion in "aA":
        conversion = "e" if conversion == "a" else "E"
    if conversion in "iu":
        conversion = "d"
    spec = f"%{match.group(1)}{match.group(2)}"
    if match.group(3) is not None:
        spec += f".{match.group(3)}"
    spec += conversion
    before = fmt[: match.start()].replace("%%", "%")
    after = fmt[match.end() :].replace("%%", "%")
    return before + (spec % value) + after


def _int_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    name, comma, fmt = ref.body(text).partition(",")
    value = _name_or_literal(ex, name, chain)
    number = text_to_int(value, ex.clock)
    if number is None:
        raise ex.fail(f"$INT() error: {value} does not evaluate to an integer")
    if not comma:
        return str(number)
    return _printf(ex, fmt, number, "dioxXuc", "$INT()")


def _real_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    name, comma, fmt = ref.body(text).partition(",")
    value = _name_or_literal(ex, name, chain)
    number = text_to_float(value, ex.clock)
    if number is None:
        raise ex.fail(f"$REAL() error: {value} does not evaluate to a real")
    if not comma:
        return "%.16G" % number
    out = _printf(ex, fmt, number, "eEfFgGaA", "$REAL()")
    return out if "." in out else out + ".0"


def _string_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    name, comma, fmt = ref.body(text).partition(",")
    value = _name_or_literal(ex, name, chain)
    try:
        result = evaluate_classad(value, ex.clock)
    except NotAnExpression:
        result = None
    except NotConvertible as exc:
        raise ex.fail(f"$STRING() error: {value}: {exc}") from None
    if isinstance(result, str):
        value = result
    if not comma:
        return value
    return _printf(ex, fmt, value, "s", "$STRING()")


def _eval_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    value = _name_or_literal(ex, ref.body(text), chain)
    try:
        result = evaluate_classad(value, ex.clock)
    except NotAnExpression:
        return value
    except NotConvertible as exc:
        raise ex.fail(f"$EVAL() error: {value}: {exc}") from None
    if isinstance(result, str):
        return result
    return _unparse(result)


def _unparse(value: Any) -> str:
    """ClassAd text of an evaluated value (used by ``$EVAL``)."""
    from htcpool.classad import Value

    if value is Value.Undefined:
        return "undefined"
    if value is Value.Error:
        return "error"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        return text if ("." in text or "e" in text or "n" in text) else text + ".0"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "{ " + ", ".join(_unparse(item) for item in value) + " }"
    return str(value)


def _env_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    value = ex.environ.get(ref.name(text))
    if value is None:
        default = ref.default(text)
        return "UNDEFINED" if default is None else default
    return value


def _random_choice(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    items = _list_items(ref.body(text), keep_empty=False)
    if len(items) == 1:
        listed = _value_of(ex, items[0], chain)
        if listed is not None:
            items = _list_items(listed, keep_empty=False)
    if not items:
        raise ex.fail("$RANDOM_CHOICE() error: no list")
    ex.random_draws += 1
    return items[ex.rng.randrange(len(items))]


def _strtol(ex: Expander, text: str | None, what: str) -> int:
    match = _STRTOL.match(text or "")
    if match is None:
        raise ex.fail(f"$RANDOM_INTEGER() error: invalid {what}")
    return int(match.group(1))


def _random_integer(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    parts = _list_items(ref.body(text), keep_empty=False)
    low = _strtol(ex, parts[0] if parts else None, "min")
    high = _strtol(ex, parts[1] if len(parts) > 1 else None, "max")
    step = _strtol(ex, parts[2], "step") if len(parts) > 2 else 1
    if step < 1:
        raise ex.fail("$RANDOM_INTEGER() error: invalid step")
    if low > high:
        raise ex.fail("$RANDOM_INTEGER() error: min > max")
    count = (step + high - low) // step
    ex.random_draws += 1
    return str(low + ex.rng.randrange(count) * step)


def _choice(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    entries = _list_items(ref.body(text), keep_empty=True)
    index_text = _name_or_literal(ex, entries[0], chain)
    index = text_to_int(index_text, ex.clock)
    if index is None or index < 0:
        raise ex.fail(f"$CHOICE() error: '{index_text}' is invalid index")
    items = entries[1:]
    if len(entries) == 2:
        listed = _value_of(ex, entries[1], chain)
        if listed is None:
            raise ex.fail(f"$CHOICE() error: no list named {entries[1]}")
        items = _list_items(listed, keep_empty=True)
    if index >= len(items):
        raise ex.fail(f"$CHOICE() error: index {index} is out of range")
    return items[index]


def _substr(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    name, comma, rest = ref.body(text).partition(",")
    if not comma:
        raise ex.fail("$SUBSTR() error: no length specified")
    start_arg, comma2, length_arg = rest.partition(",")
    start_text = _name_or_literal(ex, start_arg, chain)
    start = text_to_int(start_text, ex.clock)
    if start is None:
        raise ex.fail(f"$SUBSTR() error: {start_text} is invalid start index")
    length: int | None = None
    if comma2:
        length_text = _name_or_literal(ex, length_arg, chain)
        length = text_to_int(length_text, ex.clock)
        if length is None:
            raise ex.fail(f"$SUBSTR() error: {length_text} is invalid length")
    value = _value_of(ex, name, chain)
    if value is None:
        return ""
    size = len(value)
    if start < 0:
        start = max(size + start, 0)
    start = min(start, size)
    remaining = size - start
    if length is None:
        length = remaining
    elif length < 0:
        length = max(remaining + length, 0)
    return value[start : start + min(length, remaining)]


def _filename(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    body = ref.body(text)
    value = _name_or_literal(ex, body, chain)
    from htcpool.config.paths import filename_parts

    if ref.function == "BASENAME":
        flags = "nx"
    elif ref.function == "DIRNAME":
        flags = "p"
    else:
        flags = ref.flags
    return filename_parts(value, flags, ex.cwd)


FUNCTIONS: dict[str, Callable[[Expander, MacroRef, str, tuple[str, ...]], str]] = {
    "ENV": _env_function,
    "INT": _int_function,
    "REAL": _real_function,
    "STRING": _string_function,
    "EVAL": _eval_function,
    "RANDOM_CHOICE": _random_choice,
    "RANDOM_INTEGER": _random_integer,
    "CHOICE": _choice,
    "SUBSTR": _substr,
    "BASENAME": _filename,
    "DIRNAME": _filename,
    FILENAME: _filename,
}


def evaluate_function(ex: Expander, ref: MacroRef, text: str, chain: tuple[str, ...]) -> str:
    """The text that replaces the ``$FUNC(...)`` reference ``ref`` in ``text``."""
    return FUNCTIONS[ref.function](ex, ref, text, chain)
