"""The accountant's state at the start of a simulation, from ``condor_userprio -long`` output.

A live pool's priorities are not configuration: they are the accountant's records, which an
administrator reads with ``condor_userprio -long`` (``htcpool userprio -long``) and changes with
``condor_userprio -setfactor``, ``-setprio``, ``-setceiling`` … A simulation that should start from
today's pool starts from that output (``htcpool sim --userprio FILE``); to try a new priority
factor, change ``PriorityFactor`` in a copy of the file, as ``-setfactor`` would.

The file is ads in the long form (``Name = value`` lines), separated by blank lines; each ad with
a ``Name`` becomes a customer record (``negotiator.records``: a user ``user@domain`` or a group).
``Priority`` in that output is the effective priority (real priority × factor), so the real
priority is ``Priority / PriorityFactor``. The simulated pool starts with no claims, so
``ResourcesUsed`` and ``WeightedResourcesUsed`` start at 0, and the time of the output
(``LastUpdate``, the newest of its ads) becomes the simulation's start: the records' own times
(``BeginUsageTime``, ``LastUsageTime``, lease expirations) move with it, so ages and leases are
what they were when the output was taken. Attributes the file does not give keep a new record's
values (a factor of 0 means "not chosen yet": the accountant's default applies). See
docs/simulator.md, "Input files".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from htcpool.classad import ClassAdError, as_number, parseOne
from htcpool.negotiator.records import ATTRIBUTES, AccountantSnapshot, CustomerRecord
from htcpool.sim.errors import SimInputError
from htcpool.sim.workload import ad_blocks

#: record fields holding absolute times, moved to the simulation's start with the output's time
TIME_FIELDS = ("begin_usage_time", "last_usage_time", "ceiling_lease_expiration",
               "floor_lease_expiration", "priority_factor_lease_expiration")


def read_userprio(path: Path, start: float) -> AccountantSnapshot:
    """The records of ``path`` as the accountant's state at ``start`` (the simulation's epoch)."""
    try:
        with path.open() as f:
            parsed = [_record(path, line, block) for line, block in ad_blocks(f)]
    except OSError as e:
        raise SimInputError(path, None, f"cannot read the userprio file: {e.strerror}") from None
    if not parsed:
        raise SimInputError(path, None, "no accounting ads (expected condor_userprio -long output)")
    taken = max((t for _, t in parsed if t is not None), default=start)
    shift = start - taken
    records = []
    for data, _ in parsed:
        for name in TIME_FIELDS:
            if data.get(name):
                data[name] = float(data[name]) + shift
        records.append(CustomerRecord(**data))
    return AccountantSnapshot(start, tuple(records))


def _record(path: Path, line: int, block: list[str]) -> tuple[dict[str, Any], float | None]:
    try:
        ad = parseOne("[" + ";".join(block) + "]")
    except (ClassAdError, ValueError) as e:
        raise SimInputError(path, line, f"not an accounting ad: {e}") from None
    name = ad.get("Name")
    if not isinstance(name, str) or not name:
        raise SimInputError(path, line, "an accounting ad without a Name")
    data: dict[str, Any] = {"name": name}
    for field, attr in ATTRIBUTES.items():
        if attr not in ad:
            continue
        value = as_number(ad.get(attr))
        if value is None:
            raise SimInputError(path, line, f"{attr} of {name} is not a number")
        data[field] = int(value) if field == "resources_used" else float(value)
    factor = data.get("priority_factor", 0.0)
    if factor < 0 or (factor == 0 and "priority" in data):
        raise SimInputError(path, line, f"PriorityFactor of {name} must be positive")
    if "priority" in data:
        data["priority"] = data["priority"] / factor  # the output's Priority is the effective one
    data["resources_used"] = 0
    data["weighted_resources_used"] = data["hier_weighted_resources_used"] = 0.0
    taken = as_number(ad.get("LastUpdate"))
    return data, None if taken is None else float(taken)


__all__ = ["read_userprio"]
