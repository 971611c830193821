"""The simulator's virtual clock and event loop.

Events wait on one binary heap as ``(time, priority, rank, seq, item)``: the earliest time
first, at equal times the lower priority number first, then the lower rank, then the order in
which they were scheduled (``seq``, an insertion counter), so a run replays exactly, whatever the
items are. This is SimPy's scheme (its ``Environment`` keeps ``(time, priority, seq, item)``)
with one addition: the timers of one instant fire in a fixed order of their owners (``rank``:
the order in which the owners first armed a timer), not in the order in which they were armed.
So where an owner's timer would stand among the events of an instant does not depend on when it
was armed, and a driver may leave out timers that would change nothing but the owner's own
state and work their effect out later, knowing whether they would have fired before the event
at hand (``passed``): a quiet startd's polls (``sim/startd_driver.py``). htcpool keeps its own
heap because it measured faster for this load (docs/performance.md, "Simulator": 2.1–2.3 µs
per event against SimPy 4.1's 5.8–8.4 µs for scheduling and running 200,000 timed callbacks).

The clock moves only when an event is taken: ``now`` is the time of the event being run.
Nothing here reads the wall clock or sleeps. Timers of the daemons' cores are kept as one
armed time per owner (``arm``): re-arming for the same or a later time while an earlier entry
waits costs nothing, and a stale entry (its owner re-armed since) is dropped when it comes up.

The order within one instant (``Priority``) models a live pool, where nothing happens at quite
the same time: workload arrivals of an instant are all queued before a core's timer sees them
(a trace's batch is one submission), but each modelled job's end or usage report is settled,
its messages and the timers they make due (a negotiation cycle asked for by a freed slot)
included, before the next job event of the same instant. So jobs of equal length started
together free their slots one at a time, as a live startd's do.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from enum import IntEnum
from typing import Any

Callback = Callable[[], None]


class Priority(IntEnum):
    """What runs first among events of the same instant."""

    MESSAGE = 0  # messages between daemons, in the order they were sent
    ARRIVAL = 1  # workload arrivals: all of one instant are queued before a timer sees them
    TIMER = 2  # the cores' timers: they see every message of their instant first
    JOB = 3  # modelled jobs ending and reporting: one at a time, each settled, timers included
    SAMPLE = 4  # measurements, after everything of their instant


class EventLoop:
    """A heap of timed callbacks and the virtual time."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.events = 0
        self._heap: list[tuple[float, int, int, int, Any]] = []
        self._seq = itertools.count()
        self._armed: dict[object, float] = {}
        self._ranks: dict[object, int] = {}
        #: the time, priority and rank of the latest event of this instant taken that was not a
        #: message: an event of the instant queued before would have been taken by now, though a
        #: timer armed for the instant meanwhile may come after it with a lower rank
        self._frontier: tuple[float, int, int] = (start, 0, 0)

    def at(self, time: float, priority: Priority, callback: Callback) -> None:
        """Run ``callback`` at ``time`` (never earlier than now)."""
        heapq.heappush(self._heap, (max(time, self.now), priority, 0, next(self._seq), callback))

    def arm(self, owner: object, time: float | None, fire: Callable[[float], None]) -> None:
        """Make sure ``fire(now)`` runs at ``time`` for ``owner``'s timer (None: no timer)."""
        if time is None:
            return
        time = max(time, self.now)
        armed = self._armed.get(owner)
        if armed is not None and armed <= time:
            return
        self._armed[owner] = time

        def ring() -> None:
            if self._armed.get(owner) != time:
                return  # re-armed earlier since, and that entry rang already or will
            del self._armed[owner]
            fire(self.now)

        heapq.heappush(self._heap, (time, Priority.TIMER, self.rank(owner), next(self._seq), ring))

    def rank(self, owner: object) -> int:
        """``owner``'s place among the timers of one instant (the order of first arming)."""
        rank = self._ranks.get(owner)
        if rank is None:
            rank = self._ranks[owner] = len(self._ranks)
        return rank

    def passed(self, owner: object) -> bool:
        """Whether a timer of ``owner`` due now, waiting since before this instant, would have
        fired before the event being handled: yes when an event of this instant of a later
        priority, or a timer of a later rank, was taken already (the frontier)."""
        time, priority, rank = self._frontier
        if time != self.now:
            return False
        return priority > Priority.TIMER or (priority == Priority.TIMER and rank > self.rank(owner))

    @property
    def pending(self) -> int:
        """How many events wait (stale timer entries included)."""
        return len(self._heap)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def step(self) -> bool:
        """Run the earliest event; False when none is left."""
        if not self._heap:
            return False
        time, priority, rank, _, callback = heapq.heappop(self._heap)
        self.now = time
        if priority:  # not a message: the frontier moves on, never back
            frontier = self._frontier
            if time != frontier[0] or priority > frontier[1] or (priority == frontier[1] and rank > frontier[2]):
                self._frontier = (time, priority, rank)
        self.events += 1
        callback()
        return True

    def run(self, until: float | None = None, stop: Callable[[], bool] | None = None,
            every: int = 0, tick: Callback | None = None) -> None:
        """Run events until none is left, the next is past ``until``, or ``stop()`` is true.

        ``tick`` is called after every ``every`` events (a progress report)."""
        heap = self._heap
        while heap:
            if until is not None and heap[0][0] > until:
                self.now = until
                return
            self.step()
            if stop is not None and stop():
                return
            if tick is not None and every and self.events % every == 0:
                tick()


__all__ = ["Callback", "EventLoop", "Priority"]
