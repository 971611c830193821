"""SWF job dependencies: a job submitted only after the job it follows has ended, plus a think time.

An SWF line may name a preceding job (field 17, its job number) and a think time (field 18,
seconds): the user submitted this job only once the preceding one had ended, and thought that
long first. The original trace's submit time is what happened on the original system; replayed
against another pool the preceding job ends at another time, and the simulator moves the
dependent job with it (docs/simulator.md, "Input files"):

* a job whose preceding job is still queued (or itself still waiting for its own predecessor)
  waits; when that job leaves the queue (completed, or removed) at time *t*, the waiting job
  is submitted at max(its trace time, *t* + think time);
* a job whose preceding job has already left at *t* is submitted at max(its trace time,
  *t* + think time);
* a job whose preceding job was never replayed (a line skipped as partial or bad, a number not in
  the trace, or one that ended longer ago than the last ``KEPT_ENDS`` jobs) is submitted at its
  trace time, as if it had no predecessor.

The simulation tells this module what the schedd did (``submitted``, ``left``) from its job
events; ``arrive`` says what to do with an arrival. Memory: one entry per queued job of the
trace, one per waiting job, and the end times of the last ``KEPT_ENDS`` jobs that left.
"""

from __future__ import annotations

from collections.abc import Callable

from htcpool.sim.workload import Arrival

#: end times remembered for jobs that may still be named as a predecessor
KEPT_ENDS = 100_000


class Dependencies:
    """Which arrivals wait for which jobs (see the module docstring)."""

    def __init__(self, submit_at: Callable[[float, Arrival], None]) -> None:
        #: how a released arrival is submitted: at a time (seconds from the start), never earlier than now
        self.submit_at = submit_at
        self.queued: dict[int, tuple[int, int]] = {}  # job number -> (cluster, proc), while in the queue
        self.numbers: dict[tuple[int, int], int] = {}  # and back
        self.delayed: set[int] = set()  # numbers of arrivals not submitted yet (waiting or scheduled)
        self.waiting: dict[int, list[Arrival]] = {}  # predecessor number -> arrivals waiting for it
        self.ends: dict[int, float] = {}  # job number -> when it left the queue (the last KEPT_ENDS)
        #: arrivals handed to ``submit_at`` and not submitted yet (their time is known)
        self.scheduled = 0

    def arrive(self, arrival: Arrival, now: float) -> bool:
        """Whether ``arrival`` (at ``now``, seconds from the start) is submitted now; if not, it is
        held here and handed to ``submit_at`` when its time comes."""
        before = arrival.after
        if before < 0 or before == arrival.number:
            return True
        if before in self.queued or before in self.delayed:
            self.waiting.setdefault(before, []).append(arrival)
            self._delay(arrival)
            return False
        end = self.ends.get(before)
        if end is None or end + arrival.think <= now:
            return True
        self._delay(arrival)
        self._schedule(end + arrival.think, arrival)
        return False

    def _delay(self, arrival: Arrival) -> None:
        if arrival.number >= 0:
            self.delayed.add(arrival.number)

    def _schedule(self, at: float, arrival: Arrival) -> None:
        self.scheduled += 1
        self.submit_at(at, arrival)

    def submitting(self, arrival: Arrival) -> None:
        """A delayed arrival is being submitted now."""
        self.delayed.discard(arrival.number)
        self.scheduled -= 1

    def submitted(self, number: int, job: tuple[int, int]) -> None:
        """The schedd queued job ``job`` of trace job ``number``."""
        self.queued[number] = job
        self.numbers[job] = number

    def left(self, job: tuple[int, int], now: float) -> None:
        """Job ``job`` left the queue at ``now`` (seconds from the start): release its followers."""
        number = self.numbers.pop(job, None)
        if number is None:
            return
        self.queued.pop(number, None)
        self.ends[number] = now
        if len(self.ends) > KEPT_ENDS:
            del self.ends[next(iter(self.ends))]
        for arrival in self.waiting.pop(number, ()):
            self._schedule(max(arrival.time, now + arrival.think), arrival)

    @property
    def pending(self) -> int:
        """Arrivals held here, not submitted yet (waiting for a job, or for their time)."""
        return self.scheduled + sum(len(w) for w in self.waiting.values())


__all__ = ["KEPT_ENDS", "Dependencies"]
