"""The wall clock, kept outside the language and core packages.

Cores and the ClassAd language never read the time themselves; they are
handed a clock. This is the one the live driver and the interactive API use.
"""

import time


def wall_clock() -> float:
    """Seconds since the epoch, from the operating system."""
    return time.time()


def local_zone(now: float | None = None) -> int:
    """Seconds east of UTC of the local time at ``now`` (the time zone daemons and tools print in)."""
    return time.localtime(now).tm_gmtoff
