"""The table of definitions a configuration read produces, with where each came from.

Names are case-insensitive; the spelling of the first definition is kept for display.
Values are stored raw (unexpanded, apart from self references). Following HTCondor's
``insert_macro``, a *new* plain name whose value equals its parameter-table default is
not stored at all (the table already supplies it, and ``-summary`` must not list it);
a prefixed name (``STARTD.X``) or a redefinition is always stored.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from htcpool.config.table import ParamInfo, param_info

#: Pseudo-source names for definitions that come from no file.
DETECTED = "<Detected>"
ENVIRONMENT = "<Environment>"
DEFAULT = "<Default>"


@dataclass(slots=True)
class Definition:
    """One stored definition: its name, raw value and provenance."""

    name: str
    raw: str
    source: str
    line: int
    metaknob: str = ""  # "CATEGORY:TEMPLATE" when a `use` statement set it
    metaknob_line: int = 0  # line of the template text that set it
    order: int = 0  # insertion order, for -summary

    def location(self) -> str:
        """Human-readable provenance: ``file, line N[, use CAT:NAME+K]``."""
        if self.source in (DETECTED, ENVIRONMENT, DEFAULT):
            return self.source
        text = f"{self.source}, line {self.line}"
        if self.metaknob:
            text += f", use {self.metaknob}+{self.metaknob_line}"
        return text


def same_value(default: str, value: str) -> bool:
    """HTCondor's test of a value against the table default (true/false ignore case)."""
    if default == value:
        return True
    return default.lower() == value.lower() and default.lower() in ("true", "false")


@functools.lru_cache(maxsize=4096)
def table_entry_for(name: str) -> tuple[ParamInfo | None, bool]:
    """The table entry behind ``name`` and whether it was found after a ``PREFIX.``."""
    info = param_info(name)
    if info is not None:
        return info, False
    prefix, dot, rest = name.partition(".")
    if dot and rest:
        return param_info(rest), True
    return None, False


class MacroSet:
    """Definitions by upper-cased name, in insertion order."""

    def __init__(self) -> None:
        self._items: dict[str, Definition] = {}
        self._counter = 0

    def get(self, name: str) -> Definition | None:
        return self._items.get(name.upper())

    def get_key(self, key: str) -> Definition | None:
        """:meth:`get` for a name already upper-cased."""
        return self._items.get(key)

    def raw(self, name: str) -> str | None:
        found = self._items.get(name.upper())
        return None if found is None else found.raw

    @property
    def version(self) -> int:
        """Grows with every insert; lets readers of the set notice changes."""
        return self._counter

    def __contains__(self, name: str) -> bool:
        return name.upper() in self._items

    def __len__(self) -> int:
        return len(self._items)

    def definitions(self) -> list[Definition]:
        return list(self._items.values())

    def insert(
        self,
        name: str,
        raw: str,
        source: str,
        line: int,
        metaknob: str = "",
        metaknob_line: int = 0,
    ) -> None:
        """Define ``name`` (see the module docstring for the default-matching rule)."""
        key = name.upper()
        self._counter += 1
        existing = self._items.get(key)
        if existing is not None:
            existing.raw = raw
            existing.source = source
            existing.line = line
            existing.metaknob = metaknob
            existing.metaknob_line = metaknob_line
            existing.order = self._counter
            return
        info, after_prefix = table_entry_for(name)
        if info is not None and same_value(info.default, raw):
            if not after_prefix:
                return
            raw = info.default  # HTCondor keeps the table's spelling ("True" for "true")
        self._items[key] = Definition(
            name, raw, source, line, metaknob, metaknob_line, self._counter
        )

    def copy(self) -> MacroSet:
        clone = MacroSet()
        clone._counter = self._counter
        clone._items = {
            key: Definition(
                d.name, d.raw, d.source, d.line, d.metaknob, d.metaknob_line, d.order
            )
            for key, d in self._items.items()
        }
        return clone
