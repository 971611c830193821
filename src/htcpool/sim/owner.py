"""Owner activity on simulated machines: the hours a machine's owner works at its keyboard.

A desktop pool's startd policy reads ``KeyboardIdle`` and ``ConsoleIdle`` (HTCondor's
``POLICY : Desktop``: start a job only after 15 idle minutes, suspend it when the owner comes
back …). A line of the machine file may give its machines an owner with
``OWNER_ACTIVE=HH:MM-HH:MM[,HH:MM-HH:MM…]``: every simulated day, within each period (of the
simulated clock's time of day, UTC; a period may run past midnight, ``22:00-02:00``) the owner
uses keyboard and console; outside them, nobody touches the machine.

The machine's driver tells its startd core what its sensors would: a ``SensorReadings`` with
the seconds since the last touch (``keyboard_idle``, ``console_idle``) at the start of the
simulation, every ``TOUCH_INTERVAL`` seconds while the owner works (so ``KeyboardIdle`` stays
under it, as it does under a typing owner), and at each period's end (the last touch), after
which the idle time grows with the clock. Without ``OWNER_ACTIVE`` a machine has no owner: its
idle time starts at a year (``startd_driver.IDLE_FOR``) and grows (docs/simulator.md, "Input files").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DAY = 86400.0
#: seconds between two touches of a working owner
TOUCH_INTERVAL = 30.0
_PERIOD = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$")


@dataclass(frozen=True)
class OwnerActivity:
    """Daily periods of owner activity, each (start, end) in seconds of the day; end may be
    below start for a period past midnight."""

    periods: tuple[tuple[float, float], ...]

    @classmethod
    def parse(cls, text: str) -> OwnerActivity:
        """``HH:MM-HH:MM[,…]``; raises ValueError with the reason."""
        periods = []
        for item in text.split(","):
            m = _PERIOD.match(item.strip())
            if m is None:
                raise ValueError(f"{item.strip()!r} is not a period HH:MM-HH:MM")
            h1, m1, h2, m2 = (int(g) for g in m.groups())
            if h1 > 24 or h2 > 24 or m1 > 59 or m2 > 59:
                raise ValueError(f"{item.strip()!r} is not a time of day")
            start, end = (h1 * 3600 + m1 * 60) % DAY, (h2 * 3600 + m2 * 60) % DAY
            if start == end:
                raise ValueError(f"{item.strip()!r} is empty")
            periods.append((float(start), float(end)))
        return cls(tuple(periods))

    def _windows(self, t: float) -> list[tuple[float, float]]:
        """The periods of the day before, of ``t``'s day and of the next, as absolute times."""
        day = t - t % DAY
        out = []
        for offset in (-DAY, 0.0, DAY):
            for start, end in self.periods:
                begin = day + offset + start
                out.append((begin, begin + (end - start) % DAY))
        return sorted(out)

    def active(self, t: float) -> bool:
        return any(begin <= t < end for begin, end in self._windows(t))

    def last_touch(self, t: float) -> float | None:
        """The latest time at or before ``t`` the owner touched the machine (``t`` while active);
        None when no period has begun by ``t`` within a day."""
        if self.active(t):
            return t
        ends = [end for _, end in self._windows(t) if end <= t]
        return max(ends) if ends else None

    def next_change(self, t: float) -> float:
        """The next time after ``t`` a period begins or ends."""
        return min(x for window in self._windows(t) for x in window if x > t)


__all__ = ["TOUCH_INTERVAL", "OwnerActivity"]
