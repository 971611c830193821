"""How many machines one poll may drain: DEFRAG_DRAINING_MACHINES_PER_HOUR spread over polls.

A rate is rarely a whole number of machines per DEFRAG_INTERVAL, so HTCondor's defrag
daemon (HTCondor's manual, "Defrag Daemon Configuration Options",
DEFRAG_DRAINING_MACHINES_PER_HOUR) splits it in three parts, each a whole number:

* ``per_poll`` machines every poll: ``floor(rate × interval / 3600)``;
* ``per_hour`` more once per clock hour: what is left of the rate, per hour, rounded down;
* ``per_day`` more once per day: what is still left, times 24, rounded to nearest.

So 1.5 machines per hour with a 600 s interval is 0 per poll, 1 in the first poll of
each hour and 12 in the first poll of each day (the fraction accumulates over the day).
The once-per-hour and once-per-day parts are *prorated*: a poll that starts part-way
into the hour (or day) gets its share of what is left of it, plus one interval's worth
for the time the polling granularity may have missed, rounded to nearest and never more
than the whole part. Hours and days are counted on the epoch (UTC). The first poll
after a start with no saved last poll gets only ``per_poll``. An interval over an hour
allows no draining at all; over a day there is no per-day part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOUR = 3600.0
DAY = 86400.0


@dataclass(frozen=True, slots=True)
class DrainRate:
    """DEFRAG_DRAINING_MACHINES_PER_HOUR as whole machines per poll, per hour and per day."""

    per_hour_setting: float
    interval: float
    per_poll: int
    per_hour: int
    per_day: int

    @classmethod
    def from_settings(cls, machines_per_hour: float, interval: float) -> DrainRate:
        if interval <= 0:
            return cls(0.0, interval, 0, 0, 0)
        rate = machines_per_hour / HOUR * interval
        per_poll = max(0, math.floor(rate + 0.00001))
        left_per_hour = (rate - per_poll) / interval * HOUR
        per_hour = math.floor(left_per_hour + 0.00001)
        setting = 0.0 if machines_per_hour < 0 or interval > HOUR else machines_per_hour
        per_day = math.floor((left_per_hour - per_hour) * 24.0 + 0.5)
        if per_day < 0 or interval > DAY:
            per_day = 0
        return cls(setting, interval, per_poll, per_hour, per_day)

    @property
    def allows_draining(self) -> bool:
        """False when the setting rounds up to no machine at all (or the interval exceeds an hour)."""
        return math.ceil(self.per_hour_setting) > 0

    def to_drain(self, now: float, previous_poll: float | None) -> tuple[int, float]:
        """Whole machines this poll may drain, and the same number before rounding (for the log)."""
        count = self.per_poll
        exact = float(count)
        if previous_poll is None or previous_poll <= 0:
            return count, exact
        if now // HOUR != previous_poll // HOUR:
            whole, part = prorate(self.per_hour, now % HOUR, HOUR, self.interval)
            count += whole
            exact += part
        if now // DAY != previous_poll // DAY:
            whole, part = prorate(self.per_day, now % DAY, DAY, self.interval)
            count += whole
            exact += part
        return count, exact


def prorate(n: int, elapsed: float, period: float, granularity: float) -> tuple[int, float]:
    """The share of ``n`` per ``period`` left after ``elapsed`` seconds of it, plus one
    ``granularity`` of slack: rounded to nearest, never beyond ``n``, never of the other sign."""
    fraction = (period - elapsed) / period + granularity / period
    exact = n * fraction
    answer = math.floor(exact + 0.5)
    if (n > 0 and answer > n) or (n < 0 and answer < n):
        return n, exact
    if answer * n < 0:
        return 0, exact
    return answer, exact
