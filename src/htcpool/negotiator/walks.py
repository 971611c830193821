"""Walks over the sorted candidate lists of one request: cursors merged through a heap.

The matchmaker (``matchlist``) sorts the candidate classes of an (autocluster, token) once, as one
list per match class. Each (submitter, autocluster, rank-only flag) walks those lists with its own
``Cursor`` per list; a ``Walk`` merges the cursors' heads through a heap, so the next candidate
costs O(log lists). Slots taken meanwhile are skipped lazily: a cursor advances past classes with
no available slot, and a consumption-policy p-slot whose resources changed is re-checked with the
cursor's ``verify`` callback before it is offered again.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from htcpool.negotiator.pslots import NegKey
from htcpool.negotiator.slotclasses import FullClass, SlotTable

__all__ = ["Cursor", "Walk"]


class Cursor:
    """A walk over one sorted list of classes, for one (submitter, autocluster)."""

    __slots__ = ("entries", "pos", "cp_pos", "verify")

    def __init__(self, entries: list[tuple[NegKey, FullClass]], verify: Callable[[int], bool]) -> None:
        self.entries = entries
        self.pos = 0
        self.cp_pos: dict[int, int] = {}
        self.verify = verify

    def head(self, table: SlotTable) -> tuple[NegKey, int] | None:
        entries, available = self.entries, table.available
        while self.pos < len(entries):
            key, f = entries[self.pos]
            if not f.consumption:
                idx = f.head(available)
            else:
                idx = self._cp_head(f, table)
            if idx is not None:
                return key, idx
            self.pos += 1
        return None

    def _cp_head(self, f: FullClass, table: SlotTable) -> int | None:
        f.head(table.available)
        p = max(self.cp_pos.get(f.id, 0), f.pos)
        slots = f.slots
        while p < len(slots):
            i = slots[p]
            if table.available[i] and (not table.changed[i] or self.verify(i)):
                break
            p += 1
        self.cp_pos[f.id] = p
        return slots[p] if p < len(slots) else None


class Walk:
    """The candidate heap of one (submitter, autocluster, rank-only flag)."""

    __slots__ = ("heap",)

    def __init__(self, cursors: list[Cursor], table: SlotTable) -> None:
        self.heap: list[tuple[NegKey, int, int, Cursor]] = []
        for seq, c in enumerate(cursors):
            h = c.head(table)
            if h is not None:
                self.heap.append((h[0], h[1], seq, c))
        heapq.heapify(self.heap)

    def peek(self, table: SlotTable) -> tuple[NegKey, int] | None:
        """The head candidate (key, slot index), with stale heads refreshed or dropped."""
        heap = self.heap
        while heap:
            key, idx, seq, cur = heap[0]
            h = cur.head(table)
            if h is None:
                heapq.heappop(heap)
            elif h[1] != idx or h[0] != key:
                heapq.heapreplace(heap, (h[0], h[1], seq, cur))
            else:
                return key, idx
        return None
