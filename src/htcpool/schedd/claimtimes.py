"""The schedd's claims by id, with the earliest of their deadlines kept at hand.

The schedd core asks for its next deadline after every message it handles; walking every claim
for it made that cost grow with the number of claims (a 10,000-slot pool spent a tenth of its
simulated time there). ``ClaimTable`` is the claims dict the ``ClaimManager`` holds, plus a heap of
deadlines: a claim pushes its current deadline when it joins the table and whenever a field that
decides the deadline changes (``Claim`` tells its table). Entries are never updated in place;
``earliest`` drops, from the top, those of claims that left the table or whose deadline has moved
since, so what it returns is exactly the minimum of every held claim's deadline.

A timer firing looks at the claims whose deadline has come and at the claims that ask every
firing to look at them (``Timed.waiting``: an idle claim waiting for a job), not at every claim:
``due`` finds the first among the heap's entries that are due (a walk of the heap that stops
below an entry not due) and returns them in the dict's own order (a serial per key, given when
the key joins), the order a walk over every claim would meet them in.

The table also keeps which jobs its claims hold, and which they reserve (a claim activating or
running a job): the schedd asks for those sets each time it places a job on a claim or offers
jobs to the negotiator, and a walk over every claim for them cost a millisecond each time on a
10,000-slot pool. A claim tells the table when its job or state changes, with what it held and
reserved before.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, KeysView
from typing import Any, Protocol, TypeVar


class Watcher(Protocol):
    """Who a claim tells that its deadline, or the job it reserves, may have moved."""

    def touched(self, claim: Any) -> None: ...

    def jobs_moved(self, claim: Any, before: tuple[Hashable | None, Hashable | None]) -> None: ...


class Timed(Protocol):
    """What the table needs of a claim."""

    claim_id: str

    def deadline(self) -> float:
        """The earliest time a timer has something to do for this claim."""
        ...

    def watch(self, table: Watcher) -> None:
        """From now on, tell ``table`` when the deadline may have moved."""
        ...

    def waiting(self) -> bool:
        """Whether every timer firing has something to look at in this claim, due or not."""
        ...

    def reserves(self) -> Hashable | None:
        """The job this claim holds for running (activating it or running it), or None."""
        ...

    @property
    def job(self) -> Hashable | None:
        """The job the claim holds, in whatever state (requested for it, running it …), or None."""
        ...


T = TypeVar("T", bound=Timed)


class ClaimTable(dict[str, T]):
    """A dict of claims by id that also answers ``earliest()`` without walking them."""

    def __init__(self) -> None:
        super().__init__()
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        #: job → how many held claims reserve it (``Timed.reserves``), and how many hold it at all
        self._reserved: dict[Hashable, int] = {}
        self._held: dict[Hashable, int] = {}
        #: claim id → its place in the dict's order; the claims every firing looks at (``waiting``)
        self._order: dict[str, int] = {}
        self._waiting: set[str] = set()

    def __setitem__(self, claim_id: str, claim: T) -> None:
        old = self.get(claim_id)
        if old is not None:
            self._drop(self._held, old.job)
            self._drop(self._reserved, old.reserves())
        else:
            self._order[claim_id] = next(self._seq)  # a new key goes last; a replaced one keeps its place
        super().__setitem__(claim_id, claim)
        claim.watch(self)
        self._add(self._held, claim.job)
        self._add(self._reserved, claim.reserves())
        self.touched(claim)

    def __delitem__(self, claim_id: str) -> None:
        claim = self[claim_id]
        super().__delitem__(claim_id)
        del self._order[claim_id]
        self._waiting.discard(claim_id)
        self._drop(self._held, claim.job)
        self._drop(self._reserved, claim.reserves())

    def pop(self, claim_id: str, *default: Any) -> Any:
        if claim_id not in self:
            if default:
                return default[0]
            raise KeyError(claim_id)
        claim = self[claim_id]
        del self[claim_id]
        return claim

    def reserved_jobs(self) -> KeysView[Hashable]:
        """The jobs the held claims reserve, kept as claims change rather than walked for."""
        return self._reserved.keys()

    def held_jobs(self) -> KeysView[Hashable]:
        """The jobs the held claims hold in any state, kept likewise."""
        return self._held.keys()

    def jobs_moved(self, claim: T, before: tuple[Hashable | None, Hashable | None]) -> None:
        """``claim`` held and reserved the jobs ``before``; what it holds now may differ."""
        if self.get(claim.claim_id) is not claim:
            return
        held, reserved = claim.job, claim.reserves()
        if held != before[0]:
            self._drop(self._held, before[0])
            self._add(self._held, held)
        if reserved != before[1]:
            self._drop(self._reserved, before[1])
            self._add(self._reserved, reserved)

    @staticmethod
    def _add(counts: dict[Hashable, int], job: Hashable | None) -> None:
        if job is not None:
            counts[job] = counts.get(job, 0) + 1

    @staticmethod
    def _drop(counts: dict[Hashable, int], job: Hashable | None) -> None:
        if job is not None:
            left = counts[job] - 1
            if left:
                counts[job] = left
            else:
                del counts[job]

    def touched(self, claim: T) -> None:
        """``claim``'s deadline may have moved: remember its current one."""
        if self.get(claim.claim_id) is not claim:
            return  # not (or no longer) held: its deadline counts for nothing
        heapq.heappush(self._heap, (claim.deadline(), next(self._seq), claim.claim_id))
        if claim.waiting():
            self._waiting.add(claim.claim_id)
        else:
            self._waiting.discard(claim.claim_id)
        if len(self._heap) > 4 * len(self) + 64:
            self._rebuild()

    def due(self, now: float) -> list[T]:
        """The claims whose deadline is ``now`` or earlier and those ``waiting``, in the dict's order."""
        found = set(self._waiting)
        heap = self._heap
        stack = [0] if heap else []
        while stack:
            i = stack.pop()
            when, _, claim_id = heap[i]
            if when > now:
                continue  # neither it nor any entry below it is due
            claim = self.get(claim_id)
            if claim is not None and claim.deadline() == when:
                found.add(claim_id)
            stack += [j for j in (2 * i + 1, 2 * i + 2) if j < len(heap)]
        return [self[c] for c in sorted(found, key=self._order.__getitem__)]

    def earliest(self) -> float | None:
        """The earliest deadline of the held claims; None when there are none."""
        heap = self._heap
        while heap:
            when, _, claim_id = heap[0]
            claim = self.get(claim_id)
            if claim is not None and claim.deadline() == when:
                return when
            heapq.heappop(heap)  # the claim is gone, or its deadline moved (a newer entry has it)
        return None

    @property
    def entries(self) -> int:
        """How many deadlines the heap holds, stale ones included (bounded by the table's size)."""
        return len(self._heap)

    def _rebuild(self) -> None:
        """Drop the stale entries: one entry per held claim."""
        self._heap = [(c.deadline(), next(self._seq), c.claim_id) for c in self.values()]
        heapq.heapify(self._heap)
