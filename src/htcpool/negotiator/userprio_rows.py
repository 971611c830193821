"""The rows of ``condor_userprio``'s table: what each accounting ad has, its group, its place.

``collect(ads, view)`` turns the accounting ads a negotiator answers (``userprio.accounting_ads``)
into ``Row`` records and settles what the table shows, following HTCondor 25's tool
(``user_prio.cpp``, the condor_userprio manual page):

* ``UserprioView`` is what the command line asked for: the detail flags (``-all``, ``-most``,
  ``-usage``, ``-priority``, ``-quotas``, ``-surplus``, ``-sortkey``, ``-groupid``, ``-order``;
  none means ``-most``), the layout (``-hierarchical``, ``-flat``, ``-grouporder``), group
  roll-up (``-grouprollup``) and the oldest last usage shown (``min_last``: a day before the
  tool's clock by default, the date of ``-activefrom``, -1 for ``-allusers`` or named submitters).
* Each row knows which details it has data for (``Row.has``); a detail no row has is dropped from
  the view, except the quota details when ``-quotas``/``-surplus`` asked for them. A group's
  priority means nothing to the tool and is never shown; with ``-grouprollup`` a group without a
  quota shows no priorities either.
* Groups are numbered 1, 2 … in name order once some user belongs to one (``<none>`` keeps 0;
  before that, groups carry the negative of their place in the answer). A group's display order
  is its sort key (priority views), its usage in hours (usage views) or its number; its users
  share it. A record never used has a last usage of -1, so only ``-allusers`` lists it.
* A row is visible when its last usage is not older than ``min_last``. The hierarchical layout is
  dropped when no visible record belongs to a group other than ``<none>``; quota columns then
  go too unless asked for. A view of quota columns only lists groups (users are still counted).
* Rows are sorted: hierarchically by group (``<none>`` last when some group regroups), groups
  above their users; with ``-grouporder`` groups first in the answer's order; otherwise, and
  within a group, by priority, usage or name, whichever the first column is.
* With ``-grouprollup`` a group's usage figures are the sums over the users of its subtree (the
  negotiator's ``GET_PRIORITY_ROLLUP`` answer).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ROOT = "<none>"
NEVER = -1.0  # the last usage of a record never used
#: a sort key this large prints as ``<last>`` (the largest float a ClassAd round trip keeps)
LAST_SORT_KEY = 3.40282001e38


class Detail(enum.Flag):
    """One column's data (HTCondor's ``Detail*`` flags)."""

    NONE = 0
    GROUP_ID = enum.auto()
    ORDER = enum.auto()
    SORT_KEY = enum.auto()
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


PRIOS = Detail.PRIORITY | Detail.FACTOR | Detail.REAL_PRIO
USAGES = Detail.IN_USE | Detail.USAGE
QUOTAS = Detail.EFF_QUOTA | Detail.CFG_QUOTA | Detail.TREE_QUOTA | Detail.SURPLUS | Detail.REQUESTED
MOST = (Detail.CFG_QUOTA | Detail.SURPLUS | Detail.PRIORITY | Detail.FACTOR | USAGES | Detail.SINCE
        | Detail.REQUESTED | Detail.CEILING | Detail.FLOOR)
ALL = MOST | QUOTAS | PRIOS | Detail.BEGIN | Detail.LAST
#: the detail flags of the display options
OPTION_DETAILS = {
    "most": MOST, "all": ALL, "quotas": QUOTAS, "surplus": Detail.SURPLUS, "usage": USAGES | Detail.BEGIN | Detail.LAST,
    "priority": PRIOS, "sortkey": Detail.SORT_KEY, "groupid": Detail.GROUP_ID, "order": Detail.ORDER,
}


class Surplus(enum.Enum):
    """A group's surplus policy as the tool names it."""

    UNSET = ""
    NO = "no"
    REGROUP = "Regroup"
    BY_QUOTA = "ByQuota"
    UNKNOWN = "n/a"


SURPLUS_POLICIES = {"regroup": Surplus.REGROUP, "byquota": Surplus.BY_QUOTA, "no": Surplus.NO}


@dataclass(frozen=True)
class UserprioView:
    """What the command line asked to see (see the module's rules)."""

    details: Detail = Detail.NONE
    dash_quota: bool = False  # -quotas or -surplus given
    hierarchical: bool = True
    dash_hier: bool = False  # -hierarchical, -flat or -grouporder given
    group_order: bool = False
    group_rollup: bool = False
    min_last: float | None = None  # None: a day before the tool's clock


@dataclass
class Row:
    ad: Mapping[str, Any]
    index: int  # 1-based place in the answer
    name: str
    is_group: bool
    group: str
    has: Detail = Detail.NONE
    group_id: int = 0
    display_order: float = 0.0
    surplus: Surplus = Surplus.UNSET
    last_usage: float = NEVER

    def number(self, attr: str, default: float = 0.0) -> float:
        value = self.ad.get(attr, default)
        return float(value) if isinstance(value, int | float) else default


@dataclass
class Table:
    """The rows in display order and what the whole table shows."""

    rows: list[Row]
    details: Detail
    hierarchical: bool
    hide_users: bool
    hide_groups: bool
    hide_none_group: bool
    surplus: Surplus
    min_last: float
    count: int  # every record, for the name column's width


def _row(ad: Mapping[str, Any], index: int, rollup: bool) -> Row:
    is_group = bool(ad.get("IsAccountingGroup"))
    r = Row(ad, index, str(ad.get("Name", "")), is_group, str(ad.get("AccountingGroup") or ROOT))
    has = Detail.PRIORITY
    if "PriorityFactor" in ad:
        has |= Detail.FACTOR | (Detail.REAL_PRIO if r.number("PriorityFactor") > 0 else Detail.NONE)
    for attr, detail in (("WeightedAccumulatedUsage", USAGES), ("ResourcesUsed", USAGES), ("Ceiling", Detail.CEILING),
                         ("Floor", Detail.FLOOR), ("Requested", Detail.REQUESTED), ("BeginUsageTime", Detail.BEGIN),
                         ("LastUsageTime", Detail.LAST | Detail.SINCE), ("EffectiveQuota", Detail.EFF_QUOTA),
                         ("ConfigQuota", Detail.CFG_QUOTA)):
        if attr in ad:
            has |= detail
    r.last_usage = r.number("LastUsageTime") or NEVER
    if is_group:
        r.group_id = 0 if r.name in (ROOT, ".") else -index
        if "GroupAutoRegroup" in ad:
            has |= Detail.SURPLUS
            r.surplus = Surplus.REGROUP if ad["GroupAutoRegroup"] is True else Surplus.NO
        if "SurplusPolicy" in ad:
            has |= Detail.SURPLUS
            r.surplus = SURPLUS_POLICIES.get(str(ad["SurplusPolicy"]).lower(), Surplus.UNKNOWN)
        if "GroupSortKey" in ad:
            has |= Detail.SORT_KEY
        if "SubtreeQuota" in ad:
            has |= Detail.TREE_QUOTA
        if rollup and not has & Detail.EFF_QUOTA:
            has &= ~PRIOS
        has &= ~Detail.PRIORITY  # a group's priority means nothing to the tool
    elif r.group not in (ROOT, "."):
        r.group_id = -1  # fixed up once the groups are numbered
    if r.group_id:
        has |= Detail.GROUP_ID
    r.has = has
    return r


def _roll_up(ads: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """Each group's usage figures summed over the users of its subtree (``-grouprollup``)."""
    out: list[dict[str, Any]] = [dict(a) for a in ads]
    groups = {str(a.get("Name")): a for a in out if a.get("IsAccountingGroup")}
    totals: dict[str, dict[str, float]] = {g: {} for g in groups}
    for a in out:
        if a.get("IsAccountingGroup"):
            continue
        group = str(a.get("AccountingGroup") or ROOT)
        while True:
            if group in totals:
                for attr in ("WeightedResourcesUsed", "ResourcesUsed", "WeightedAccumulatedUsage", "AccumulatedUsage"):
                    value = a.get(attr)
                    if isinstance(value, int | float):
                        totals[group][attr] = totals[group].get(attr, 0.0) + float(value)
            if group == ROOT:
                break
            group = group.rpartition(".")[0] or ROOT
    for name, sums in totals.items():
        for attr in ("WeightedResourcesUsed", "ResourcesUsed", "WeightedAccumulatedUsage", "AccumulatedUsage"):
            groups[name][attr] = sums.get(attr, 0.0)
    return out


def _number_groups(rows: list[Row], details: Detail, sort_key_known: bool) -> None:
    """Groups numbered in name order (``<none>`` keeps 0), display orders set, users given
    their group's number and order."""
    groups = sorted((r for r in rows if r.is_group), key=lambda r: (r.group_id == 0, r.name))
    by_name: dict[str, Row] = {}
    root: Row | None = None
    for i, g in enumerate(groups, 1):
        if g.group_id < 0:
            g.group_id = i
        else:
            root = g
        if details & Detail.PRIORITY:
            g.display_order = g.number("GroupSortKey") if sort_key_known else (
                g.number("Priority") if g.group_id else math.inf)
        elif details & USAGES:
            g.display_order = g.number("WeightedAccumulatedUsage") / 3600.0
        else:
            g.display_order = float(g.group_id) if g.group_id else math.inf
        g.has |= Detail.ORDER
        by_name[g.name] = g
    for r in rows:
        if r.is_group:
            continue
        owner = by_name.get(r.group) if r.group_id else root
        if r.group_id and owner is not None:
            r.group_id = owner.group_id
        if owner is not None:
            r.display_order = owner.display_order
            r.has |= owner.has & Detail.ORDER


def collect(ads: Sequence[Mapping[str, Any]], view: UserprioView, now: float) -> Table:
    """The table's rows, in order, and what it shows (see the module's rules)."""
    if view.group_rollup:
        ads = _roll_up(ads)
    rows = [_row(a, i, view.group_rollup) for i, a in enumerate(ads, 1)]
    details = view.details or MOST
    hierarchical, hide_groups = view.hierarchical, False
    if not details & ~PRIOS:  # priorities only: groups are left out unless asked for
        if not view.dash_hier:
            hierarchical = False
        hide_groups = not hierarchical
    available = Detail.NONE
    for r in rows:
        available |= r.has
    for needed in (USAGES, Detail.FACTOR, Detail.BEGIN, Detail.LAST | Detail.SINCE):
        if not available & needed:
            details &= ~needed
    if not view.dash_quota and not available & QUOTAS:
        details &= ~QUOTAS
    if any(r.group_id < 0 and not r.is_group for r in rows):
        _number_groups(rows, details, bool(available & Detail.SORT_KEY))
    surplus = Surplus.UNSET
    for r in rows:
        if r.is_group and r.surplus in (Surplus.REGROUP, Surplus.BY_QUOTA):
            surplus = r.surplus
    min_last = view.min_last if view.min_last is not None else now - 86400.0
    visible = [r for r in rows if r.last_usage >= min_last]
    in_groups = any(r.group_id > 0 for r in visible)
    if not available & Detail.GROUP_ID or not in_groups:
        hierarchical = False
    users_have_quotas = any(not r.is_group and r.has & (Detail.EFF_QUOTA | Detail.CFG_QUOTA) for r in rows)
    if (hide_groups or not in_groups) and not view.dash_quota and not users_have_quotas:
        details &= ~QUOTAS
    hide_users = bool(details & QUOTAS) and not details & ~QUOTAS and not users_have_quotas
    rows.sort(key=_sort_key(details, hierarchical, view.group_order, surplus is Surplus.REGROUP))
    return Table(rows, details, hierarchical, hide_users, hide_groups, not in_groups, surplus, min_last, len(rows))


def _sort_key(details: Detail, hierarchical: bool, group_order: bool, none_last: bool) -> Any:
    def within(r: Row) -> tuple[Any, ...]:
        if details & Detail.PRIORITY:
            return (r.number("Priority"),)
        if details & USAGES:
            return (r.number("WeightedAccumulatedUsage", -1.0),)
        return (r.name,)

    if hierarchical:
        by_order = bool(details & (Detail.PRIORITY | USAGES))

        def hier(r: Row) -> tuple[Any, ...]:
            group = (none_last and r.group_id == 0, r.display_order if by_order else 0.0, r.group_id)
            return (*group, not r.is_group, *within(r))

        return hier
    if group_order:
        return lambda r: (not r.is_group, r.index if r.is_group else 0, *(() if r.is_group else within(r)))
    return within
