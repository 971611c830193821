"""Counters with a lifetime total and a ``Recent`` total over a sliding window.

HTCondor's windowed statistics (the admin manual, configuration: ``STATISTICS_WINDOW_SECONDS``
and ``STATISTICS_WINDOW_QUANTUM``) keep, beside each lifetime count, the count over the last
``window`` seconds, kept as a ring of ``quantum``-second buckets: the window moves one whole
bucket at a time, so ``recent`` covers between ``window - quantum`` and ``window`` seconds.
Time is always passed in. ``Window`` is the shared timing (when the statistics began, which
bucket is current); ``RecentSum`` is one count or sum; ``publish_recent`` puts one into an ad's attributes.
"""

from __future__ import annotations

from collections import deque

DEFAULT_WINDOW = 1200
DEFAULT_QUANTUM = 240


class Window:
    """The timing shared by a collection's counters."""

    def __init__(self, started: float, window: int = DEFAULT_WINDOW, quantum: int = DEFAULT_QUANTUM) -> None:
        self.quantum = max(1, int(quantum))
        # the window is a whole number of buckets, rounded up, as HTCondor rounds it
        self.buckets = max(1, -(-max(1, int(window)) // self.quantum))
        self.started = started
        self._bucket = 0  # the index of the current bucket since ``started``

    @property
    def seconds(self) -> int:
        """The window's length in seconds (whole buckets)."""
        return self.buckets * self.quantum

    def bucket_at(self, now: float) -> int:
        return max(0, int((now - self.started) // self.quantum))

    def lifetime(self, now: float) -> int:
        """Seconds since the statistics began."""
        return max(0, int(now - self.started))

    def recent_lifetime(self, now: float) -> int:
        """Seconds the ``Recent`` values cover at ``now``."""
        into = (now - self.started) - self.bucket_at(now) * self.quantum
        full = min(self.bucket_at(now), self.buckets - 1) * self.quantum
        return max(0, int(full + into))


class RecentSum:
    """A lifetime total and the total of the last window's buckets, of real numbers."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.value = 0.0
        self._ring: deque[tuple[int, float]] = deque()  # (bucket, amount), oldest first

    def _advance(self, now: float) -> int:
        bucket = self.window.bucket_at(now)
        oldest = bucket - self.window.buckets + 1
        ring = self._ring
        while ring and ring[0][0] < oldest:
            ring.popleft()
        return bucket

    def add(self, amount: float, now: float) -> None:
        bucket = self._advance(now)
        self.value += amount
        if self._ring and self._ring[-1][0] >= bucket:  # (a late report joins the current bucket)
            self._ring[-1] = (self._ring[-1][0], self._ring[-1][1] + amount)
        else:
            self._ring.append((bucket, amount))

    def recent(self, now: float) -> float:
        self._advance(now)
        return sum(amount for _, amount in self._ring)


def publish_recent(attrs: dict[str, object], name: str, counter: RecentSum, now: float, *, lifetime: bool,
                   recent: bool, zeros: bool, integer: bool = True) -> None:
    """Put ``name`` (the lifetime value) and ``Recent<name>`` into ``attrs`` as asked; with
    ``zeros`` false, neither when both are 0."""
    total, last = counter.value, counter.recent(now)
    if not zeros and total == 0 and last == 0:
        return
    if lifetime:
        attrs[name] = int(total) if integer else float(total)
    if recent:
        attrs[f"Recent{name}"] = int(last) if integer else float(last)


__all__ = ["DEFAULT_QUANTUM", "DEFAULT_WINDOW", "RecentSum", "Window", "publish_recent"]
