"""``use CATEGORY : TEMPLATE(args) ...``: metaknob templates from the parameter table.

The right-hand side lists one or more templates separated by commas and/or spaces;
each may carry a parenthesised argument list (nested ``()``/``[]`` allowed inside).
For each template, in order, the arguments are substituted into the template text
(:func:`~htcpool.config.macros.expand_meta_args`: ``$(N)``, ``$(N?)``, ``$(0#)``,
``$(N+)``, ``$(N:default)``) and the text is read as configuration at that point:
assignments with immediate self references, nested ``use``, ``if`` blocks (local to the
template) and ``error``/``warning``. Template lines are trimmed and names in them are
not macro-expanded, as in HTCondor's ``Parse_config_string``.

Definitions made by a template are recorded with the ``use`` line as their location
and ``CATEGORY:TEMPLATE`` plus the offset of the template line.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from htcpool.config.conditions import ConditionError, IfStack
from htcpool.config.errors import ConfigMetaknobError, ConfigUsageError
from htcpool.config.lines import C_SPACE
from htcpool.config.macros import expand_meta_args
from htcpool.config.table import metaknob, metaknob_templates

if TYPE_CHECKING:
    from htcpool.config.parser import Reader


@functools.lru_cache(maxsize=512)
def split_uses(rhs: str) -> tuple[tuple[str, str], ...]:
    """(template, args) pairs of a ``use`` right-hand side, in order."""
    items: list[tuple[str, str]] = []
    pos = 0
    length = len(rhs)
    while pos < length:
        while pos < length and (rhs[pos] in C_SPACE or rhs[pos] == ","):
            pos += 1
        start = pos
        while pos < length and rhs[pos] not in C_SPACE and rhs[pos] not in ",(":
            pos += 1
        if pos == start:
            break
        knob = rhs[start:pos]
        while pos < length and rhs[pos] in C_SPACE:
            pos += 1
        args = ""
        if pos < length and rhs[pos] == "(":
            close = _close_brace(rhs, pos, 25)
            if close is not None:
                args = rhs[pos + 1 : close]
                pos = close
            pos += 1
            while pos < length and rhs[pos] in C_SPACE:
                pos += 1
        items.append((knob, args))
    return tuple(items)


def _close_brace(text: str, pos: int, depth: int) -> int | None:
    """Index of the bracket closing ``text[pos]``, honouring nested ``(`` and ``[``."""
    if depth < 0:
        return None
    closing = {"(": ")", "[": "]", "{": "}", "<": ">"}.get(text[pos], text[pos])
    pos += 1
    while pos < len(text):
        ch = text[pos]
        if ch == closing:
            return pos
        if ch in "([":
            inner = _close_brace(text, pos, depth - 1)
            if inner is None:
                return None
            pos = inner
        pos += 1
    return None


def template_text(category: str, template: str) -> tuple[str, str, str]:
    """(category, template, text) as spelled in the table; ConfigUsageError when unknown."""
    found = metaknob(category, template)
    if found is None:
        if metaknob_templates(category) is None:
            raise ConfigUsageError(f"use {category}: no such metaknob category")
        raise ConfigUsageError(f"use {category}: does not recognise {template}")
    return found


def apply_use(reader: Reader, category: str, rhs: str, source: str, line: int, depth: int) -> None:
    """Apply a ``use CATEGORY : rhs`` statement met at ``source``:``line``."""
    if not category:
        raise ConfigMetaknobError(f"use needs a keyword before : {rhs}", source, line)
    if metaknob_templates(category) is None:
        raise ConfigMetaknobError(
            f"use {category}: no such metaknob category (at use {category}:{rhs})", source, line
        )
    for knob, args in split_uses(rhs):
        found = metaknob(category, knob)
        if found is None:
            raise ConfigMetaknobError(
                f"use {category}: does not recognise {knob} (at use {category}:{rhs})",
                source,
                line,
            )
        spelled_category, spelled_template, text = found
        if args or "$(" in text:
            text = expand_meta_args(text, args)
        label = f"{spelled_category}:{spelled_template}"
        _read_template(reader, text, label, source, line, depth)


@functools.lru_cache(maxsize=512)
def template_lines(text: str) -> tuple[tuple[int, str, bool], ...]:
    """(offset, line, may be if/elif/else/endif) for each non-comment line of a template.

    Lines are trimmed; blank lines are dropped and not counted in offsets, comment lines
    are counted but not returned.
    """
    out = []
    offset = -1
    for raw in text.split("\n"):
        stripped = raw.strip(C_SPACE)
        if not stripped:
            continue
        offset += 1
        if stripped[0] == "#":
            continue
        out.append((offset, stripped, stripped[0] in "iIeE"))
    return tuple(out)


def _read_template(reader: Reader, text: str, label: str, source: str, line: int, depth: int) -> None:
    ifs = IfStack()
    for offset, stripped, maybe_if in template_lines(text):
        if maybe_if:
            ex = reader.expander(source, line)
            try:
                if ifs.handle(stripped, ex.expand, reader.lookup):
                    continue
            except ConditionError as exc:
                raise ConfigMetaknobError(f"use {label} is invalid: {exc}", source, line) from None
        if not ifs.enabled():
            continue
        _template_statement(reader, stripped, label, source, line, offset, depth)


@functools.lru_cache(maxsize=2048)
def parse_template_line(text: str) -> tuple[bool, str, str, str]:
    """(is_use, name, operator, rhs) of one template line, as Parse_config_string splits it."""
    return _parse_template_line(text)


@functools.lru_cache(maxsize=2048)
def _parsed_statement(text: str) -> tuple[bool, str, str, str, bool]:
    """:func:`parse_template_line` plus whether the name is a legal knob name."""
    from htcpool.config.parser import is_valid_name

    is_use, name, op, rhs = _parse_template_line(text)
    return is_use, name, op, rhs, is_valid_name(name)


def _parse_template_line(text: str) -> tuple[bool, str, str, str]:
    is_use = text[:4].lower() == "use "
    pos = 4 if is_use else 0
    while is_use and pos < len(text) and text[pos] in C_SPACE:
        pos += 1
    start = pos
    op = ""
    while pos < len(text):
        if text[pos] in C_SPACE or text[pos] in "=:":
            op = text[pos]
            break
        pos += 1
    name = text[start:pos]
    pos += 1
    while pos < len(text):
        ch = text[pos]
        if ch in "=:":
            if op in ("=", ":"):
                op = ""
                break
            op = ch
        elif ch not in C_SPACE:
            break
        pos += 1
    if pos >= len(text) and op not in ("=", ":"):
        op = "?"
    return is_use, name, op, text[pos:].lstrip(C_SPACE)


def _template_statement(
    reader: Reader, text: str, label: str, source: str, line: int, offset: int, depth: int
) -> None:
    is_use, name, op, rhs, valid_name = _parsed_statement(text)
    if op == "?":
        raise ConfigMetaknobError(f"use {label} is invalid: no operator in '{text}'", source, line)
    if op == ":" and name.lower() in ("error", "warning"):
        message = reader.expander(source, line).expand(rhs)
        if name.lower() == "warning":
            reader.warnings.append(f"Warning : {message}")
            return
        raise ConfigMetaknobError(f"Error : {message} (at use {label})", source, line)
    if is_use:
        from htcpool.config.parser import MAX_NESTING_DEPTH

        if depth + 1 > MAX_NESTING_DEPTH:
            raise ConfigMetaknobError(f"use {label} nesting too deep", source, line)
        apply_use(reader, name, rhs, source, line, depth + 1)
        return
    if not valid_name:
        raise ConfigMetaknobError(f"use {label} is invalid: bad name '{name}'", source, line)
    reader.define(name, rhs, source, line, label, offset)
