"""The whole output of condor_q and condor_status with ``-print-format FILE`` (``-pr FILE``).

condor_q: the source line (``-- Schedd: …``, the tool's title) unless ``NOTITLE``, the
heading and records (``printformat_render``), then the standard totals (``Total for query``,
``Total for all users``) after a blank line unless ``SUMMARY NONE``, ``NOSUMMARY`` or ``BARE``;
with ``SELECT FROM AUTOCLUSTER`` or ``SELECT UNIQUE`` the rows are groups of jobs
(``printformat_groups``) and there are no job totals (condor_status refuses those query types,
which the manual gives to condor_q only).
condor_status: the heading, a blank line (as its built-in views print), the records, then its
standard summary table after a blank line on the same terms. A file that cannot be read or parsed is reported with its name and line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from htcpool.classad import ClassAd
from htcpool.cli.formats.printformat import (
    PrintFormat,
    PrintFormatError,
    QueryType,
    parse_print_format,
)
from htcpool.cli.formats.printformat_groups import query_rows
from htcpool.cli.formats.printformat_render import format_rows, select
from htcpool.cli.formats.queue import totals_line
from htcpool.cli.formats.status import totals_table


def load_print_format(path: str) -> PrintFormat:
    """The parsed file; PrintFormatError naming the file (and line) when it cannot be used."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise PrintFormatError(f"cannot read print format file {path}: {e.strerror or e}") from None
    return parse_print_format(text, source=path)


def queue_output(pf: PrintFormat, jobs: Sequence[ClassAd], all_jobs: Sequence[ClassAd], *, title: str,
                 now: int, zone: int) -> str:
    """condor_q's output; ``title`` is its source line (``-- Schedd: NAME : ADDRESS @ TIME``)."""
    rows = select(pf, jobs, now)
    if pf.query is not QueryType.ADS:  # the jobs chosen by WHERE, grouped (printformat_groups)
        rows = select(pf, query_rows(pf, rows, now), now, where=False)
    out = [f"\n\n{title}\n" if pf.title else "", format_rows(pf, rows, now=now, zone=zone)]
    if pf.summary is not False and pf.query is QueryType.ADS:
        out.append("\n" + totals_line("query", rows) + " \n" + totals_line("all users", all_jobs) + "\n\n")
    return "".join(out)


def status_output(pf: PrintFormat, ads: Sequence[ClassAd], *, now: int, zone: int) -> str:
    """condor_status's output (no title line: condor_status prints none)."""
    rows = select(pf, ads, now)
    out = format_rows(pf, rows, now=now, zone=zone)
    if pf.header and pf.columns and not pf.labels:
        heading, _, records = out.partition("\n")
        out = heading + "\n\n" + records
    if pf.summary is not False and rows:
        out += "\n" + totals_table(rows)
    return out


__all__ = ["load_print_format", "queue_output", "status_output"]
