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

Work is bounded (docs/reliability.md). Each evaluation may follow at most
``budget`` attribute references whose expressions are not plain literals; past
that, every further reference evaluates to ERROR, so an ad whose attributes
double at each reference (``A1 = A0 + A0`` … ``A60``) ends in ERROR after a
fixed amount of work instead of 2**60 steps. A context without a budget of its
own uses the process's default, which a daemon sets once from the knob
``CLASSAD_EVALUATION_BUDGET`` (``set_evaluation_limits``); regular expressions
likewise stop after the process's ``regex_timeout`` seconds (knob
``CLASSAD_REGEX_TIMEOUT``) and give ERROR. Both defaults are far above what any
real policy needs and are not part of an evaluation's result otherwise, so the
simulator and tests replay exactly.

Many evaluations made for one request (a query's constraint over every ad, one
job against every slot) may also share a ``WorkPool``: each evaluation starts
with no more than what is left in the pool and gives back what it spent, so the
request as a whole is bounded too, not only each evaluation.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class WorkPool:
    """Attribute references that many evaluations may follow together (see the module docstring).

    ``remaining`` goes down as evaluations with this pool in their context spend it;
    once it is used up, every such evaluation meets ERROR at its first reference.
    """

    __slots__ = ("remaining",)

    def __init__(self, total: int) -> None:
        self.remaining = total

    def __repr__(self) -> str:
        return f"WorkPool(remaining={self.remaining})"


class UserMapProvider(Protocol):
    """Resolves ``userMap(mapSetName, input)``: the groups the input maps to, or None."""

    def map_groups(self, map_set: str, user: str) -> list[str] | None: ...


class LazyRandom:
    """``random.Random(seed)``, made only when the first number is drawn.

    Seeding a Mersenne Twister costs a few microseconds, and most users never draw: evaluation
    contexts (made by the thousand in a simulated pool; few expressions call ``random()``),
    configuration reads and submit descriptions (``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are
    rare). The numbers drawn are exactly those of ``random.Random(seed)``.
    """

    __slots__ = ("_rng", "seed")

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng: random.Random | None = None

    @property
    def seeded(self) -> bool:
        """Whether the generator has been made (a number was drawn)."""
        return self._rng is not None

    def _made(self) -> random.Random:
        rng = self._rng
        if rng is None:
            rng = self._rng = random.Random(self.seed)
        return rng

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        return self._made().randrange(start, stop, step)

    def getrandbits(self, k: int) -> int:
        return self._made().getrandbits(k)

    def random(self) -> float:
        return self._made().random()


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
    * ``budget``: how many attribute references one evaluation may follow before they
      give ERROR; None (the default) takes the process's default (``evaluation_budget``).
    * ``pool``: a ``WorkPool`` shared by the evaluations of one request, or None.
    """

    clock: Callable[[], float] | None = None
    strict: bool = False
    user_maps: UserMapProvider | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    rng: random.Random | LazyRandom = field(default_factory=LazyRandom)
    local_zone: int = 0
    local_zone_name: str = "UTC"
    user_home: Callable[[str], str | None] | None = None
    budget: int | None = None
    pool: WorkPool | None = None

    def time_int(self, reader: str = "time()") -> int:
        """The clock's reading in whole seconds; ``reader`` names what asked, for the error."""
        clock = self.clock
        if clock is None:
            from htcpool.classad.scope import NoClock

            raise NoClock(f"{reader} reads the current time, and the evaluation was given no clock "
                              "(pass EvalContext(clock=...))")
        return int(clock())


#: Attribute references one evaluation may follow (``CLASSAD_EVALUATION_BUDGET``): a
#: Requirements or policy of a real pool follows tens to a few hundred; ten thousand take
#: 10 to 25 ms of this interpreter's time, which bounds one evaluation of a hostile ad.
DEFAULT_EVALUATION_BUDGET = 10_000

#: Seconds one regular-expression search may run (``CLASSAD_REGEX_TIMEOUT``) before
#: it gives ERROR: a real pattern over an attribute takes microseconds.
DEFAULT_REGEX_TIMEOUT = 0.1


class _Limits:
    """The process's evaluation limits; a daemon sets them from its configuration.

    A deliberate exception to the project's "no global state" rule (docs/reliability.md):
    every core builds its own evaluation contexts in hundreds of places, and a limit that
    had to be carried into each of them would be missed in one. These two values are
    only ceilings on work, never an input to a decision a test or the simulator replays:
    an evaluation that stays within them gives the same answer whatever they are set to.
    An ``EvalContext(budget=...)`` still overrides the default for one evaluation.
    """

    budget = DEFAULT_EVALUATION_BUDGET
    regex_timeout = DEFAULT_REGEX_TIMEOUT


def set_evaluation_limits(budget: int | None = None, regex_timeout: float | None = None) -> None:
    """Set the process's default work budget and regular-expression time limit.

    None leaves a limit as it is. Values must be positive; the caller (the daemon
    reading ``CLASSAD_EVALUATION_BUDGET``/``CLASSAD_REGEX_TIMEOUT``) reports bad ones.
    """
    if budget is not None:
        if budget < 1:
            raise ValueError(f"evaluation budget must be at least 1, not {budget}")
        _Limits.budget = budget
    if regex_timeout is not None:
        if not regex_timeout > 0:
            raise ValueError(f"regular-expression time limit must be positive, not {regex_timeout}")
        _Limits.regex_timeout = regex_timeout


def evaluation_budget() -> int:
    """The process's default budget of attribute references per evaluation."""
    return _Limits.budget


def regex_timeout() -> float:
    """The process's limit, in seconds, on one regular-expression search."""
    return _Limits.regex_timeout


#: How many evaluations' budgets one request's ``WorkPool`` holds (``request_pool``): a query
#: over 10,000 ads of ordinary constraints spends a few per cent of it.
REQUEST_BUDGET_FACTOR = 100


def request_pool() -> WorkPool:
    """A ``WorkPool`` for the evaluations of one request (a query over many ads): the process's
    budget times ``REQUEST_BUDGET_FACTOR`` (a million references by default, about a second)."""
    return WorkPool(_Limits.budget * REQUEST_BUDGET_FACTOR)


#: The context of an evaluation given none: old-ClassAd semantics, no clock.
DEFAULT_CONTEXT = EvalContext()


def fixed_clock(t: float) -> Callable[[], float]:
    """A clock that always reads ``t``, for cores (their ``now``), simulations and tests."""
    return lambda: t
