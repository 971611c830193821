"""Flocking: when a schedd's submitters are advertised to other pools, and to which.

The HTCondor manual, "Connecting HTCondor Pools with Flocking": a job flocks to another pool
only when it cannot run in its own. The schedd lists the other pools' collectors in
``FLOCK_COLLECTOR_HOSTS`` (by default ``$(FLOCK_TO)``), in the order it tries them, and keeps a
*flock level* per submitter: how many of those pools see the submitter's ad (and so whose
negotiators ask this schedd for the submitter's jobs). The rule, as htcpool reads HTCondor's:

* a submitter starts at ``MIN_FLOCK_LEVEL`` (default 0: its own pool only);
* while it has idle jobs and none of its jobs has started for a whole ``SCHEDD_INTERVAL``
  (no pool it is advertised in found it a slot), its level rises by ``FLOCK_INCREMENT``
  (default 1), once per interval, up to the number of flock pools;
* a job of it starting (in any pool) restarts that wait;
* once it has no idle jobs its level falls back to ``MIN_FLOCK_LEVEL``; the pools it leaves get
  its ad once more, with no idle jobs, so that their negotiators stop asking at once.

The schedd's own ``Scheduler`` ad goes to as many flock collectors as its farthest-flocking
submitter reaches (``Flocking.reach``): the other pool's startds look the schedd up by its name
there, so schedds that flock must have names unique across the pools (``SCHEDD_NAME``).

Pure: the caller gives each Submitter ad's counts and the time (``Flocking.note``); the answer is
how many of the flock collectors, in order, get the ad. A knob that cannot be used is reported
in ``FlockSettings.problems`` and its default used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FlockSettings:
    """The schedd's flocking knobs."""

    collectors: tuple[str, ...] = ()  # FLOCK_COLLECTOR_HOSTS entries (host[:port]), in order
    increment: int = 1  # FLOCK_INCREMENT
    min_level: int = 0  # MIN_FLOCK_LEVEL
    interval: float = 300.0  # SCHEDD_INTERVAL: how long unserved idle jobs wait per level
    problems: tuple[str, ...] = ()


def host_list(text: str | None) -> tuple[str, ...]:
    """The entries of a comma or space separated host list (``FLOCK_TO``, ``FLOCK_FROM`` …)."""
    return tuple(word for word in re.split(r"[\s,]+", text or "") if word)


def flock_settings(get: Callable[[str], str | None], interval: float) -> FlockSettings:
    """The flocking knobs through ``get`` (the configuration's value or HTCondor's default)."""
    problems: list[str] = []
    collectors = host_list(get("FLOCK_COLLECTOR_HOSTS") or get("FLOCK_TO"))

    def number(knob: str, default: int, least: int) -> int:
        text = (get(knob) or "").strip()
        if not text:
            return default
        try:
            value = int(text)
        except ValueError:
            problems.append(f"{knob} = {text!r} is not an integer; using {default}")
            return default
        if value < least:
            problems.append(f"{knob} = {value} is below {least}; using {default}")
            return default
        return value

    increment = number("FLOCK_INCREMENT", 1, 1)
    min_level = min(number("MIN_FLOCK_LEVEL", 0, 0), len(collectors))
    return FlockSettings(collectors, increment, min_level, max(1.0, float(interval)), tuple(problems))


@dataclass
class _Submitter:
    level: int
    waiting_since: float | None = None  # idle and unserved since then
    running: int = 0
    advertised: int = 0  # how many flock collectors got its last ad


@dataclass
class Flocking:
    """Each submitter's flock level (module docstring)."""

    settings: FlockSettings
    submitters: dict[str, _Submitter] = field(default_factory=dict)

    def level(self, submitter: str) -> int:
        found = self.submitters.get(submitter)
        return found.level if found is not None else self.settings.min_level

    def note(self, submitter: str, idle: int, running: int, now: float) -> int:
        """The submitter's counts in the ad it advertises at ``now``; returns how many flock
        collectors (the first ones of ``settings.collectors``) get this ad."""
        s = self.settings
        if not s.collectors:
            return 0
        state = self.submitters.setdefault(submitter, _Submitter(s.min_level))
        if idle <= 0:
            state.level, state.waiting_since = s.min_level, None
        elif state.waiting_since is None or running > state.running:
            state.waiting_since = now  # idle from now on, or a job of it just started
        elif now - state.waiting_since >= s.interval and state.level < len(s.collectors):
            state.level = min(len(s.collectors), state.level + s.increment)
            state.waiting_since = now
        state.running = running
        reach = max(state.level, state.advertised)  # pools it just left hear of it once more
        state.advertised = state.level
        if idle <= 0 and running <= 0 and state.level == s.min_level:
            del self.submitters[submitter]
        return reach

    def reach(self) -> int:
        """How many flock collectors get the schedd's own ad: as many as its farthest-flocking
        submitter reaches (their startds find the schedd by its name there)."""
        return max((state.advertised for state in self.submitters.values()), default=0)

    def reconfigure(self, settings: FlockSettings) -> None:
        """New knobs: levels stay, within the new number of flock pools."""
        self.settings = settings
        for state in self.submitters.values():
            state.level = max(settings.min_level, min(state.level, len(settings.collectors)))


__all__ = ["FlockSettings", "Flocking", "flock_settings", "host_list"]
