"""The accountant's persistent records and the interface of the store that keeps them.

A ``CustomerRecord`` is plain data with HTCondor's attribute names as its serialised keys
(``Priority``, ``PriorityFactor``, ``WeightedAccumulatedUsage`` …), so a live driver can write it to
SQLite (or HTCondor's own log form) and read it back bit for bit. ``AccountantStore`` is what the
accountant needs from such a driver: load everything once, then commit changes in transactions.
``MemoryStore`` keeps serialised copies in memory, for tests and the simulator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

#: record field → HTCondor attribute name, in the order HTCondor's tools list them
ATTRIBUTES: dict[str, str] = {
    "priority": "Priority",
    "priority_factor": "PriorityFactor",
    "resources_used": "ResourcesUsed",
    "weighted_resources_used": "WeightedResourcesUsed",
    "hier_weighted_resources_used": "HierWeightedResourcesUsed",
    "uncharged_time": "UnchargedTime",
    "weighted_uncharged_time": "WeightedUnchargedTime",
    "accumulated_usage": "AccumulatedUsage",
    "weighted_accumulated_usage": "WeightedAccumulatedUsage",
    "begin_usage_time": "BeginUsageTime",
    "last_usage_time": "LastUsageTime",
    "ceiling": "Ceiling",
    "floor": "Floor",
    "ceiling_lease_expiration": "CeilingLeaseExpiration",
    "ceiling_pre_lease_value": "CeilingPreLeaseValue",
    "floor_lease_expiration": "FloorLeaseExpiration",
    "floor_pre_lease_value": "FloorPreLeaseValue",
    "priority_factor_lease_expiration": "PriorityFactorLeaseExpiration",
    "priority_factor_pre_lease_value": "PriorityFactorPreLeaseValue",
}
#: the values that can be leased: field → (expiration field, prior-value field)
LEASED = {
    "ceiling": ("ceiling_lease_expiration", "ceiling_pre_lease_value"),
    "floor": ("floor_lease_expiration", "floor_pre_lease_value"),
    "priority_factor": ("priority_factor_lease_expiration", "priority_factor_pre_lease_value"),
}


@dataclass
class CustomerRecord:
    """One ``Customer.<name>`` record: a submitter (``user@domain``) or a group (its full name)."""

    name: str
    priority: float = 0.5  # the RUP
    priority_factor: float = 0.0  # 0: not chosen yet (the accountant picks a default on first use)
    resources_used: int = 0
    weighted_resources_used: float = 0.0
    hier_weighted_resources_used: float = 0.0
    uncharged_time: float = 0.0
    weighted_uncharged_time: float = 0.0
    accumulated_usage: float = 0.0  # seconds
    weighted_accumulated_usage: float = 0.0  # weighted seconds
    begin_usage_time: float = 0.0
    last_usage_time: float = 0.0
    ceiling: float = -1.0  # -1: none
    floor: float = 0.0
    # leases, as Accountant.cpp keeps them: the absolute expiry (0 once expired) and the value to
    # restore then; None (and left out of ``to_dict``) for a value never leased
    ceiling_lease_expiration: float | None = None
    ceiling_pre_lease_value: float | None = None
    floor_lease_expiration: float | None = None
    floor_pre_lease_value: float | None = None
    priority_factor_lease_expiration: float | None = None
    priority_factor_pre_lease_value: float | None = None

    @property
    def is_group(self) -> bool:
        return "@" not in self.name

    def copy(self) -> CustomerRecord:
        return replace(self)

    def to_dict(self) -> dict[str, Any]:
        """The record with HTCondor's attribute names, plus ``Name``."""
        out: dict[str, Any] = {"Name": self.name}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "name" and value is not None:
                out[ATTRIBUTES[f.name]] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CustomerRecord:
        kwargs: dict[str, Any] = {}
        for py, attr in ATTRIBUTES.items():
            if attr in data:
                kwargs[py] = int(data[attr]) if py == "resources_used" else float(data[attr])
        return cls(name=str(data["Name"]), **kwargs)


@dataclass(frozen=True)
class AccountantSnapshot:
    """Everything the accountant keeps: the ``Accountant.`` ad's time and the customer records."""

    last_update_time: float = 0.0
    records: tuple[CustomerRecord, ...] = ()


class AccountantStore(Protocol):
    """Durable storage for the accountant, implemented by the live driver (SQLite) and tests."""

    def load(self) -> AccountantSnapshot:
        """Everything stored, as it was after the last commit."""
        ...

    def commit(
        self, last_update_time: float, changed: Sequence[CustomerRecord], deleted: Sequence[str]
    ) -> None:
        """Apply one transaction: the new update time, changed records, deleted names."""
        ...


@dataclass
class MemoryStore:
    """An ``AccountantStore`` holding serialised records in memory."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_update_time: float = 0.0
    commits: int = 0

    def load(self) -> AccountantSnapshot:
        return AccountantSnapshot(
            self.last_update_time,
            tuple(CustomerRecord.from_dict(row) for row in self.rows.values()),
        )

    def commit(
        self, last_update_time: float, changed: Sequence[CustomerRecord], deleted: Sequence[str]
    ) -> None:
        self.last_update_time = last_update_time
        for rec in changed:
            self.rows[rec.name] = rec.to_dict()
        for name in deleted:
            self.rows.pop(name, None)
        self.commits += 1
