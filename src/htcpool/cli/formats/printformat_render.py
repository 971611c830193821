"""Printing ads with a print-format file's columns (``printformat.PrintFormat``).

``format_rows`` gives the heading line (unless ``NOHEADER`` or ``LABEL``) and one record per ad
that meets ``WHERE``, ordered by the ``GROUP BY`` keys (numbers before strings, undefined last;
``DESCENDING`` reverses a key). The tool around it adds the title and the summary.

A cell is the column's ``PRINTAS`` function of the value, else its ``PRINTF`` (one conversion
as ``-format`` takes them, ``%T`` a duration and ``%V`` a short date), else the value as ``-af``
prints it. An undefined value prints the column's ``OR`` character (doubled: the whole width),
else nothing (``undefined`` for a plain column). A column's width is ``WIDTH`` (negative or
``LEFT``: left-aligned, else right-aligned); ``WIDTH AUTO`` and ``FIT`` make it the widest of
its heading and cells, left-aligned; with no width it is as wide as its heading, left-aligned;
a cell is cut to the width only with ``TRUNCATE``. Each field is ``FIELDPREFIX`` (unless
``NOPREFIX``), the cell, and ``FIELDSUFFIX`` (unless ``NOSUFFIX``, and never after the last
field); a record is ``RECORDPREFIX``, its fields and ``RECORDSUFFIX``. With ``LABEL`` each
field is ``heading SEPARATOR cell`` and nothing is padded. Trailing blanks of a line are
dropped, as in the built-in views.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, Value, fixed_clock
from htcpool.cli.formats.adtext import autoformat_value
from htcpool.cli.formats.fields import format_short_date
from htcpool.cli.formats.printas import FUNCTIONS, Moment
from htcpool.cli.formats.printf import convert
from htcpool.cli.formats.printformat import Column, PrintFormat

_SPEC = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([diouxXeEfgGcsvVrTY%])")


def _evaluate(tree: ExprTree, ad: ClassAd, context: EvalContext) -> Any:
    try:
        return tree.evaluate(ad, context=context)
    except ClassAdError:
        return Value.Error


def _printf(fmt: str, value: Any, column: Column, m: Moment) -> str | None:
    pieces, pos = [], 0
    for spec in _SPEC.finditer(fmt):
        pieces.append(fmt[pos:spec.start()])
        if spec.group(4) == "V":
            number = value if type(value) in (int, float) else None
            cell = None if number is None else format_short_date(int(number), m.zone)
        else:
            cell = convert(spec, value, column.expr, m.zone)
        if cell is None:
            return None
        pieces.append(cell)
        pos = spec.end()
    return "".join(pieces) + fmt[pos:]


def _cell(column: Column, value: Any, ad: ClassAd, m: Moment) -> str | None:
    if column.printas is not None:
        return FUNCTIONS[column.printas](value, ad, m)
    if value is Value.Undefined:
        return None
    if column.printf is not None:
        return _printf(column.printf, value, column, m)
    return autoformat_value(value)


def _sort_key(keys: Sequence[tuple[ExprTree, bool]], ad: ClassAd, context: EvalContext) -> tuple[Any, ...]:
    out: list[Any] = []
    for tree, descending in keys:
        value = _evaluate(tree, ad, context)
        if type(value) in (int, float, bool):
            key: tuple[int, Any] = (0, float(value))
        elif type(value) is str:
            key = (1, value.lower())
        else:
            key = (2, 0)
        out.append(_Reversed(key) if descending else key)
    return tuple(out)


class _Reversed:
    """A sort key that orders the other way (``DESCENDING``)."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[int, Any]) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


def select(pf: PrintFormat, ads: Sequence[ClassAd], now: int, *, where: bool = True) -> list[ClassAd]:
    """The ads that meet ``WHERE`` (unless ``where`` is false: chosen already), in ``GROUP BY``
    order (else as given)."""
    context = EvalContext(clock=fixed_clock(now))
    test = ExprTree(pf.where) if pf.where and where else None
    chosen = [ad for ad in ads if test is None or _evaluate(test, ad, context) is True]
    if pf.group_by:
        keys = [(ExprTree(expr), descending) for expr, descending in pf.group_by]
        chosen.sort(key=lambda ad: _sort_key(keys, ad, context))
    return chosen


def _text(column: Column, cell: str | None, width: int) -> str:
    if cell is None:
        alt = column.alt or ""
        cell = alt[0] * width if len(alt) == 2 else alt
    return cell


def _widths(pf: PrintFormat, cells: list[list[str | None]]) -> list[tuple[int, bool]]:
    """Each column's width and whether it is left-aligned."""
    out = []
    for i, column in enumerate(pf.columns):
        heading = len(column.heading) if pf.header else 0
        if column.auto or column.fit:
            longest = max([heading, *(len(_text(column, row[i], 0)) for row in cells)])
            out.append((longest, column.align != "right"))
        elif column.width is None:
            out.append((heading, column.align != "right"))
        else:
            left = column.align == "left" or (column.width < 0 and column.align != "right")
            out.append((max(abs(column.width), heading), left))
    return out


def _join(pf: PrintFormat, fields: Sequence[str]) -> str:
    out = []
    for i, (column, text) in enumerate(zip(pf.columns, fields, strict=True)):
        out.append(("" if column.noprefix else pf.field_prefix) + text)
        if i < len(fields) - 1 and not column.nosuffix:
            out.append(pf.field_suffix)
    return "".join(out)


def format_rows(pf: PrintFormat, ads: Sequence[ClassAd], *, now: int, zone: int) -> str:
    """The heading line and the records (see the module docstring)."""
    m = Moment(now, zone)
    context = EvalContext(clock=fixed_clock(now))
    trees = [ExprTree(column.expr) for column in pf.columns]
    cells = [[_cell(column, _evaluate(tree, ad, context), ad, m) for column, tree in zip(pf.columns, trees,
                                                                                         strict=True)]
             for ad in ads]
    if pf.labels:
        return "".join(pf.record_prefix + _join(pf, [column.heading + pf.separator + _text(column, cell, 0)
                                                     for column, cell in zip(pf.columns, row, strict=True)])
                       + pf.record_suffix for row in cells)
    widths = _widths(pf, cells)

    def fit(text: str, column: Column, width: int, left: bool) -> str:
        if column.truncate and len(text) > width:
            text = text[:width]
        return text.ljust(width) if left else text.rjust(width)

    lines = []
    if pf.header and pf.columns:
        lines.append(_join(pf, [column.heading.ljust(w) for column, (w, _) in zip(pf.columns, widths,
                                                                                 strict=True)]).rstrip() + "\n")
    for row in cells:
        fields = [fit(_text(column, cell, w), column, w, left)
                  for column, cell, (w, left) in zip(pf.columns, row, widths, strict=True)]
        record = pf.record_prefix + _join(pf, fields)
        lines.append((record.rstrip(" ") if pf.record_suffix.endswith("\n") else record) + pf.record_suffix)
    return "".join(lines)


__all__ = ["format_rows", "select"]
