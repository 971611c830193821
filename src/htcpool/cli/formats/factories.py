"""``condor_q -factory``: one line per late-materialization factory (its cluster ad).

The columns are those of HTCondor's built-in factory print format: the cluster id (``%4d.``,
then the proc column left blank, cluster ads having no ProcId), the owner, the submit date,
``JobMaterializeLimit`` (LIMIT), the factory's jobs in the queue (PRESNT) and how many of them
run, are idle and are held, ``JobMaterializeNextProcId`` (NEXTID), the mode (``Norm``
running, ``Held`` paused by condor_hold or a proc that cannot be built, ``Done`` all made,
``Gone`` removed, ``Errs`` invalid) and ``JobMaterializeDigestFile``, the file HTCondor keeps
the recipe in. htcpool keeps a factory's recipe in the schedd's queue store, so that last
column is blank unless an ad names such a file. A missing number leaves its cell blank. The schedd line comes first, as in
the other views; there is no summary line.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    format_short_date,
    format_stamp,
    lookup_int,
    lookup_str,
    summarize_address,
)

_MODES = {-1: "Errs", 0: "Norm", 1: "Held", 2: "Done", 3: "Gone"}
_COUNTS = (("JobMaterializeLimit", " LIMIT"), ("JobsPresent", "PRESNT"), ("JobsRunning", "  RUN "),
           ("JobsIdle", "  IDLE"), ("JobsHeld", "  HOLD"), ("JobMaterializeNextProcId", "NEXTID"))


def factory_mode(ad: ClassAd) -> str:
    """``JobMaterializePaused``, else ``JobFactoryPaused``, as a word; empty when neither is set."""
    mode = lookup_int(ad, "JobMaterializePaused")
    if mode is None:
        mode = lookup_int(ad, "JobFactoryPaused")
    if mode is None:
        return ""
    return _MODES.get(mode, "Unk")


def _row(ad: ClassAd, zone: int) -> list[str]:
    cluster = lookup_int(ad, "ClusterId")
    qdate = lookup_int(ad, "QDate")
    cells = [(f"{cluster:4d}." if cluster is not None else " " * 5) + " " * 3,
             f"{lookup_str(ad, 'Owner') or '??':<14}",
             format_short_date(qdate, zone) if qdate is not None else " " * 11]
    for attr, _ in _COUNTS:
        value = lookup_int(ad, attr)
        cells.append(f"{value:6d}" if value is not None else " " * 6)
    cells.append(factory_mode(ad))
    cells.append(lookup_str(ad, "JobMaterializeDigestFile") or "")
    return cells


def format_factories(clusters: Sequence[ClassAd], *, schedd_name: str, schedd_address: str,
                     now: int, zone: int) -> str:
    """The schedd line, the headings and one line per factory, by cluster id."""
    ordered = sorted(clusters, key=lambda ad: lookup_int(ad, "ClusterId") or 0)
    rows = [_row(ad, zone) for ad in ordered]
    mode_width = max([4, *(len(row[-2]) for row in rows)])
    heading = [" ID" + " " * 5, f"{'OWNER':<14}", "  SUBMITTED", *(title for _, title in _COUNTS),
               f"{'MODE':<{mode_width}}", "DIGEST"]
    lines = [" ".join(heading)]
    for row in rows:
        row[-2] = f"{row[-2]:<{mode_width}}"
        lines.append(" ".join(row).rstrip())
    banner = "\n\n-- Schedd: %s : %s @ %s\n" % (schedd_name, summarize_address(schedd_address),
                                                format_stamp(now, zone))
    return banner + "".join(line + "\n" for line in lines)


__all__ = ["factory_mode", "format_factories"]
