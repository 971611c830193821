"""Reading the group quota knobs without letting one bad group stop the negotiator.

``group_policy_from_config(cfg)`` builds the ``GroupPolicy`` from ``GROUP_NAMES`` and each
group's ``GROUP_QUOTA_<g>``, ``GROUP_QUOTA_DYNAMIC_<g>``, ``GROUP_ACCEPT_SURPLUS_<g>`` and
``GROUP_AUTOREGROUP_<g>`` (the HTCondor manual's "Accounting Groups with Hierarchical Group
Quotas"; HTCondor 25 ``GroupEntry.cpp``, ``hgq_construct_tree``). What it cannot use becomes a
sentence in ``GroupPolicy.problems`` that names the knob (and the file and line when the
configuration knows them), and the group is kept with what could be read:

* a quota that does not evaluate to a number (text, a macro that refers back to itself) is
  treated as unset (a group left with no quota has quota 0);
* a static quota below 0 becomes 0, a dynamic quota outside 0…1 is clamped into it (the range
  HTCondor's ``param_double`` enforces);
* a group with neither quota gets quota 0 (dynamic), as in HTCondor; it still exists, its
  submitters negotiate only for surplus;
* a surplus or autoregroup flag that is not a boolean takes the global default;
* a ``GROUP_SORT_EXPR`` that does not parse gives way to the default (starvation order).

Problems of the tree's shape (a missing parent, a duplicate, a malformed or reserved name) are
found when the tree is built (``GroupTree.problems``). The runtime logs both in NegotiatorLog.
"""

from __future__ import annotations

import re
from typing import Any

from htcpool.classad import ClassAdError, ExprTree
from htcpool.config import ConfigInputError
from htcpool.negotiator.settings import ROOT_GROUP, GroupPolicy, GroupSettings

SUBSYSTEM = "NEGOTIATOR"


def _where(cfg: Any, knob: str) -> str:
    """`` ("file", line N)`` for a knob the configuration can place, else nothing."""
    provenance = getattr(cfg, "provenance", None)
    if provenance is None:
        return ""
    try:
        p = provenance(knob, SUBSYSTEM)
    except (ConfigInputError, ValueError):
        return ""
    if p is None or getattr(p, "is_default", False) or not getattr(p, "line", 0):
        return ""
    return f' ("{p.source}", line {p.line})'


class _Reader:
    """Typed reads of one configuration that turn failures into problems."""

    def __init__(self, cfg: Any) -> None:
        strict = getattr(cfg, "strict", None)  # a daemon's Config: errors come here, not to its log
        self.cfg = strict() if strict is not None else cfg
        self.problems: list[str] = []

    def number(self, knob: str, low: float, high: float) -> float | None:
        try:
            v = self.cfg.get_float(knob, subsystem=SUBSYSTEM)
        except (ConfigInputError, ValueError) as e:
            self.problems.append(f"{knob} does not evaluate to a number ({e}); it is treated as unset")
            return None
        if v is None:
            return None
        v = float(v)
        if not low <= v <= high:
            clamped = min(max(v, low), high)
            self.problems.append(
                f"{knob} = {v:g}{_where(self.cfg, knob)} is outside {low:g} to {high:g}; "
                f"{clamped:g} is used")
            return clamped
        return v

    def flag(self, knob: str, default: bool) -> bool:
        try:
            v = self.cfg.get_bool(knob, subsystem=SUBSYSTEM)
        except (ConfigInputError, ValueError) as e:
            self.problems.append(f"{knob} is not a boolean ({e}); {str(default).lower()} is used")
            return default
        return default if v is None else bool(v)

    def expression(self, knob: str, default: str) -> str:
        text = self.text(knob)
        if not text:
            return default
        try:
            ExprTree(text)
        except ClassAdError as e:
            self.problems.append(f"{knob} = {text}{_where(self.cfg, knob)} does not parse ({e}); "
                                 f"the default order is used")
            return default
        return text

    def text(self, knob: str) -> str:
        try:
            v = self.cfg.get_str(knob, subsystem=SUBSYSTEM)
        except (ConfigInputError, ValueError) as e:
            self.problems.append(f"{knob} cannot be read ({e}); it is ignored")
            return ""
        return "" if v is None else str(v)


def group_names(text: str) -> list[str]:
    """``GROUP_NAMES`` split on commas and white space."""
    return [w for w in re.split(r"[\s,]+", text) if w]


def _valid_name(name: str) -> bool:
    """Whether the tree can place a group of this name at all (``GroupTree`` says why not)."""
    return name.lower() != ROOT_GROUP.lower() and all(name.split("."))


def _group(r: _Reader, name: str, default_surplus: bool, default_regroup: bool) -> GroupSettings:
    if not _valid_name(name):
        return GroupSettings(name)
    before = len(r.problems)
    static = r.number(f"GROUP_QUOTA_{name}", 0.0, 2147483647.0)
    dynamic = r.number(f"GROUP_QUOTA_DYNAMIC_{name}", 0.0, 1.0) if static is None else None
    if static is None and dynamic is None and len(r.problems) == before:
        r.problems.append(
            f"GROUP_NAMES lists {name}, but neither GROUP_QUOTA_{name} nor GROUP_QUOTA_DYNAMIC_{name} "
            f"gives it a quota; its quota is 0")
    return GroupSettings(
        name,
        static_quota=static,
        dynamic_quota=dynamic,
        accept_surplus=r.flag(f"GROUP_ACCEPT_SURPLUS_{name}", default_surplus),
        autoregroup=r.flag(f"GROUP_AUTOREGROUP_{name}", default_regroup),
    )


def group_policy_from_config(cfg: Any) -> GroupPolicy:
    """The ``GroupPolicy`` of a configuration, with the problems found while reading it."""
    r = _Reader(cfg)
    default_surplus = r.flag("GROUP_ACCEPT_SURPLUS", False)
    default_regroup = r.flag("GROUP_AUTOREGROUP", False)
    groups = tuple(_group(r, name, default_surplus, default_regroup)
                   for name in group_names(r.text("GROUP_NAMES")))
    d = GroupPolicy()
    rounds = r.number("GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", 1, 2147483647.0)
    rate = r.number("GROUP_QUOTA_ROUND_ROBIN_RATE", 1.0, 1.0e300)
    return GroupPolicy(
        groups=groups,
        allow_quota_oversubscription=r.flag("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", True),
        sort_expr=r.expression("GROUP_SORT_EXPR", d.sort_expr),
        max_allocation_rounds=int(rounds) if rounds is not None else d.max_allocation_rounds,
        round_robin_rate=rate if rate is not None else d.round_robin_rate,
        use_weighted_demand=r.flag("NEGOTIATOR_USE_WEIGHTED_DEMAND", True),
        strict_enforce_quota=r.flag("NEGOTIATOR_STRICT_ENFORCE_QUOTA", True),
        problems=tuple(r.problems),
    )
