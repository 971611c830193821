"""Where a name's raw value comes from, in a given reading context.

HTCondor's order (``lookup_macro``) is: ``LOCALNAME.NAME`` in the configuration, then
in the table; ``SUBSYSTEM.NAME`` in the configuration, then in the table; ``NAME`` in
the configuration, then the table default. An empty value found on the way stops the
search (``X =`` hides the default). A table entry with an empty default counts as
not there. The manual ("Introduction to Configuration") also lists
``SUBSYSTEM.LOCALNAME.NAME`` first; HTCondor 25's reader does not look it up (probed
through its Python bindings in ``tests/config/test_local_name.py``), and neither does
this one: a second startd's own settings are written ``B.NAME``.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.config.macro_set import Definition, MacroSet
from htcpool.config.table import param_info_key


@dataclass(frozen=True, slots=True)
class Context:
    """Who is reading: the subsystem (``STARTD``, ``TOOL``...) and the local name."""

    subsystem: str | None = None
    local_name: str | None = None

    def prefixes(self) -> tuple[str, ...]:
        return tuple(p for p in (self.local_name, self.subsystem) if p)


@dataclass(frozen=True, slots=True)
class Found:
    """A raw value and where it came from: a definition, or the table (``definition`` None)."""

    raw: str
    definition: Definition | None
    table_name: str = ""


def lookup(macros: MacroSet, name: str, context: Context) -> Found | None:
    """The raw value ``name`` has for ``context``, or None when nothing defines it."""
    key = name.upper()
    by_key = macros.get_key
    for prefix in (context.local_name, context.subsystem):
        if not prefix:
            continue
        prefixed = f"{prefix.upper()}.{key}"
        found = by_key(prefixed)
        if found is not None:
            return Found(found.raw, found)
        info = param_info_key(prefixed)
        if info is not None:
            return Found(info.default, None, info.name)
    found = by_key(key)
    if found is not None:
        return Found(found.raw, found)
    info = param_info_key(key)
    if info is not None and info.default:
        return Found(info.default, None, info.name)
    return None


def lookup_raw(macros: MacroSet, name: str, context: Context) -> str | None:
    """Just the raw value of :func:`lookup`."""
    found = lookup(macros, name, context)
    return None if found is None else found.raw
