"""Case-insensitive access to HTCondor's parameter table and metaknob templates.

The data lives in the generated :mod:`htcpool.config._param_table`. Knob names are
case-insensitive; entries named ``SUBSYS.NAME`` in the table are defaults that apply
only to that subsystem (or local name) and are found by :func:`default_for`.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.config._param_table import METAKNOBS, PARAMS, RANGES

#: The value types of the table.
PARAM_TYPES = ("string", "int", "bool", "double")


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One entry of the parameter table.

    ``low`` and ``high`` are the allowed range of a numeric knob (``range=`` in the table),
    None for an open side or a knob without one.
    """

    name: str
    default: str
    type: str
    low: int | float | None = None
    high: int | float | None = None


_BY_KEY: dict[str, ParamInfo] = {
    name.upper(): ParamInfo(name, default, kind, *RANGES.get(name, (None, None)))
    for name, (default, kind) in PARAMS.items()
}

_METAKNOBS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    category.upper(): (
        category,
        {template.upper(): (template, text) for template, text in templates.items()},
    )
    for category, templates in METAKNOBS.items()
}


def param_info(name: str) -> ParamInfo | None:
    """The table entry spelled ``name`` (any case, prefix included), or None."""
    return _BY_KEY.get(name.upper())


def param_info_key(key: str) -> ParamInfo | None:
    """:func:`param_info` for a name already upper-cased."""
    return _BY_KEY.get(key)


def default_for(name: str, prefixes: tuple[str, ...] = ()) -> ParamInfo | None:
    """The table entry that supplies ``name``'s default: ``PREFIX.NAME`` first, then ``NAME``."""
    key = name.upper()
    for prefix in prefixes:
        found = _BY_KEY.get(f"{prefix.upper()}.{key}")
        if found is not None:
            return found
    return _BY_KEY.get(key)


def all_params() -> list[ParamInfo]:
    """Every table entry, in table order."""
    return list(_BY_KEY.values())


def metaknob_categories() -> list[str]:
    """The metaknob categories (ROLE, FEATURE, POLICY, SECURITY, ...)."""
    return [spelling for spelling, _ in _METAKNOBS.values()]


def metaknob_templates(category: str) -> list[str] | None:
    """Template names of ``category`` as spelled in the table, or None if no such category."""
    found = _METAKNOBS.get(category.upper())
    if found is None:
        return None
    return [spelling for spelling, _ in found[1].values()]


def metaknob(category: str, template: str) -> tuple[str, str, str] | None:
    """(category, template, text) spelled as in the table, or None when unknown."""
    found = _METAKNOBS.get(category.upper())
    if found is None:
        return None
    entry = found[1].get(template.upper())
    if entry is None:
        return None
    return found[0], entry[0], entry[1]
