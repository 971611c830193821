"""Negotiation with hierarchical group quotas: allocation rounds in starvation order.

Rules (the HTCondor manual's "Accounting Groups with Hierarchical Group Quotas"; HTCondor 25
``GroupEntry.cpp``, ``hgq_negotiate_with_all_groups``):

* Each group's demand is the weighted running plus idle jobs of its submitters; a submitter without
  an ``@`` is not negotiated for. Its usage is its own record's weighted usage.
* Up to ``GROUP_QUOTA_MAX_ALLOCATION_ROUNDS`` rounds. Each round allocates quotas and surplus
  (``GroupTree.fair_share``), sorts the groups by ``GROUP_SORT_EXPR`` evaluated in an ad with
  ``AccountingGroup``, ``GroupQuota``, ``GroupResourcesAllocated`` and ``GroupResourcesInUse``
  (ascending; ties in ``GROUP_NAMES`` order, a stable choice where HTCondor's sort is not), and spins one pie
  per group within ``max(allocated, quota)``, capped by the room of ancestors that do not accept
  surplus (``NEGOTIATOR_STRICT_ENFORCE_QUOTA``), recounted from the accountant's live usage
  before each group. The slot limit grows from the group's usage as the round started (HTCondor's
  ``group->usage``, refreshed after each round). The limit is truncated to whole slots only when
  slots are unweighted (HTCondor truncates always, a defect not copied).
* With autoregroup, the root comes last and its pie covers the whole pool, with the submitters of
  autoregroup groups negotiating again, under ``SubmitterNegotiatingGroup = "<none>"``.
* After a round a group that used less than its allocation asks only for what it uses, freeing the
  rest for the next round; rounds stop once every allocation is used.
* With unweighted slots each round's fair share is followed by remainder recovery (``remainders``),
  which hands out the fractional parts of the allocations as whole slots, round-robin; the
  round-robin times go into ``cyc.round_robin``, which the cycle returns for the next one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator.exprinfo import number
from htcpool.negotiator.groups import GroupNode
from htcpool.negotiator.pie import SubmitterState, negotiate_with_group
from htcpool.negotiator.remainders import recover_remainders
from htcpool.negotiator.settings import ROOT_GROUP

if TYPE_CHECKING:
    from htcpool.negotiator.cycle import NegotiationCycle

_EPS = 1e-9


def _demand(s: SubmitterState, cyc: NegotiationCycle, seen: set[int]) -> float:
    """A submitter ad's demand (``hgq_prepare_for_matchmaking``):
    ``WeightedRunningJobs + WeightedIdleJobs``, the schedd's SLOT_WEIGHT-weighted counts; the
    unweighted ``RunningJobs``/``IdleJobs`` stand in when NEGOTIATOR_USE_WEIGHTED_DEMAND is false or
    the ad lacks the weighted attribute. The entries USE_GLOBAL_JOB_PRIOS makes of one submitter ad
    count once (``seen`` holds their sources)."""
    if s.source is not None:
        if id(s.source) in seen:
            return 0.0
        seen.add(id(s.source))
    weighted = cyc.policy.groups.use_weighted_demand
    running = s.weighted_running_jobs if weighted and s.weighted_running_jobs is not None else s.running_jobs
    idle = s.weighted_idle_jobs if weighted and s.weighted_idle_jobs is not None else s.advertised_idle
    return float(running) + float(idle)


def negotiate_groups(cyc: NegotiationCycle, states: list[SubmitterState]) -> None:
    tree = cyc.groups
    assert tree is not None
    gp = cyc.policy.groups
    acct = cyc.accountant
    members: dict[str, list[SubmitterState]] = {n.name: [] for n in tree.nodes()}
    for s in states:
        if "@" not in s.name:
            continue
        members[tree.assigned_group(s.name)].append(s)
    autoregroup_list = [s for n in tree.nodes() if n.autoregroup and n is not tree.root for s in members[n.name]]
    root_list = members[ROOT_GROUP] + autoregroup_list if tree.root.autoregroup else members[ROOT_GROUP]
    seen: set[int] = set()
    for n in tree.nodes():
        n.demand = sum(_demand(s, cyc, seen) for s in members[n.name])
        n.requested = n.demand
    sort_expr = ExprTree(gp.sort_expr)
    order_index = {id(n): tree.config_order.get(n.name.lower(), 0) for n in tree.nodes()}
    served: set[int] = set()  # the nodes remainder recovery served in the last round
    for _round in range(max(1, gp.max_allocation_rounds)):
        for n in tree.nodes():
            n.usage = acct.weighted_usage(n.name)
        tree.fair_share()
        if not cyc.policy.accountant.use_slot_weights:
            served = recover_remainders(tree, cyc.round_robin)[1]
        if tree.root.autoregroup:
            tree.root.quota = tree.root.allocated = cyc.group_total
        any_surplus = any(n.accept_surplus for n in tree.nodes() if n is not tree.root)
        maxdelta = max(
            [max(0.0, (n.allocated if any_surplus else n.quota) - n.usage) for n in tree.nodes()] + [0.0]
        )
        for n in tree.nodes():
            ad = ClassAd({
                "AccountingGroup": n.name,
                "GroupQuota": n.quota,
                "GroupResourcesAllocated": n.allocated,
                "GroupResourcesInUse": n.usage,
            })
            v = number(sort_expr.evaluate(ad, None, cyc.context))
            n.sort_key = v if v is not None else 3.4028234663852886e38
        ordered = sorted(
            tree.nodes(),
            key=lambda n: (tree.root.autoregroup and n is tree.root, n.sort_key, order_index[id(n)]),
        )
        rate = max(1.0, gp.round_robin_rate)
        step = 0.0
        while True:
            step = min(step + rate, maxdelta)
            for n in ordered:
                _negotiate_group(cyc, n, members, root_list, step, maxdelta)
            if step >= maxdelta or not cyc.table.left:
                break
        total_alloc = 0.0
        total_used = 0.0
        for n in tree.nodes():
            n.usage = acct.weighted_usage(n.name)
            if n.usage < n.allocated:
                n.requested = n.usage
            else:
                n.requested += n.allocated
            total_alloc += n.allocated
            total_used += min(n.usage, n.allocated)
        if total_used >= total_alloc - _EPS or not cyc.table.left:
            break
    cyc.round_robin = cyc.round_robin.served(tree.nodes(), served, cyc.now)


def _negotiate_group(cyc: NegotiationCycle, n: GroupNode, members: dict[str, list[SubmitterState]],
                     root_list: list[SubmitterState], step: float, maxdelta: float) -> None:
    tree = cyc.groups
    assert tree is not None
    pol = cyc.policy
    subs = root_list if n is tree.root else members[n.name]
    usage = n.usage  # as the round started (HTCondor's group->usage), refreshed after each round
    if n.allocated <= 0 or not subs or (usage >= n.allocated and not pol.consider_preemption):
        return
    target = max(n.allocated, n.quota)
    delta = max(0.0, target - usage)
    if delta > 0:
        slots = usage + delta * step / maxdelta if maxdelta > 0 else target
    else:
        slots = target
    slots = min(slots, target)
    if not pol.accountant.use_slot_weights:
        slots = math.floor(slots)
    if pol.groups.strict_enforce_quota:
        slots = tree.strict_limit(n, slots, cyc.accountant.weighted_usage)
    autoregroup = n is tree.root and tree.root.autoregroup
    group = None if autoregroup else n.name
    below = [
        s for s in subs
        if cyc.accountant.record(s.name).floor > 0
        and cyc.accountant.weighted_usage(s.name) < cyc.accountant.record(s.name).floor
    ]
    if below:
        negotiate_with_group(cyc, below, slots, group, negotiating_group=n.name, floor_round=True)
    negotiate_with_group(
        cyc, subs, math.inf if autoregroup else slots, group,
        negotiating_group=n.name, autoregroup=autoregroup,
    )
