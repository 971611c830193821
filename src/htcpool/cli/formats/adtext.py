"""Whole ads and chosen attributes as text: ``-long``, ``-json`` and ``-af``.

These forms are shared by condor_q, condor_status and condor_history (which
has no ``-json``). Each formatter prints the ads in the order it is given them.

* ``format_long``: each ad in the old ClassAd form, one ``Name = expression``
  line per attribute, attributes sorted by name ignoring case (HTCondor sorts
  the names through a case-insensitive set before printing), and a blank line
  after every ad. ``attributes``, when given, keeps only those names (matched
  ignoring case), as ``-attributes`` does.
* ``format_json``: HTCondor's ``-json``: ``[``, then the ads separated by a line
  holding a single ``,``, then ``]``. Each ad is a JSON object in the ClassAd
  JSON encoding (``htcpool.classad.json_form``) with its attributes sorted the
  same way as ``-long``; nested ads keep the library's own order. No ads, no
  output at all.
* ``format_autoformat``: ``-af A B C``: each argument is an expression
  evaluated in the ad; the values of one ad go on one line, separated by
  single spaces. Strings print bare, ``undefined`` and ``error`` as those
  words, every other value in its old-ClassAd text (``0.0``, ``true``,
  ``{ 1,2 }``). The caller says what time it is (``now``), so ``time()``
  answers the tool's clock and the formatter reads none itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError
from htcpool.classad.json_form import print_json
from htcpool.classad.unparse import unparse_old
from htcpool.classad.values import ERROR


def sorted_names(ad: ClassAd) -> list[str]:
    """The attribute names of ``ad`` in HTCondor's printing order: by name, ignoring case."""
    return sorted(ad, key=str.lower)


def format_long(ads: Iterable[ClassAd], attributes: Iterable[str] | None = None) -> str:
    """The ads in ``-long`` form (old ClassAd lines, a blank line after each ad)."""
    wanted = None if attributes is None else {name.lower() for name in attributes}
    out: list[str] = []
    for ad in ads:
        for name in sorted_names(ad):
            if wanted is None or name.lower() in wanted:
                out.append(f"{name} = {unparse_old(ad.lookup(name).node)}\n")
        out.append("\n")
    return "".join(out)


def _json_member(ad: ClassAd, name: str) -> str:
    # The library prints a one-attribute ad as '{\n  "Name": value\n}'; the member line is
    # its middle, already indented for the top level of an object.
    single = ClassAd()
    single.insert_node(name, ad.lookup(name).node)
    return print_json(single)[2:-2]


def _json_object(ad: ClassAd) -> str:
    members = [_json_member(ad, name) for name in sorted_names(ad)]
    if not members:
        return "{\n}"
    return "{\n" + ",\n".join(members) + "\n}"


def format_json(ads: Iterable[ClassAd]) -> str:
    """The ads as HTCondor's ``-json`` prints them (empty text when there are none)."""
    objects = [_json_object(ad) for ad in ads]
    if not objects:
        return ""
    return "[\n" + "\n,\n".join(objects) + "\n]\n"


def autoformat_value(value: Any) -> str:
    """One ``-af`` cell: strings bare, everything else in old ClassAd text."""
    if type(value) is str:
        return value
    return unparse_old(value)


def _parse_attrs(attrs: Sequence[str]) -> list[ExprTree | None]:
    exprs: list[ExprTree | None] = []
    for text in attrs:
        try:
            exprs.append(ExprTree(text))
        except ClassAdError:
            exprs.append(None)
    return exprs


def format_autoformat(ads: Iterable[ClassAd], attrs: Sequence[str], *, now: float) -> str:
    """``-af attrs``: one line per ad, the values of ``attrs`` separated by spaces.

    ``now`` is the time the expressions see (``time()``, ``CurrentTime``): the tool's
    wall clock, read once for the whole listing."""
    exprs = _parse_attrs(attrs)
    context = EvalContext(clock=fixed_clock(now))
    lines: list[str] = []
    for ad in ads:
        cells: list[str] = []
        for expr in exprs:
            value: Any = ERROR
            if expr is not None:
                try:
                    value = expr.evaluate(ad, context=context)
                except ClassAdError:
                    value = ERROR
            cells.append(autoformat_value(value))
        lines.append(" ".join(cells) + "\n")
    return "".join(lines)
