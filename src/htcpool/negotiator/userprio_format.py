"""``condor_userprio``'s text tables, from accounting ads: pure formatting, no I/O.

``format_userprio(ads, now=…, view="most")`` returns what HTCondor 25's tool prints for the ads a
negotiator answers QUERY_ACCOUNTING_ADS with (``userprio.accounting_ads``). Its layout (reference
1.8; ``user_prio.cpp``):

* The columns are one table (``COLUMNS``) of (detail, width, two heading lines); a view is a set of
  details: ``most`` (also the default), ``all`` and ``quotas``. A column is printed only when some
  ad carries its data; a row without it prints blanks, or ``n/d`` for a group's quota columns.
* Only records whose ``LastUsageTime`` is within ``active_window`` seconds of ``now`` are shown
  (``-allusers``: ``active_window=None``). Groups are shown above their users, which appear
  without the group prefix and indented by two (the hierarchical layout), unless every shown user
  is ungrouped. The ``-quotas`` view lists groups only; users are still counted.
* Numbers are right-aligned ``%W.Df`` (``%.(W-6)g`` when too wide); text is left-aligned; headings
  are centred with the extra space on the right. Every column is preceded by one space, and a row
  is always full width, trailing blanks included.
* Dates are ``MM/DD HH:MM`` (last update) or ``MM/DD/YYYY HH:MM`` in the time zone given; a time
  since is ``D+HH:MM``, or ``<now>`` when not positive.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class Detail(enum.Flag):
    """One column's data (HTCondor's ``Detail*`` flags)."""

    NONE = 0
    EFF_QUOTA = enum.auto()
    CFG_QUOTA = enum.auto()
    SURPLUS = enum.auto()
    TREE_QUOTA = enum.auto()
    PRIORITY = enum.auto()
    REAL_PRIO = enum.auto()
    FACTOR = enum.auto()
    IN_USE = enum.auto()
    USAGE = enum.auto()
    BEGIN = enum.auto()
    LAST = enum.auto()
    SINCE = enum.auto()
    REQUESTED = enum.auto()
    FLOOR = enum.auto()
    CEILING = enum.auto()


@dataclass(frozen=True)
class Column:
    detail: Detail
    width: int
    heading: tuple[str, str]


COLUMNS = (
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
QUOTAS = Detail.EFF_QUOTA | Detail.CFG_QUOTA | Detail.TREE_QUOTA | Detail.SURPLUS | Detail.REQUESTED
MOST = (Detail.CFG_QUOTA | Detail.SURPLUS | Detail.PRIORITY | Detail.FACTOR | Detail.IN_USE | Detail.USAGE
        | Detail.SINCE | Detail.REQUESTED | Detail.CEILING | Detail.FLOOR)
VIEWS = {"most": MOST, "all": MOST | QUOTAS | Detail.REAL_PRIO | Detail.BEGIN | Detail.LAST, "quotas": QUOTAS}
#: which ad attribute makes a column available
SOURCES = {
    Detail.EFF_QUOTA: "EffectiveQuota", Detail.CFG_QUOTA: "ConfigQuota", Detail.SURPLUS: "SurplusPolicy",
    Detail.TREE_QUOTA: "SubtreeQuota", Detail.PRIORITY: "Priority", Detail.REAL_PRIO: "PriorityFactor",
    Detail.FACTOR: "PriorityFactor", Detail.IN_USE: "WeightedAccumulatedUsage",
    Detail.USAGE: "WeightedAccumulatedUsage", Detail.BEGIN: "BeginUsageTime", Detail.LAST: "LastUsageTime",
    Detail.SINCE: "LastUsageTime", Detail.REQUESTED: "Requested", Detail.FLOOR: "Floor",
    Detail.CEILING: "Ceiling",
}
SURPLUS_NAMES = {"no": "no", "regroup": "Regroup", "byquota": "ByQuota"}
ROOT = "<none>"


def number(value: float, width: int, decimals: int) -> str:
    text = f"{value:{width}.{decimals}f}"
    if len(text) > width:
        text = f"{value:.{width - 6}g}"
    return text.rjust(width)[:width]


def text_cell(text: str, width: int, right: bool = False) -> str:
    return (text.rjust(width) if right else text.ljust(width))[:width]


def centred(text: str, width: int) -> str:
    return (" " * max(0, (width - len(text)) // 2) + text).ljust(width)[:width]


def time_since(seconds: float) -> str:
    if seconds <= 0:
        return "<now>"
    minutes = int(seconds) // 60
    return f"{minutes // 1440}+{minutes // 60 % 24:02d}:{minutes % 60:02d}"


@dataclass
class Row:
    ad: Mapping[str, Any]
    name: str
    is_group: bool
    group: str
    group_id: int = 0

    def has(self, detail: Detail) -> bool:
        if detail is Detail.PRIORITY and self.is_group:
            return False  # a group's priority means nothing to the tool
        return SOURCES[detail] in self.ad


@dataclass(frozen=True)
class _Layout:
    """What every line of one table shares: its columns, the name column's width, the clock."""

    columns: list[Column]
    name_width: int
    hierarchical: bool
    tz: dt.tzinfo
    tm_last: float  # the accountant's last update
    min_last: float  # the oldest last usage shown (-1: -allusers)

    def line(self, first: str, cells: list[str]) -> str:
        return text_cell(first, self.name_width) + "".join(" " + c for c in cells)

    def stamp(self, t: float, fmt: str) -> str:
        return dt.datetime.fromtimestamp(t, self.tz).strftime(fmt)

    def rule(self) -> str:
        return "-" * self.name_width + "".join(" " + "-" * c.width for c in self.columns)


def format_userprio(ads: Sequence[Mapping[str, Any]], *, now: float, view: str = "most",
                    active_window: float | None = 86400.0, tz: dt.tzinfo = dt.UTC) -> str:
    """The table ``condor_userprio`` (``-most``, ``-all``, ``-quotas``) prints for ``ads``."""
    if not ads:
        return ""
    min_last = now - active_window if active_window is not None else -1.0  # -allusers
    rows = _rows(ads)
    shown = [r for r in rows if _visible(r, min_last)]
    hierarchical = any(r.group_id > 0 for r in shown if not r.is_group)
    details = _details(rows, view, hierarchical)
    _sort(rows, details, hierarchical, any(_surplus(r, "regroup") for r in rows))
    layout = _Layout([c for c in COLUMNS if c.detail & details], _name_width(shown, hierarchical, len(rows)),
                     hierarchical, tz, int(ads[0].get("LastUpdate", 0)), min_last)
    hide_users = view == "quotas"
    out = [f"Last Priority Update: {layout.stamp(layout.tm_last, '%m/%d %H:%M')}"]
    out.append(layout.line("Group" if hierarchical else "",
                           [centred(c.heading[0], c.width) for c in layout.columns]))
    second = ("Name" if hierarchical else "Group Name") if hide_users else ("  User Name" if hierarchical else "User Name")
    out.append(layout.line(second, [centred(c.heading[1], c.width) for c in layout.columns]))
    out.append(layout.rule())
    users, total_in_use, total_usage = _body(layout, rows, hide_users, out)
    out.append(layout.rule())
    out.append(layout.line(f"Number of users: {users}", _footer(layout, rows, total_in_use, total_usage)))
    return "\n".join(out) + "\n"


def _rows(ads: Sequence[Mapping[str, Any]]) -> list[Row]:
    """One row per ad; groups numbered in name order, each user given its group's number."""
    rows = [Row(a, str(a["Name"]), bool(a.get("IsAccountingGroup")), str(a.get("AccountingGroup", ROOT)))
            for a in ads]
    groups = sorted((r for r in rows if r.is_group and r.name != ROOT), key=lambda r: r.name)
    for i, g in enumerate(groups, 1):
        g.group_id = i
    ids = {g.name: g.group_id for g in groups}
    for r in rows:
        if not r.is_group:
            r.group_id = ids.get(r.group, 0)
    return rows


def _visible(r: Row, min_last: float) -> bool:
    last = r.ad.get("LastUsageTime", 0) or -1
    return bool(last >= min_last)


def _surplus(r: Row, policy: str) -> bool:
    return r.is_group and r.ad.get("SurplusPolicy") == policy


def _details(rows: list[Row], view: str, hierarchical: bool) -> Detail:
    """The view's columns that some row has data for; quota columns only with groups shown."""
    details = VIEWS[view]
    available = Detail.NONE
    for r in rows:
        for c in COLUMNS:
            if r.has(c.detail):
                available |= c.detail
    details &= available | (QUOTAS if view == "quotas" else Detail.NONE)
    if not hierarchical and view != "quotas":
        details &= ~QUOTAS
    return details


def _name_width(shown: list[Row], hierarchical: bool, count: int) -> int:
    """Wide enough for the names shown and for the footer's count of every record."""
    count_text = f"Number of users: {count}"
    name_width = 10
    for r in shown:
        n = len(r.name)
        if hierarchical and not r.is_group:
            n += 2 - (len(r.group) if r.group_id else 0)
        name_width = max(name_width, n)
    return max(min(name_width, 99), len(count_text)) + (2 if hierarchical else 0)


def _body(layout: _Layout, rows: list[Row], hide_users: bool, out: list[str]) -> tuple[int, float, float]:
    """Append the rows shown to ``out``; returns the users counted and their total use and usage."""
    users = 0
    total_in_use = total_usage = 0.0
    for r in rows:
        if not _visible(r, layout.min_last):
            continue
        if not r.is_group:
            users += 1
            if hide_users:
                continue
        elif not layout.hierarchical and r.group_id == 0:
            continue
        name = r.name
        if layout.hierarchical and not r.is_group:
            name = "  " + (name[len(r.group) + 1:] if r.group_id else name)
        out.append(layout.line(name, [_cell(r, c, layout.tm_last, layout.stamp) for c in layout.columns]))
        if not r.is_group:
            total_in_use += float(r.ad.get("WeightedResourcesUsed", 0.0))
            total_usage += float(r.ad.get("WeightedAccumulatedUsage", 0.0))
    return users, total_in_use, total_usage


def _footer(layout: _Layout, rows: list[Row], total_in_use: float, total_usage: float) -> list[str]:
    footer: list[str] = []
    min_last, tm_last = layout.min_last, layout.tm_last
    regroup = any(_surplus(r, "regroup") for r in rows)
    by_quota = any(_surplus(r, "byquota") for r in rows)
    for c in layout.columns:
        d, w = c.detail, c.width
        if d is Detail.SURPLUS:
            footer.append(text_cell("Regroup" if regroup else "ByQuota" if by_quota else "no", w))
        elif d is Detail.IN_USE:
            footer.append(number(total_in_use, w, 0))
        elif d is Detail.USAGE:
            footer.append(number(total_usage / 3600.0, w, 2))
        elif d is Detail.LAST:
            footer.append(text_cell(layout.stamp(min_last, "%m/%d/%Y %H:%M") if min_last > 0 else "", w, True))
        elif d is Detail.SINCE:
            footer.append(text_cell(time_since(tm_last - min_last) if min_last > 0 else "", w, True))
        else:
            footer.append(" " * w)
    return footer


def _sort(rows: list[Row], details: Detail, hierarchical: bool, regroup: bool) -> None:
    """Groups with their users below them (hierarchical), else by the first column's value."""
    def within(r: Row) -> tuple[Any, ...]:
        if details & Detail.PRIORITY:
            return (float(r.ad.get("Priority", 0.0)),)
        if details & (Detail.IN_USE | Detail.USAGE):
            return (float(r.ad.get("WeightedAccumulatedUsage", 0.0)),)
        return (r.name,)

    if not hierarchical:
        rows.sort(key=within)
        return
    by_id = {r.group_id: r for r in rows if r.is_group}

    def order(r: Row) -> tuple[Any, ...]:
        g = by_id.get(r.group_id)
        if details & Detail.PRIORITY and g is not None and "GroupSortKey" in g.ad:
            key = float(g.ad["GroupSortKey"])
        elif details & (Detail.PRIORITY | Detail.IN_USE | Detail.USAGE) and g is not None:
            key = float(g.ad.get("WeightedAccumulatedUsage", 0.0)) / 3600.0
        else:
            key = float(r.group_id)
        none_last = regroup and r.group_id == 0
        return (none_last, key, r.group_id, not r.is_group, *within(r))

    rows.sort(key=order)


def _cell(r: Row, c: Column, tm_last: float, stamp: Any) -> str:
    d, w, ad = c.detail, c.width, r.ad
    if not r.has(d):
        return text_cell("n/d", w, True) if r.is_group and d & QUOTAS else " " * w
    if d is Detail.SURPLUS:
        return text_cell(SURPLUS_NAMES.get(str(ad[SOURCES[d]]).lower(), "n/a") if r.group_id else "yes", w)
    if d in (Detail.EFF_QUOTA, Detail.CFG_QUOTA, Detail.TREE_QUOTA, Detail.PRIORITY, Detail.FACTOR):
        return number(float(ad[SOURCES[d]]), w, 2)
    if d is Detail.REAL_PRIO:
        factor = float(ad["PriorityFactor"])
        return number(float(ad.get("Priority", 0.0)) / factor if factor > 0 else 0.0, w, 2)
    if d is Detail.IN_USE:
        return number(float(ad.get("WeightedResourcesUsed", 0.0)), w, 0)
    if d is Detail.REQUESTED:
        return number(float(ad["Requested"]), w, 0)
    if d is Detail.USAGE:
        return number(float(ad["WeightedAccumulatedUsage"]) / 3600.0, w, 2)
    if d in (Detail.BEGIN, Detail.LAST):
        t = float(ad[SOURCES[d]])
        return text_cell(stamp(t, "%m/%d/%Y %H:%M") if t > 0 else "", w, True)
    if d is Detail.SINCE:
        return text_cell(time_since(tm_last - float(ad["LastUsageTime"])), w, True)
    if d is Detail.FLOOR:
        return number(float(ad["Floor"]), w, 2) if float(ad["Floor"]) > 0 else " " * w
    return number(float(ad["Ceiling"]), w, 2) if float(ad["Ceiling"]) > -1 else " " * w
