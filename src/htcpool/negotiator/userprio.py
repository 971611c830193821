"""What ``condor_userprio`` reads from the accountant and changes in it.

``accounting_ads(accountant, groups, now)`` returns one dict per record, shaped like HTCondor's
QUERY_ACCOUNTING_ADS answer: the record's attributes plus ``Name``, ``Priority`` (the EUP),
``IsAccountingGroup``, ``AccountingGroup``, ``LastUpdate`` and, for groups, ``EffectiveQuota``,
``ConfigQuota``, ``SubtreeQuota``, ``GroupSortKey``, ``SurplusPolicy`` and ``Requested`` (what
``condor_userprio -quotas`` shows). Groups come first, breadth first from ``<none>`` (which is always
answered, so a pool with no records still has its table), then the submitters.

``apply_userprio(accountant, command, now)`` carries out one change (``-setfactor``, ``-setprio``,
``-resetusage`` …): ``USERPRIO_OPERATIONS`` maps each ``UserprioOp`` to its accountant call. Every
operation but ``-resetall`` names a record; a factor below 1 and a priority below 0.5 are refused,
as the negotiator refuses them; ``-duration`` turns ``-setfactor``, ``-setceiling`` and
``-setfloor`` into leases. A refusal is a ``NegotiatorUsageError`` whose message is for the user.

Every number a change carries is checked before anything is touched (``check_numbers``): it
must be finite (no NaN, no infinity: a NaN passes every "less than" test) and at most
``MAX_USERPRIO_VALUE`` in size, and a time (``-setbegin``, ``-setlast``) not negative; a
lease's duration likewise, and not negative. Each operation then refuses a value below its
least (a factor 1, a priority 0.5, a ceiling -1, a floor and a usage 0). A record with such a
value would stop the priority arithmetic of every later negotiation cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from htcpool.negotiator.accountant import MAX_RECORD_VALUE, Accountant
from htcpool.negotiator.errors import NegotiatorUsageError
from htcpool.negotiator.groups import GroupTree
from htcpool.negotiator.records import CustomerRecord
from htcpool.negotiator.settings import ROOT_GROUP
from htcpool.protocol import UserprioCommand, UserprioOp

Operation = Callable[[Accountant, UserprioCommand, float], None]


def accounting_ads(accountant: Accountant, groups: GroupTree | None, now: float) -> list[dict[str, Any]]:
    """One ad per record, groups first in breadth-first order of the tree (``<none>`` first, as
    HTCondor's negotiator answers), then the submitters; a configured group (or ``<none>``)
    without a record yet is answered with a fresh record's values, the accountant left as it is."""
    nodes = sorted(groups.nodes(), key=lambda n: (n.name != ROOT_GROUP, n.name.count("."))) \
        if groups is not None else []
    tree_nodes = {n.name: n for n in nodes}
    names = list(tree_nodes) or [ROOT_GROUP]
    names += [n for n, rec in accountant.records.items() if rec.is_group and n not in tree_nodes and n != ROOT_GROUP]
    names += [n for n, rec in accountant.records.items() if not rec.is_group]
    ads: list[dict[str, Any]] = []
    for name in names:
        rec = accountant.records.get(name) or CustomerRecord(name, priority_factor=accountant.default_factor(name))
        ad = rec.to_dict()
        is_group = rec.is_group
        group = name if is_group else (groups.assigned_group(name) if groups is not None else ROOT_GROUP)
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


#: the largest size of a number condor_userprio may set (the accountant's bound)
MAX_USERPRIO_VALUE = MAX_RECORD_VALUE
#: the changes that carry a number; -setfactor, -setprio, -setceiling, -setfloor and -setaccum
#: also refuse a value below their least, each with its own message
NUMERIC_OPS = frozenset({UserprioOp.SETFACTOR, UserprioOp.SETPRIO, UserprioOp.SETCEILING,
                         UserprioOp.SETFLOOR, UserprioOp.SETACCUM, UserprioOp.SETBEGIN, UserprioOp.SETLAST})
#: a time cannot be before the epoch
NOT_BEFORE_EPOCH = frozenset({UserprioOp.SETBEGIN, UserprioOp.SETLAST})


def _finite(what: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NegotiatorUsageError(f"{what}: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number) or abs(number) > MAX_USERPRIO_VALUE:
        raise NegotiatorUsageError(f"{what}: {value!r} is not a finite number of at most "
                                   f"{MAX_USERPRIO_VALUE:g} in size")
    return number


def check_numbers(command: UserprioCommand) -> None:
    """NegotiatorUsageError naming the option when a number of ``command`` is not usable."""
    option = f"-{command.op}"
    if command.op in NUMERIC_OPS and _finite(option, command.value) < 0 and command.op in NOT_BEFORE_EPOCH:
        raise NegotiatorUsageError(f"{option}: {command.value!r} is before 1970: a time must not be negative")
    if _finite("-duration", command.duration) < 0:
        raise NegotiatorUsageError(f"-duration: {command.duration!r} is negative")


def _lease(c: UserprioCommand, now: float) -> dict[str, float]:
    """The lease arguments of a change given ``-duration`` (none without it)."""
    return {"now": now, "duration": c.duration} if c.duration > 0 else {}


def _set_factor(acc: Accountant, c: UserprioCommand, now: float) -> None:
    if c.value < 1:
        raise NegotiatorUsageError("The priority factor must be greater than or equal to 1.")
    acc.set_priority_factor(c.name, c.value, **_lease(c, now))


def _set_priority(acc: Accountant, c: UserprioCommand, now: float) -> None:
    if c.value < 0.5:
        raise NegotiatorUsageError("The priority must be at least 0.5.")
    acc.set_priority(c.name, c.value)


USERPRIO_OPERATIONS: dict[UserprioOp, Operation] = {
    UserprioOp.SETFACTOR: _set_factor,
    UserprioOp.SETPRIO: _set_priority,
    UserprioOp.SETCEILING: lambda acc, c, now: acc.set_ceiling(c.name, c.value, **_lease(c, now)),
    UserprioOp.SETFLOOR: lambda acc, c, now: acc.set_floor(c.name, c.value, **_lease(c, now)),
    UserprioOp.SETACCUM: lambda acc, c, now: acc.set_accumulated_usage(c.name, c.value),
    UserprioOp.SETBEGIN: lambda acc, c, now: acc.set_begin_usage_time(c.name, c.value),
    UserprioOp.SETLAST: lambda acc, c, now: acc.set_last_usage_time(c.name, c.value),
    UserprioOp.RESETUSAGE: lambda acc, c, now: acc.reset_usage(c.name, now),
    UserprioOp.RESETALL: lambda acc, c, now: acc.reset_all_usage(now),
    UserprioOp.DELETE: lambda acc, c, now: acc.delete(c.name),
}


def apply_userprio(accountant: Accountant, command: UserprioCommand, now: float) -> None:
    """Carry out one condor_userprio change at time ``now`` (committed by the accountant)."""
    operation = USERPRIO_OPERATIONS.get(command.op)
    if operation is None:
        raise NegotiatorUsageError(f"unknown userprio operation {str(command.op)!r}")
    if command.op != UserprioOp.RESETALL and not command.name:
        raise NegotiatorUsageError(f"-{command.op} needs a user or group name")
    check_numbers(command)
    operation(accountant, command, now)
