"""condor_status's slot tables and the summary of slots by platform and state.

``format_status`` prints, for view ``default`` (also used for ``-avail`` and
the other selections, which only change which slots the caller passes):

    Name   OpSys   Arch   State   Activity LoadAv Mem     ActvtyTime
    (blank)
    one row per slot, in the order given
    (blank)
    the totals table

Columns (HTCondor 25's default print format): Name left-aligned in 34 (longer
names overflow), OpSys in 10, Arch in 8, State as wide as the longest state,
Activity in 8, LoadAv ``%.3f`` of CondorLoadAvg (the load HTCondor's own jobs
put on the slot, not LoadAvg) right-aligned in 6, Mem right-aligned in 6 under
a left-aligned heading, and ActvtyTime: the time since EnteredCurrentActivity
as ``days+hh:mm:ss``, right-aligned in 12 with no separating space. The clock
for ActvtyTime is the ad's own MyCurrentTime (then LastHeardFrom, then ``now``),
which is what makes condor_status agree with itself.

View ``run`` prints Name, OpSys, Arch, LoadAv, RemoteUser (20) and
ClientMachine (16) with condor_status's run totals; view ``total`` prints only
the totals table; views ``state``, ``server``, ``gpus`` and ``compact`` take their columns
from ``status_views`` with the same totals. Nothing at all is printed when there are no slots (the
``condor_status_run`` golden is an empty file).

The totals table counts slots per ``Arch/OpSys`` key, keys right-aligned in 14
columns (more when a key is longer):

                   Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle
    (blank)
      X86_64/LINUX     4     0       3         1       0          0      0        0      0
    (blank)
             Total     4     0       3         1       0          0      0        0      0

A slot whose State is not one HTCondor knows is left out of the counts and
reported in an ``(Omitted N malformed ads ...)`` line, as HTCondor does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from htcpool.classad import ClassAd
from htcpool.cli.formats.fields import (
    Column,
    fit_line,
    format_duration,
    lookup_float,
    lookup_int,
    lookup_str,
    render_headings,
    render_row,
)

VIEWS = ("default", "available", "run", "total", "state", "server", "gpus", "compact")

STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill")
_NORMAL_HEADINGS = ("Total", "Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drain",
                    "Backfill", "BkIdle")  # fmt: skip
_NORMAL_WIDTHS = (6, 5, 7, 9, 7, 10, 6, 8, 6)
_KEY_WIDTH = 14


# ---------------------------------------------------------------- cells


def load_average(slot: ClassAd) -> str:
    load = lookup_float(slot, "CondorLoadAvg")
    return "??" if load is None else "%.3f" % load


def activity_time(slot: ClassAd, now: int) -> str:
    entered = lookup_int(slot, "EnteredCurrentActivity")
    if entered is None:
        return "-"
    clock = lookup_int(slot, "MyCurrentTime")
    if clock is None:
        clock = lookup_int(slot, "LastHeardFrom")
    if clock is None:
        clock = now
    return format_duration(clock - entered)


def _text(slot: ClassAd, attr: str) -> str:
    value = lookup_str(slot, attr)
    return "??" if value is None else value


def _memory(slot: ClassAd) -> str:
    memory = lookup_int(slot, "Memory")
    return "??" if memory is None else str(memory)


# ---------------------------------------------------------------- tables


def _default_table(slots: Sequence[ClassAd], now: int) -> list[str]:
    state_width = max([len("State")] + [len(_text(s, "State")) for s in slots])
    columns = [
        Column("Name", -34),
        Column("OpSys", -10),
        Column("Arch", -8),
        Column("State", -state_width),
        Column("Activity", -8),
        Column("LoadAv", 6),
        Column("Mem", 6),
        Column("  ActvtyTime", 12, prefix=""),
    ]
    rows = [
        [
            _text(s, "Name"),
            _text(s, "OpSys"),
            _text(s, "Arch"),
            _text(s, "State"),
            _text(s, "Activity"),
            load_average(s),
            _memory(s),
            activity_time(s, now),
        ]
        for s in slots
    ]
    return [render_headings(columns)] + [render_row(columns, r) for r in rows]


def _run_table(slots: Sequence[ClassAd]) -> list[str]:
    columns = [
        Column("Name", -34),
        Column("OpSys", -10),
        Column("Arch", -8),
        Column("LoadAv", 6),
        Column("RemoteUser", -20),
        Column("ClientMachine", -16),
    ]
    rows = [
        [
            _text(s, "Name"),
            _text(s, "OpSys"),
            _text(s, "Arch"),
            load_average(s),
            _text(s, "RemoteUser"),
            _text(s, "ClientMachine"),
        ]
        for s in slots
    ]
    return [render_headings(columns)] + [render_row(columns, r) for r in rows]


# ---------------------------------------------------------------- totals


def platform_key(slot: ClassAd) -> str | None:
    arch, opsys = lookup_str(slot, "Arch"), lookup_str(slot, "OpSys")
    if arch is None or opsys is None:
        return None
    return f"{arch}/{opsys}"


def _state_counts(slots: Sequence[ClassAd]) -> tuple[list[int], int]:
    """[total, owner, claimed, unclaimed, matched, preempting, drain, backfill, bkidle], and
    how many slots had no known State."""
    counts = [0] * 9
    bad = 0
    column = {"Owner": 1, "Claimed": 2, "Unclaimed": 3, "Matched": 4, "Preempting": 5,
              "Drained": 6, "Backfill": 7}  # fmt: skip
    for slot in slots:
        where = column.get(lookup_str(slot, "State") or "")
        if where is None:
            bad += 1
            continue
        counts[where] += 1
        counts[0] += 1
    return counts, bad


def _normal_line(counts: list[int]) -> str:
    return " ".join("%*d" % (w, n) for w, n in zip(_NORMAL_WIDTHS, counts, strict=True))


def _run_line(slots: Sequence[ClassAd]) -> tuple[str, int]:
    mips = sum(lookup_int(s, "Mips") or 0 for s in slots)
    kflops = sum(lookup_int(s, "KFlops") or 0 for s in slots)
    loads = [lookup_float(s, "LoadAvg") for s in slots]
    bad = sum(
        1
        for s, load in zip(slots, loads, strict=True)
        if lookup_int(s, "Mips") is None or lookup_int(s, "KFlops") is None or load is None
    )
    average = sum(x or 0.0 for x in loads) / len(slots) if slots else 0.0
    return "%9d  %11d  %11d   %-.3f" % (len(slots), mips, kflops, average), bad


def totals_table(slots: Sequence[ClassAd], view: str = "default") -> str:
    """The summary condor_status prints under its table (and alone for ``-total``)."""
    groups: dict[str, list[ClassAd]] = {}
    malformed = 0
    for slot in slots:
        key = platform_key(slot)
        if key is None:
            malformed += 1
        else:
            groups.setdefault(key, []).append(slot)
    width = max([_KEY_WIDTH] + [len(k) for k in groups])
    line: Callable[[Sequence[ClassAd]], tuple[str, int]]
    if view == "run":
        header = "%9.9s  %11.11s  %11.11s  %11.11s" % ("Machines", "MIPS", "KFLOPS", "AvgLoadAvg")
        line = _run_line
    else:
        header = " ".join(
            "%*.*s" % (w, w, h) for w, h in zip(_NORMAL_WIDTHS, _NORMAL_HEADINGS, strict=True)
        )

        def line(group: Sequence[ClassAd]) -> tuple[str, int]:
            counts, bad = _state_counts(group)
            return _normal_line(counts), bad

    out = [" " * width + header + "\n", "\n"]
    for key in sorted(groups):
        text, bad = line(groups[key])
        malformed += bad
        out.append("%*.*s%s\n" % (width, width, key, text))
    if groups:
        out.append("\n")
    everything = [s for g in groups.values() for s in g]
    out.append("%*.*s%s\n" % (width, width, "Total", line(everything)[0]))
    if malformed:
        out.append(
            "\n%*.*s(Omitted %d malformed ads in computed attribute totals)\n\n"
            % (width, width, "", malformed)
        )
    return "".join(out)


def format_status(
    slots: Sequence[ClassAd],
    *,
    view: str = "default",
    now: int,
    zone: int = 0,
    width: int | None = None,
) -> str:
    """condor_status's output for ``slots`` (already selected and ordered by the caller).

    ``zone`` is accepted for symmetry with the other formatters; no column of
    these views shows a time of day. ``width`` is the console width (None for
    a pipe or file): rows are then cut to ``width - 1`` characters.
    """
    del zone  # no clock-time column in these views
    if view not in VIEWS:
        raise ValueError(f"unknown condor_status view {view!r}; expected one of {', '.join(VIEWS)}")
    if not slots:
        return ""
    if view == "total":
        return "\n" + totals_table(slots)
    if view in ("state", "server", "gpus", "compact"):
        from htcpool.cli.formats import status_views as views

        columns, rows = (views.state_view(slots, now) if view == "state" else views.server_view(slots)
                         if view == "server" else views.gpus_view(slots) if view == "gpus"
                         else views.compact_view(slots))
        table = [render_headings(columns)] + [render_row(columns, r) for r in rows]
    else:
        table = _run_table(slots) if view == "run" else _default_table(slots, now)
    lines = [fit_line(table[0], width), ""] + [fit_line(row, width) for row in table[1:]]
    return "\n".join(lines) + "\n\n" + totals_table(slots, view)
