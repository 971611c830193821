"""The text of the collector's persistent ad log (``COLLECTOR_PERSISTENT_AD_LOG``).

HTCondor's collector writes the ads of absent machines to this file so that they outlive a
restart (the admin manual, "Absent ClassAds"). Here the file is a snapshot, rewritten whole
whenever the set of absent ads changes; this module turns ads into its text and back, the
runtime reads and writes the file.

The form: a first line ``# htcpool absent ads``; then one block per ad, a line ``[`` opening it,
one ``Attr = expression`` line per attribute (the expression in the new ClassAd syntax, so a
string with a line break stays on one line), and a line ``]`` closing it. Blank lines and
lines starting with ``#`` are ignored. ``parse_absent_log`` raises ``AbsentLogError`` naming the
file, the line and what was expected there; an ad without ``MyType`` or ``Name`` is refused
the same way, since the store could not file it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from htcpool.classad import ClassAd, ClassAdError, ExprTree
from htcpool.classad.unparse import unparse
from htcpool.collector.errors import CollectorError

HEADER = "# htcpool absent ads"
_ASSIGN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*\S)\s*$")


class AbsentLogError(CollectorError):
    """A persistent ad log that does not read back; the message names the file and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        self.source = source
        self.line = line
        super().__init__(f"{source}, line {line}: {problem}")


def format_absent_log(ads: Iterable[ClassAd]) -> str:
    """The file's text for ``ads``."""
    out = [HEADER]
    for ad in ads:
        out.append("[")
        out.extend(f"{name} = {unparse(ad.lookup(name).node)}" for name in ad.keys())
        out.append("]")
    return "\n".join(out) + "\n"


def parse_absent_log(text: str, source: str) -> list[ClassAd]:
    """The ads in ``text`` (read from ``source``, named in errors)."""
    ads: list[ClassAd] = []
    current: ClassAd | None = None
    opened = 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped == "[":
            if current is not None:
                raise AbsentLogError(source, number, f"'[' inside the ad opened on line {opened}; expected ']'")
            current, opened = ClassAd(), number
        elif stripped == "]":
            if current is None:
                raise AbsentLogError(source, number, "']' without an ad opened by '['")
            _check_key(current, source, opened)
            ads.append(current)
            current = None
        elif current is None:
            raise AbsentLogError(source, number, f"expected '[' to open an ad, found {stripped[:60]!r}")
        else:
            _assign(current, stripped, source, number)
    if current is not None:
        raise AbsentLogError(source, opened, "the ad opened here has no closing ']' (the file ends first)")
    return ads


def _assign(ad: ClassAd, line: str, source: str, number: int) -> None:
    match = _ASSIGN.match(line)
    if match is None:
        raise AbsentLogError(source, number, f"expected 'Attr = expression', found {line[:60]!r}")
    try:
        ad[match.group(1)] = ExprTree(match.group(2))
    except ClassAdError as e:
        raise AbsentLogError(source, number, f"the value of {match.group(1)} is not a ClassAd expression: {e}") \
            from None


def _check_key(ad: ClassAd, source: str, opened: int) -> None:
    for attr in ("MyType", "Name"):
        if not isinstance(ad.get(attr), str):
            raise AbsentLogError(source, opened, f"the ad opened here has no {attr} string")


__all__ = ["HEADER", "AbsentLogError", "format_absent_log", "parse_absent_log"]
