"""``-format FMT ATTR`` and ``-af`` with qualifiers (``-af:jlh``, ``-af:lrng`` …), for
condor_q, condor_status and condor_history (HTCondor's man pages, "-format" and "-autoformat").

``format_printf(ads, items, now)``: for every ad, each ``(FMT, ATTR)`` in order, FMT with its
one ``printf``-style conversion filled from ATTR (an expression evaluated in the ad); nothing
is added between items or ads, so the user's ``\\n`` ends lines (``\\n``, ``\\t`` and ``\\\\`` in
FMT are the escapes HTCondor reads). Conversions:

* ``%s`` the value as ``-af`` prints it (strings bare); ``%v`` the same; ``%V`` as ``-long``
  prints it (strings quoted); ``%r`` the attribute's unevaluated expression;
* ``%d %i %u %o %x %X %c`` an integer (a real is truncated, a boolean is 0 or 1);
  ``%e %E %f %g %G`` a real; ``%T`` seconds as ``days+hh:mm:ss``; ``%Y`` epoch seconds as a
  local date and time;
* an item whose ATTR cannot be parsed is left out, as HTCondor silently skips it, and so is a
  numeric conversion of a value that is not a number (undefined, a string);
* flags, width and precision are ``printf``'s (``%-10s``, ``%5.2f``).

``format_autoformat_quals(ads, attrs, quals, now, ids)``: ``-af`` with qualifiers:
``j`` the job id (``ids``) first, ``l`` each field labelled ``ATTR = value``, ``h`` a heading
line and columns padded to their widest cell, ``V`` strings quoted, ``r`` raw expressions,
``T``/``Y`` as for ``-format``, ``,`` a comma after each field but the last, ``t`` a tab before
each field instead of a space, ``n`` a newline after each field, ``g`` a blank line between ads
and no space before fields. ``-af:lrng`` is thus the ``-long`` form of the chosen attributes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError
from htcpool.classad.unparse import unparse_old
from htcpool.classad.values import ERROR
from htcpool.cli.formats.adtext import autoformat_value
from htcpool.cli.formats.fields import format_duration, local_time

_SPEC = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([diouxXeEfgGcsvVrTY%])")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r"}
AF_QUALIFIERS = frozenset("jlhVrTY,tng")


def unescape(text: str) -> str:
    """``\\n``, ``\\t``, ``\\r`` and ``\\\\`` of a format string as the characters they stand for."""
    return re.sub(r"\\([nt\\r])", lambda m: _ESCAPES[m.group(1)], text)


def _number(value: Any) -> int | float | None:
    if type(value) is bool:
        return int(value)
    if type(value) in (int, float):
        return value
    return None


def _evaluate(expr: ExprTree, ad: ClassAd, context: EvalContext) -> Any:
    try:
        return expr.evaluate(ad, context=context)
    except ClassAdError:
        return ERROR


def _raw(ad: ClassAd, text: str, expr: ExprTree) -> str:
    return unparse_old(ad.lookup(text).node) if text in ad else unparse_old(expr.node)


def convert(spec: re.Match[str], value: Any, raw: str, zone: int) -> str | None:
    """One conversion of ``value``; None when it does not apply (the item is skipped)."""
    flags, width, precision, kind = spec.groups()
    if kind == "%":
        return "%"
    head = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
    if kind in "sv":
        return (head + "s") % autoformat_value(value)
    if kind == "V":
        return (head + "s") % unparse_old(value)
    if kind == "r":
        return (head + "s") % raw
    number = _number(value)
    if number is None:
        return None
    if kind == "T":
        return (head + "s") % format_duration(number)
    if kind == "Y":
        return (head + "s") % time.strftime("%Y-%m-%d %H:%M:%S", local_time(int(number), zone))
    if kind in "diouxXc":
        return (head + ("d" if kind in "iu" else kind)) % int(number)
    return (head + kind) % float(number)


def _compile(items: Sequence[tuple[str, str]]) -> list[tuple[str, str, ExprTree | None]]:
    out = []
    for fmt, attr in items:
        try:
            expr: ExprTree | None = ExprTree(attr)
        except ClassAdError:
            expr = None
        out.append((unescape(fmt), attr, expr))
    return out


def format_printf(ads: Iterable[ClassAd], items: Sequence[tuple[str, str]], *, now: float, zone: int = 0) -> str:
    """``-format FMT ATTR`` (repeated): the items of every ad, nothing added between them."""
    compiled = _compile(items)
    context = EvalContext(clock=fixed_clock(now))
    out: list[str] = []
    for ad in ads:
        for fmt, attr, expr in compiled:
            if expr is None:
                continue
            value = _evaluate(expr, ad, context)
            pieces, pos, skipped = [], 0, False
            for spec in _SPEC.finditer(fmt):
                pieces.append(fmt[pos:spec.start()])
                cell = convert(spec, value, _raw(ad, attr, expr), zone)
                if cell is None:
                    skipped = True
                    break
                pieces.append(cell)
                pos = spec.end()
            if not skipped:
                pieces.append(fmt[pos:])
                out.append("".join(pieces))
    return "".join(out)


def _cell(quals: str, value: Any, raw: str, zone: int) -> str:
    if "r" in quals:
        return raw
    if "T" in quals or "Y" in quals:
        number = _number(value)
        if number is not None:
            if "T" in quals:
                return format_duration(number)
            return time.strftime("%Y-%m-%d %H:%M:%S", local_time(int(number), zone))
    return unparse_old(value) if "V" in quals else autoformat_value(value)


def format_autoformat_quals(ads: Sequence[ClassAd], attrs: Sequence[str], quals: str, *, now: float,
                            ids: Callable[[ClassAd], str] | None = None, zone: int = 0) -> str:
    """``-af:QUALS attrs`` (see the module docstring); ``ids`` gives ``j``'s first field."""
    bad = set(quals) - AF_QUALIFIERS
    if bad:
        raise ValueError(f"-af: unknown qualifier {''.join(sorted(bad))!r} (expected some of jlhVrTY,tng)")
    compiled = []
    for text in attrs:
        try:
            compiled.append((text, ExprTree(text)))
        except ClassAdError:
            compiled.append((text, ExprTree("error")))
    context = EvalContext(clock=fixed_clock(now))
    labels = (["ID"] if "j" in quals and ids else []) + list(attrs)
    rows = []
    for ad in ads:
        cells = [ids(ad)] if "j" in quals and ids else []
        cells += [_cell(quals, _evaluate(expr, ad, context), _raw(ad, text, expr), zone) for text, expr in compiled]
        rows.append(cells)
    widths = [max([len(label)] + [len(r[i]) for r in rows]) for i, label in enumerate(labels)] if "h" in quals else None
    before = "\t" if "t" in quals else "" if "g" in quals else " "
    after = "\n" if "n" in quals else ""

    def line(cells: list[str], headings: bool = False) -> str:
        parts = []
        for i, cell in enumerate(cells):
            text = f"{labels[i]} = {cell}" if "l" in quals and not headings else cell
            if widths is not None and i < len(cells) - 1:
                text = text.ljust(widths[i])
            if "," in quals and i < len(cells) - 1:
                text += ","
            parts.append((before if i else "") + text + after)
        end = "" if "n" in quals else "\n"
        return ("".join(parts).rstrip(" ") if widths is not None else "".join(parts)) + end

    out = [line(labels, headings=True)] if widths is not None else []
    for cells in rows:
        out.append(line(cells) + ("\n" if "g" in quals else ""))
    return "".join(out)
