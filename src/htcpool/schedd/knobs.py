"""Reading one numeric schedd knob without letting a bad value stop the schedd.

``lenient(get, name, default, convert, problems)`` converts the knob's text with
``convert`` (``htcpool.config.integer_value`` or ``real_value``, which evaluate as
HTCondor's param_integer and param_double do: ``5*60`` is 300); an unset or empty knob
gives ``default``, and one that does not convert is noted in ``problems`` (the schedd
logs them, docs/pool.md "Access point policy") and gives ``default`` too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from htcpool.config.errors import ConfigError

N = TypeVar("N", int, float)


def lenient(get: Callable[[str], str | None], name: str, default: N,
            convert: Callable[[str, str], N], problems: list[str]) -> N:
    """The knob's value, or ``default`` (with a note in ``problems`` when the text was bad)."""
    text = get(name)
    if text is None or not text.strip():
        return default
    try:
        return convert(name, text)
    except (ConfigError, ValueError) as e:
        problems.append(f"{name}: {e}; using {default}")
        return default
