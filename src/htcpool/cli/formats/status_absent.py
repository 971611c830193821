"""``condor_status -absent`` and ``-offline``: HTCondor's views of gone and offline machines.

``-absent`` lists the Machine ads the collector keeps after their startd stopped advertising
(``ABSENT_REQUIREMENTS``; docs/pool.md): Name (fitted to the longest), OpSys (10), Arch (8),
``Went Absent`` (``LastHeardFrom``) and ``Will Forget`` (``LastHeardFrom + ClassAdLifetime``),
both as the manual's ``DATE`` and ``DUE_DATE`` print them (``MM/DD hh:mm``), an attribute an ad
lacks printing ``??``. ``-offline`` lists machines with offline universes: Name and ``Offline Universes`` (the
``OfflineUniverses`` list, comma-separated). Both print the headings, a blank line, the rows,
then condor_status's standard summary, as HTCondor's built-in print formats for these views
do; no ads print nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    fit_line,
    format_short_date,
    lookup_int,
    lookup_str,
)
from htcpool.cli.formats.status import totals_table


def _table(ads: Sequence[ClassAd], headings: Sequence[str], rows: list[list[str]], widths: list[int],
           width: int | None) -> str:
    def line(cells: Sequence[str]) -> str:
        return fit_line(" ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)), width)

    lines = [line(headings), "", *(line(row) for row in rows)]
    return "\n".join(lines) + "\n\n" + totals_table(ads)


def _name_width(ads: Sequence[ClassAd]) -> int:
    return max([len("Name"), *(len(lookup_str(ad, "Name") or "??") for ad in ads)])


def format_absent(ads: Sequence[ClassAd], *, zone: int, width: int | None = None) -> str:
    if not ads:
        return ""
    rows = []
    for ad in ads:
        heard = lookup_int(ad, "LastHeardFrom")
        lifetime = lookup_int(ad, "ClassAdLifetime")
        forget = "??"
        if heard is not None and lifetime is not None:
            forget = format_short_date(heard + lifetime, zone)
        rows.append([lookup_str(ad, "Name") or "??", lookup_str(ad, "OpSys") or "??",
                     lookup_str(ad, "Arch") or "??",
                     format_short_date(heard, zone) if heard is not None else "??", forget])
    return _table(ads, ["Name", "OpSys", "Arch", "Went Absent", "Will Forget"], rows,
                  [_name_width(ads), 10, 8, 11, 11], width)


def _universes(ad: ClassAd) -> str:
    value = ad.get("OfflineUniverses")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return value if isinstance(value, str) and value else "  "


def format_offline(ads: Sequence[ClassAd], *, width: int | None = None) -> str:
    if not ads:
        return ""
    rows = [[lookup_str(ad, "Name") or "??", _universes(ad)] for ad in ads]
    return _table(ads, ["Name", "Offline Universes"], rows, [_name_width(ads), 42], width)


__all__ = ["format_absent", "format_offline"]
