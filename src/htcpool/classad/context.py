"""What an evaluation may know of the world outside the expression.

Nothing in the ClassAd package reads the wall clock, the environment or files
on its own: the clock, the ``userMap`` provider and the choice between
HTCondor's old-ClassAd compatibility and strict evaluation travel in an
``EvalContext``.

There is no default clock. HTCondor always evaluates against the time of the
process doing the evaluation, so whoever evaluates must say which time that is:
a daemon's core passes the ``now`` it was handed, the simulator its virtual
time, a tool the wall clock (``htcpool.clock.wall_clock``, read at the tool's
boundary), a test a ``fixed_clock``. An evaluation that needs the time (``time()``,
``CurrentTime``, ``currentTime()``, ``dayTime()``, ``absTime()`` and
``formatTime()`` without a time) under a context without a clock cannot
complete: the public API raises ``ClassAdEvaluationError`` saying which
function asked, so a caller that forgot the clock fails loudly instead of
silently reading some time. Evaluations that never look at the time need no
clock.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class UserMapProvider(Protocol):
    """Resolves ``userMap(mapSetName, input)``: the groups the input maps to, or None."""

    def map_groups(self, map_set: str, user: str) -> list[str] | None: ...


@dataclass(frozen=True)
class EvalContext:
    """The world as one evaluation sees it.

    * ``clock``: returns the current time in seconds since the epoch; None (the
      default) means the evaluation has no clock, and reading the time fails.
    * ``strict``: HTCondor's ``STRICT_CLASSAD_EVALUATION``; when false (the default)
      ``MY`` and ``CurrentTime`` are implicit and unscoped names fall back to the
      other ad of a match.
    * ``user_maps``: backs ``userMap()``; None makes it UNDEFINED.
    * ``environ``: backs the environment helpers (``envV1ToV2`` needs none of it).
    * ``rng``: backs ``random()``; seeded, so evaluations replay.
    * ``local_zone``: seconds east of UTC for ``absTime()`` without an explicit zone.
    * ``local_zone_name``: what ``formatTime`` prints for ``%Z``.
    * ``user_home``: backs ``userHome()``: the home directory of a user, or None when
      the user is unknown; None (the default) treats every user as unknown.
    """

    clock: Callable[[], float] | None = None
    strict: bool = False
    user_maps: UserMapProvider | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    local_zone: int = 0
    local_zone_name: str = "UTC"
    user_home: Callable[[str], str | None] | None = None

    def time_int(self, reader: str = "time()") -> int:
        """The clock's reading in whole seconds; ``reader`` names what asked, for the error."""
        clock = self.clock
        if clock is None:
            from htcpool.classad.scope import NoClock

            raise NoClock(f"{reader} reads the current time, and the evaluation was given no clock "
                              "(pass EvalContext(clock=...))")
        return int(clock())


#: The context of an evaluation given none: old-ClassAd semantics, no clock.
DEFAULT_CONTEXT = EvalContext()


def fixed_clock(t: float) -> Callable[[], float]:
    """A clock that always reads ``t``, for cores (their ``now``), simulations and tests."""
    return lambda: t
