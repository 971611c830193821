"""Remainder recovery for unweighted slots: whole slots out of fractional allocations, round-robin.

Rules (HTCondor 25 ``GroupEntry.cpp``, ``hgq_recover_remainders``, ``hgq_round_robin``), applied
after each allocation round's fair share when NEGOTIATOR_USE_SLOT_WEIGHTS is false:

* Bottom-up, every group gives up the fractional part of its ``allocated`` as surplus and asks for
  that much more; both are rounded to whole slots.
* At each node the whole-slot surplus gathered so far is handed out among the children that accept
  surplus and still request something, plus the node itself (with its own quota and request):
  least recently served first (a subtree's time is the earliest among its members that still
  request), then larger subtree quota, then larger subtree request, then tree order. Each pass
  gives every outstanding participant up to ``max(1, floor(surplus / outstanding))``; a child's
  grant is pushed down its subtree the same way. What is left goes up to the parent.
* The time a group was last served is the state that lives across cycles: ``RoundRobinTimes``,
  passed in to ``negotiate`` and returned in its outcome (0 for a group never served). After the
  rounds of a cycle, a group served in the last round, or whose remaining request is ≤ 0, gets the
  cycle's ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from htcpool.negotiator.groups import GroupNode, GroupTree

__all__ = ["RoundRobinTimes", "recover_remainders"]


@dataclass(frozen=True)
class RoundRobinTimes:
    """When each group (by lower-cased name) was last served by remainder recovery."""

    times: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, group: str) -> float:
        return self.times.get(group.lower(), 0.0)

    def served(self, groups: Iterable[GroupNode], served: set[int], now: float) -> RoundRobinTimes:
        """The times after a cycle at ``now``: ``served`` holds the ids of the served nodes."""
        times = dict(self.times)
        for n in groups:
            if id(n) in served or n.requested <= 0:
                times[n.name.lower()] = now
        return RoundRobinTimes(MappingProxyType(times))


def _whole(x: float) -> float:
    return float(math.floor(x + 0.5))


class _Recovery:
    def __init__(self, times: RoundRobinTimes) -> None:
        self.times = times
        self.subtree_time: dict[int, float] = {}
        self.served: set[int] = set()

    def recover(self, node: GroupNode) -> float:
        surplus = node.allocated - math.floor(node.allocated)
        node.allocated = _whole(node.allocated - surplus)
        node.requested = _whole(node.requested + surplus)
        node.subtree_requested = node.requested
        own_time = self.times.get(node.name)
        subtree_time = own_time if node.requested > 0 else math.inf
        for c in node.children:
            surplus += self.recover(c)
            if c.accept_surplus:
                node.subtree_requested += c.subtree_requested
                if c.subtree_requested > 0:
                    subtree_time = min(subtree_time, self.subtree_time[id(c)])
        self.subtree_time[id(node)] = subtree_time
        if not node.children:
            return surplus
        return self.round_robin(node, surplus)

    def round_robin(self, node: GroupNode, surplus: float) -> float:
        node.subtree_requested = float(math.floor(node.subtree_requested))
        if node.subtree_requested <= 0 or surplus < 1:
            return surplus
        # (node, time, subtree quota, remaining request); the node itself takes part as a child would
        parts: list[tuple[GroupNode, float, float, float]] = [
            (c, self.subtree_time[id(c)], c.subtree_quota, c.subtree_requested)
            for c in node.children if c.accept_surplus and c.subtree_requested > 0
        ]
        if node.requested > 0:
            parts.append((node, self.times.get(node.name), node.quota, node.requested))
        order = sorted(range(len(parts)), key=lambda j: (parts[j][1], -parts[j][2], -parts[j][3], j))
        remaining = [p[3] for p in parts]
        granted = [0.0] * len(parts)
        requested = node.subtree_requested
        while surplus >= 1 and requested > 0:
            outstanding = sum(1 for r in remaining if r > 0)
            if outstanding == 0:
                break
            amax = max(1.0, math.floor(surplus / outstanding))
            given = 0.0
            for j in order:
                if remaining[j] <= 0:
                    continue
                a = min(remaining[j], amax)
                granted[j] += a
                remaining[j] -= a
                given += a
                surplus -= a
                requested -= a
                self.served.add(id(parts[j][0]))
                if surplus < amax:
                    break
            if given < 1:
                break
        for (g, _, _, _), a in zip(parts, granted, strict=True):
            if a <= 0:
                continue
            if g is node:
                node.allocated += a
                node.requested -= a
            else:
                self.round_robin(g, a)
        node.subtree_requested = requested
        return surplus


def recover_remainders(tree: GroupTree, times: RoundRobinTimes) -> tuple[float, set[int]]:
    """Run remainder recovery over ``tree`` after ``fair_share``; return the whole-slot surplus
    nobody took and the ids of the nodes served."""
    rec = _Recovery(times)
    left = rec.recover(tree.root)
    return left, rec.served
