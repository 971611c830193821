"""When the negotiator runs a cycle: its timer as a sans-I/O object.

Rules (HTCondor's manual, "condor_negotiator Configuration File Entries": ``NEGOTIATOR_INTERVAL``
and ``NEGOTIATOR_MIN_INTERVAL``; ``condor_reschedule``):

* The first cycle comes ``first_delay`` seconds after the daemon starts (one second: the
  collector has the pool's ads by then).
* Each cycle starts at most ``interval`` seconds after the previous one started.
* A reschedule request (new jobs, a freed claim) brings the next cycle forward to now; it never
  puts a cycle later than it was.
* Whatever asked for it, a cycle starts no sooner than ``min_interval`` seconds after the
  previous one ended, so a cycle that ran past its interval, or a burst of reschedule requests,
  still leaves the pool that long between cycles.

A driver arms its timer for ``next_deadline(now)`` and, when it fires, runs a cycle if ``due(now)``,
calling ``begin(now)`` before and ``end(now)`` after it (``now`` read again once the cycle is
over). A reschedule may arrive while a cycle runs: ``end`` still keeps the minimum interval.
"""

from __future__ import annotations

__all__ = ["CycleSchedule"]


class CycleSchedule:
    """The negotiator's cycle times. Every method takes the time; nothing here reads a clock."""

    def __init__(self, now: float, interval: float, min_interval: float, first_delay: float = 1.0) -> None:
        self.interval = interval
        self.min_interval = min_interval
        self.next_cycle = now + first_delay
        self.last_cycle_end = 0.0

    def next_deadline(self, now: float) -> float:
        """When the next cycle is due (in the past when it is overdue)."""
        return self.next_cycle

    def due(self, now: float) -> bool:
        return now >= self.next_cycle

    def reschedule(self, now: float) -> bool:
        """A request to negotiate soon; True when it brought the next cycle forward (the driver
        re-arms its timer then)."""
        soonest = max(now, self.last_cycle_end + self.min_interval)
        if soonest < self.next_cycle:
            self.next_cycle = soonest
            return True
        return False

    def begin(self, now: float) -> None:
        """A cycle starts now: the next one is an interval away."""
        self.next_cycle = now + self.interval

    def end(self, now: float) -> None:
        """The cycle ended now: the next one waits at least the minimum interval."""
        self.last_cycle_end = now
        self.next_cycle = max(self.next_cycle, now + self.min_interval)

    def reconfigure(self, interval: float, min_interval: float) -> None:
        """New knobs take effect from the next cycle's start on."""
        self.interval = interval
        self.min_interval = min_interval
