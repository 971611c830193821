"""A daemon's limits on ClassAd evaluation, read from its configuration.

Two knobs of htcpool's own (HTCondor has no equivalent; docs/reliability.md):

* ``CLASSAD_EVALUATION_BUDGET`` (integer, default 10000): how many attribute
  references one evaluation may follow before every further one gives ERROR;
* ``CLASSAD_REGEX_TIMEOUT`` (seconds, default 0.1): how long one regular-expression
  search (or one substitution) may run before it gives ERROR.

Every daemon applies them when it starts and again on ``condor_reconfig``; the
limits are process-wide defaults (``htcpool.classad.context.set_evaluation_limits``),
so the cores' evaluation contexts take them without carrying them. A value that is
not a positive number is reported once, naming the knob and where it was set, and
the previous limit stays.
"""

from __future__ import annotations

import logging
import math

from htcpool.classad.context import (
    DEFAULT_EVALUATION_BUDGET,
    DEFAULT_REGEX_TIMEOUT,
    set_evaluation_limits,
)
from htcpool.config import Config
from htcpool.config.errors import ConfigError

log = logging.getLogger(__name__)

BUDGET_KNOB = "CLASSAD_EVALUATION_BUDGET"
REGEX_TIMEOUT_KNOB = "CLASSAD_REGEX_TIMEOUT"

#: The largest budget accepted: past it one evaluation could run for minutes.
MAX_BUDGET = 100_000_000
#: The longest regular-expression limit accepted, in seconds.
MAX_REGEX_TIMEOUT = 60.0


def read_evaluation_limits(config: Config) -> tuple[int, float, list[str]]:
    """The budget and regex time limit ``config`` asks for, and a message per bad value.

    A bad value (not a number, not positive, too large) keeps the default for that knob.
    """
    problems: list[str] = []
    budget = DEFAULT_EVALUATION_BUDGET
    timeout = DEFAULT_REGEX_TIMEOUT
    try:
        value = config.get_int(BUDGET_KNOB, default=DEFAULT_EVALUATION_BUDGET)
        if value is not None:
            if 1 <= value <= MAX_BUDGET:
                budget = value
            else:
                problems.append(f"{BUDGET_KNOB} = {_short(value)} is out of range 1 to {MAX_BUDGET}; "
                                f"using {DEFAULT_EVALUATION_BUDGET}")
    except (ConfigError, ValueError, OverflowError) as e:
        problems.append(f"{BUDGET_KNOB}: {_clip(str(e))}; using {DEFAULT_EVALUATION_BUDGET}")
    try:
        seconds = config.get_float(REGEX_TIMEOUT_KNOB, default=DEFAULT_REGEX_TIMEOUT)
        if seconds is not None:
            if math.isfinite(seconds) and 0 < seconds <= MAX_REGEX_TIMEOUT:
                timeout = seconds
            else:
                problems.append(f"{REGEX_TIMEOUT_KNOB} = {_short(seconds)} is out of range "
                                f"(0, {MAX_REGEX_TIMEOUT:g}] seconds; using {DEFAULT_REGEX_TIMEOUT:g}")
    except (ConfigError, ValueError, OverflowError) as e:
        problems.append(f"{REGEX_TIMEOUT_KNOB}: {_clip(str(e))}; using {DEFAULT_REGEX_TIMEOUT:g}")
    return budget, timeout, problems


def apply_evaluation_limits(config: Config) -> None:
    """Set this process's evaluation limits from ``config``, logging any bad knob."""
    budget, timeout, problems = read_evaluation_limits(config)
    for problem in problems:
        log.warning("%s", problem)
    set_evaluation_limits(budget=budget, regex_timeout=timeout)


def _short(value: float) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:20] + "…" + f" ({len(text)} digits)"


def _clip(message: str, most: int = 240) -> str:
    """A configuration error cut to one readable line (a 400-digit value is not echoed whole)."""
    line = " ".join(message.split())
    return line if len(line) <= most else line[: most - 1] + "…"
