"""The accounting ads a negotiator publishes, from which ``condor_userprio`` prints its tables.

``accounting_ads(accountant, groups, now)`` returns one dict per record, shaped like HTCondor's
QUERY_ACCOUNTING_ADS answer: the record's attributes plus ``Name``, ``Priority`` (the EUP),
``IsAccountingGroup``, ``AccountingGroup``, ``LastUpdate`` and, for groups, ``EffectiveQuota``,
``ConfigQuota``, ``SubtreeQuota``, ``GroupSortKey``, ``SurplusPolicy`` and ``Requested`` (what
``condor_userprio -quotas`` shows).
"""

from __future__ import annotations

from typing import Any

from htcpool.negotiator.accountant import Accountant
from htcpool.negotiator.groups import GroupTree


def accounting_ads(accountant: Accountant, groups: GroupTree | None, now: float) -> list[dict[str, Any]]:
    ads: list[dict[str, Any]] = []
    tree_nodes = {n.name: n for n in groups.nodes()} if groups is not None else {}
    names = list(accountant.records)
    for name in tree_nodes:
        if name not in accountant.records:
            accountant.record(name)
            names.append(name)
    for name in names:
        rec = accountant.records[name]
        ad = rec.to_dict()
        is_group = rec.is_group
        group = name if is_group else (groups.assigned_group(name) if groups is not None else "<none>")
        ad.update({
            "Priority": rec.priority * rec.priority_factor,
            "IsAccountingGroup": is_group,
            "AccountingGroup": group,
            "LastUpdate": accountant.last_update_time or now,
        })
        node = tree_nodes.get(name)
        if node is not None:
            ad.update({
                "EffectiveQuota": node.quota,
                "ConfigQuota": node.config_quota,
                "SubtreeQuota": node.subtree_quota,
                "GroupSortKey": node.sort_key,
                "SurplusPolicy": node.surplus_policy,
                "Requested": node.demand,
            })
        ads.append(ad)
    return ads
