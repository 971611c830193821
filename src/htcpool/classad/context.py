"""What an evaluation may know of the world outside the expression.

Nothing in the ClassAd package reads the wall clock, the environment or files
on its own: the clock, the ``userMap`` provider and the choice between
HTCondor's old-ClassAd compatibility and strict evaluation travel in an
``EvalContext``. The default context reads the clock of ``htcpool.clock``; the simulator and
the tests pass their own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from htcpool.clock import wall_clock


class UserMapProvider(Protocol):
    """Resolves ``userMap(mapSetName, input)``: the groups the input maps to, or None."""

    def map_groups(self, map_set: str, user: str) -> list[str] | None: ...


@dataclass(frozen=True)
class EvalContext:
    """The world as one evaluation sees it.

    * ``clock``: returns the current time in seconds since the epoch.
    * ``strict``: HTCondor's ``STRICT_CLASSAD_EVALUATION``; when false (the default)
      ``MY`` and ``CurrentTime`` are implicit and unscoped names fall back to the
      other ad of a match.
    * ``user_maps``: backs ``userMap()``; None makes it UNDEFINED.
    * ``environ``: backs the environment helpers (``envV1ToV2`` needs none of it).
    * ``rng``: backs ``random()``.
    * ``local_zone``: seconds east of UTC for ``absTime()`` without an explicit zone.
    * ``local_zone_name``: what ``formatTime`` prints for ``%Z``.
    * ``user_home``: backs ``userHome()``: the home directory of a user, or None when
      the user is unknown; None (the default) treats every user as unknown.
    """

    clock: Callable[[], float] = wall_clock
    strict: bool = False
    user_maps: UserMapProvider | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    local_zone: int = 0
    local_zone_name: str = "UTC"
    user_home: Callable[[str], str | None] | None = None

    def time_int(self) -> int:
        return int(self.clock())


DEFAULT_CONTEXT = EvalContext()


def fixed_clock(t: float) -> Callable[[], float]:
    """A clock that always reads ``t``, for tests and simulations."""
    return lambda: t
