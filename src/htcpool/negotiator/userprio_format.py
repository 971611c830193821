"""``condor_userprio``'s text: its table, ``-getreslist`` and the ``-long`` form; pure, no I/O.

``format_userprio(ads, now=…, view=UserprioView(…))`` returns what HTCondor 25's tool prints for the
accounting ads a negotiator answers (``userprio.accounting_ads``); which rows and columns it shows
is settled by ``userprio_rows.collect``. The layout (``user_prio.cpp``):

* The columns are one table (``COLUMNS``) of (detail, width, two heading lines), in a fixed order;
  a view shows those of its details. A row without a column's data prints blanks, or ``n/d`` for a
  group's quota and sort-key columns.
* Groups are shown above their users, who appear without the group prefix and indented by two
  (the hierarchical layout), unless no shown user is in a group or ``-flat``/``-grouporder`` asked
  otherwise. A flat table leaves ``<none>`` out until some other group has been printed.
* Numbers are right-aligned ``%W.Df`` (``%.(W-6)g`` when too wide); text is left-aligned; headings
  are centred with the extra space on the right. Every column is preceded by one space, and a row
  is always full width, trailing blanks included.
* Dates are ``MM/DD HH:MM`` (last update) or ``MM/DD/YYYY HH:MM`` in the time zone given; a time
  since is ``D+HH:MM``, ``<now>`` when not positive, and blank for a record never used (HTCondor
  prints the time since 1970 there and cuts it to the column; no cell is cut here).
* The footer counts the users shown, sums their use and usage, and names the pool's surplus
  policy (the last group's that regroups or shares by quota). With no records at all the table
  is its headings and footer.
* ``format_reslist`` is ``-getreslist``: the slots a submitter holds, with when each was claimed
  and for how long (``%-30s %12s %12s`` rows), then ``Number of Resources Used: N``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from htcpool.negotiator.userprio_rows import (
    LAST_SORT_KEY,
    NEVER,
    OPTION_DETAILS,
    QUOTAS,
    Detail,
    Row,
    Table,
    UserprioView,
    collect,
)

__all__ = ["COLUMNS", "UserprioView", "format_reslist", "format_userprio", "number", "time_since", "view_of"]


@dataclass(frozen=True)
class Column:
    detail: Detail
    width: int
    heading: tuple[str, str]


COLUMNS = (
    Column(Detail.GROUP_ID, 5, ("Group", "Id")),
    Column(Detail.ORDER, 9, ("Group", "Order")),
    Column(Detail.SORT_KEY, 9, ("Group", "Sort Key")),
    Column(Detail.EFF_QUOTA, 9, ("Effective", "Quota")),
    Column(Detail.CFG_QUOTA, 9, ("Config", "Quota")),
    Column(Detail.SURPLUS, 7, ("Use", "Surplus")),
    Column(Detail.TREE_QUOTA, 9, ("Subtree", "Quota")),
    Column(Detail.PRIORITY, 12, ("Effective", "Priority")),
    Column(Detail.REAL_PRIO, 8, ("Real", "Priority")),
    Column(Detail.FACTOR, 9, ("Priority", "Factor")),
    Column(Detail.IN_USE, 6, ("Wghted", "In Use")),
    Column(Detail.USAGE, 12, ("Total Usage", "(wghted-hrs)")),
    Column(Detail.BEGIN, 16, ("Usage", "Start Time")),
    Column(Detail.LAST, 16, ("Last", "Usage Time")),
    Column(Detail.SINCE, 10, ("Time Since", "Last Usage")),
    Column(Detail.REQUESTED, 10, ("Weighted", "Requested")),
    Column(Detail.FLOOR, 9, ("Submitter", "Floor")),
    Column(Detail.CEILING, 9, ("Submitter", "Ceiling")),
)
MAX_NAME_WIDTH = 99


def view_of(name: str, **kw: Any) -> UserprioView:
    """The view of one display option (``most``, ``all``, ``quotas``, ``usage`` …)."""
    return UserprioView(details=OPTION_DETAILS[name], dash_quota=name in ("quotas", "surplus"), **kw)


def number(value: float, width: int, decimals: int) -> str:
    text = f"{value:{width}.{decimals}f}"
    if len(text) > width:
        text = f"{value:.{width - 6}g}"
    return text.rjust(width)


def text_cell(text: str, width: int, right: bool = False) -> str:
    return text.rjust(width) if right else text.ljust(width)


def centred(text: str, width: int) -> str:
    return (" " * max(0, (width - len(text)) // 2) + text).ljust(width)


def time_since(seconds: float) -> str:
    if seconds <= 0:
        return "<now>"
    minutes = int(seconds) // 60
    return f"{minutes // 1440}+{minutes // 60 % 24:02d}:{minutes % 60:02d}"


@dataclass(frozen=True)
class _Layout:
    """What every line of one table shares: its columns, the name column's width, the clock."""

    columns: list[Column]
    name_width: int
    tz: dt.tzinfo
    tm_last: float  # the accountant's last update

    def line(self, first: str, cells: list[str]) -> str:
        return text_cell(first, self.name_width) + "".join(" " + c for c in cells)

    def stamp(self, t: float, fmt: str) -> str:
        return dt.datetime.fromtimestamp(t, self.tz).strftime(fmt)

    def rule(self) -> str:
        return "-" * self.name_width + "".join(" " + "-" * c.width for c in self.columns)


def format_userprio(ads: Sequence[Mapping[str, Any]], *, now: float, view: UserprioView | str = "most",
                    active_window: float | None = 86400.0, tz: dt.tzinfo = dt.UTC,
                    last_update: float | None = None) -> str:
    """The table ``condor_userprio`` prints for ``ads`` (a view or a display option's name;
    ``active_window`` None is ``-allusers`` when a name is given)."""
    if isinstance(view, str):
        view = view_of(view, min_last=now - active_window if active_window is not None else NEVER)
    table = collect(ads, view, now)
    tm_last = float(ads[0].get("LastUpdate", 0)) if ads else (last_update if last_update is not None else now)
    shown = [r for r in table.rows if r.last_usage >= table.min_last]
    layout = _Layout([c for c in COLUMNS if c.detail & table.details], _name_width(shown, table), tz, int(tm_last))
    hier = table.hierarchical
    out = [f"Last Priority Update: {layout.stamp(layout.tm_last, '%m/%d %H:%M')}"]
    out.append(layout.line("Group" if hier else "", [centred(c.heading[0], c.width) for c in layout.columns]))
    second = ("Name" if hier else "Group Name") if table.hide_users else ("  User Name" if hier else "User Name")
    out.append(layout.line(second, [centred(c.heading[1], c.width) for c in layout.columns]))
    out.append(layout.rule())
    users, total_in_use, total_usage = _body(layout, table, out)
    out.append(layout.rule())
    out.append(layout.line(f"Number of users: {users}", _footer(layout, table, total_in_use, total_usage)))
    return "\n".join(out) + "\n"


def _name_width(shown: list[Row], table: Table) -> int:
    """Wide enough for the names shown and for the footer's count of every record."""
    name_width = 10
    for r in shown:
        n = len(r.name)
        if table.hierarchical and not r.is_group:
            n += 2 - (len(r.group) if r.group_id else 0)
        name_width = max(name_width, n)
    name_width = max(min(name_width, MAX_NAME_WIDTH), len(f"Number of users: {table.count}"))
    return name_width + (2 if table.hierarchical else 0)


def _body(layout: _Layout, table: Table, out: list[str]) -> tuple[int, float, float]:
    """Append the rows shown to ``out``; returns the users counted and their total use and usage."""
    users = 0
    total_in_use = total_usage = 0.0
    hide_none = table.hide_none_group
    for r in table.rows:
        if r.last_usage < table.min_last:
            continue
        if not r.is_group:
            users += 1
            if table.hide_users:
                continue
        else:
            if table.hide_groups or (not table.hierarchical and hide_none and not r.group_id):
                continue
            hide_none = False  # once a group is shown, <none> is shown too
        name = r.name
        if table.hierarchical and not r.is_group:
            name = "  " + (name[len(r.group) + 1:] if r.group_id else name)
        out.append(layout.line(name, [_cell(r, c, layout) for c in layout.columns]))
        if not r.is_group:
            total_in_use += r.number("WeightedResourcesUsed", r.number("ResourcesUsed"))
            total_usage += r.number("WeightedAccumulatedUsage", -1.0)
    return users, total_in_use, total_usage


def _footer(layout: _Layout, table: Table, total_in_use: float, total_usage: float) -> list[str]:
    footer: list[str] = []
    min_last = table.min_last
    for c in layout.columns:
        d, w = c.detail, c.width
        if d is Detail.SURPLUS:
            footer.append(text_cell(table.surplus.value, w))
        elif d is Detail.IN_USE:
            footer.append(number(total_in_use, w, 0))
        elif d is Detail.USAGE:
            footer.append(number(total_usage / 3600.0, w, 2))
        elif d is Detail.LAST:
            footer.append(text_cell(layout.stamp(min_last, "%m/%d/%Y %H:%M") if min_last > 0 else "", w, True))
        elif d is Detail.SINCE:
            footer.append(text_cell(time_since(layout.tm_last - min_last) if min_last > 0 else "", w, True))
        else:
            footer.append(" " * w)
    return footer


def _cell(r: Row, c: Column, layout: _Layout) -> str:
    d, w = c.detail, c.width
    if not r.has & d:
        return text_cell("n/d", w, True) if r.is_group and d & (QUOTAS | Detail.SORT_KEY) else " " * w
    if d is Detail.GROUP_ID:
        return number(float(r.group_id), w, 0)
    if d is Detail.ORDER:
        return number(r.display_order, w, 2)
    if d is Detail.SORT_KEY:
        key = r.number("GroupSortKey")
        return number(key, w, 2) if key < LAST_SORT_KEY else text_cell("<last>", w, True)
    if d is Detail.SURPLUS:
        return text_cell(r.surplus.value if r.group_id else "yes", w)
    if d is Detail.REAL_PRIO:
        factor = r.number("PriorityFactor")
        return number(r.number("Priority") / factor if factor > 0 else 0.0, w, 2)
    if d is Detail.FACTOR:
        factor = r.number("PriorityFactor")
        return number(factor, w, 2) if factor > 0 else " " * w
    if d is Detail.IN_USE:
        return number(r.number("WeightedResourcesUsed", r.number("ResourcesUsed")), w, 0)
    if d is Detail.REQUESTED:
        return number(r.number("Requested"), w, 0)
    if d is Detail.USAGE:
        return number(r.number("WeightedAccumulatedUsage", -1.0) / 3600.0, w, 2)
    if d in (Detail.BEGIN, Detail.LAST):
        t = r.number("BeginUsageTime" if d is Detail.BEGIN else "LastUsageTime")
        return text_cell(layout.stamp(t, "%m/%d/%Y %H:%M") if t > 0 else "", w, True)
    if d is Detail.SINCE:
        if r.last_usage <= 0:
            return " " * w  # never used: no time to show
        return text_cell(time_since(layout.tm_last - r.last_usage), w, True)
    if d is Detail.FLOOR:
        floor = r.number("Floor", -1.0)
        return number(floor, w, 2) if floor > 0 else " " * w
    if d is Detail.CEILING:
        ceiling = r.number("Ceiling", -1.0)
        return number(ceiling, w, 2) if ceiling > -1 else " " * w
    attr = {Detail.EFF_QUOTA: "EffectiveQuota", Detail.CFG_QUOTA: "ConfigQuota", Detail.TREE_QUOTA: "SubtreeQuota",
            Detail.PRIORITY: "Priority"}[d]
    return number(r.number(attr), w, 2)


def _duration(seconds: float) -> str:
    """``D+HH:MM:SS``."""
    s = max(0, int(seconds))
    return f"{s // 86400}+{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def format_reslist(resources: Sequence[tuple[str, float]], *, now: float, tz: dt.tzinfo = dt.UTC) -> str:
    """``-getreslist``: each (slot name, time claimed) with how long ago, then the count."""
    row = "{:<30} {:>12} {:>12}\n"
    out = [row.format("Resource Name", " Start Time", " Match Time"), row.format("-------------", " ----------",
                                                                                  " ----------")]
    for name, start in resources:
        out.append(row.format(name, dt.datetime.fromtimestamp(start, tz).strftime("%m/%d %H:%M"),
                              _duration(now - start)))
    out.append(row.format("-------------", " ------------", " ------------"))
    out.append(f"Number of Resources Used: {len(resources)}\n")
    return "".join(out)
