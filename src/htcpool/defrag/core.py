"""The defrag daemon's decisions: when to poll, which machines to drain or cancel, its ad.

``Defrag`` is a sans-I/O core with two timers and a two-step poll (HTCondor's manual,
"Defragmenting Dynamic Slots" and "Defrag Daemon Configuration Options"):

* ``next_deadline(now)`` is the earlier of the next poll (every DEFRAG_INTERVAL; the first
  one at once, or DEFRAG_INTERVAL after the last poll saved in DEFRAG_STATE_FILE) and the
  next ad update (every DEFRAG_UPDATE_INTERVAL, the first at once);
* ``handle_timer(now)`` returns ``UpdateAd`` with the Defrag ad when an update is due and,
  when a poll is due, records the poll time (``SaveState``) and returns a ``QueryAds`` for
  the partitionable startd ads;
* ``handle(now, AdList)`` decides the poll (``decide``; ``AdsUnavailable`` instead skips it,
  statistics untouched); ``handle(now, DrainAnswer)`` counts
  the startd's answer and, when a drain was refused, tries the next candidate.

One poll, in HTCondor's order: how many machines it may drain (``rate.DrainRate``); the
survey of the ads (``survey``); statistics (draining and whole counts, arrivals; the
draining cost is worked out from the poll's ads when the ad is next published); cancels (every draining machine of this daemon that matches
DEFRAG_CANCEL_REQUIREMENTS gets ``CancelDrain``); then nothing more when the count is 0,
the rate rounds to nothing, DEFRAG_MAX_CONCURRENT_DRAINING or DEFRAG_MAX_WHOLE_MACHINES is
0 or already reached (each checked once, before drains, as HTCondor does), or a knob that
drains depend on is unusable. Otherwise the candidates, best DEFRAG_RANK first, are
walked: a machine cancelled this poll, already asked this poll, already whole, or whose
expressions failed is skipped; each other gets ``Drain`` (DEFRAG_DRAINING_SCHEDULE,
``resume`` on completion, start expression DEFRAG_DRAINING_START_EXPR, reason
``"Defrag <name>"`` and a check expression that refuses if the startd's expected draining
completion or badput grew beyond the ad's values plus HTCondor's tolerance) until as many
were accepted as the poll may drain. Refusals count as ``DrainFailures`` and move the walk
on. ``evaluate(now, ads)`` is one whole poll in one call, for the simulator and benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any

from htcpool.classad import ClassAd, EvalContext, as_int, fixed_clock
from htcpool.defrag.actions import (
    Action,
    AdsUnavailable,
    DrainAnswer,
    LogLevel,
    LogLine,
    SaveState,
    SendCancel,
    SendDrain,
)
from htcpool.defrag.rate import DrainRate
from htcpool.defrag.settings import DefragSettings
from htcpool.defrag.stats import Command, DefragStats, DrainingCost
from htcpool.defrag.survey import Slot, Survey, survey
from htcpool.protocol import AdList, QueryAds, UpdateAd
from htcpool.protocol.startd import CancelDrain, Drain, DrainCompletion, DrainSpeed

#: the slots a poll looks at (HTCondor's base constraint for defrag queries)
BASE_CONSTRAINT = "PartitionableSlot && Offline =!= true"
#: HTCondor's tolerance in the drain's check expression: badput may grow by 25 % plus 1200 cpu-seconds,
#: the completion slip by 1200 seconds, before the startd refuses the drain
BADPUT_GROWTH, NEGLIGIBLE_BADPUT, NEGLIGIBLE_SLIPPAGE = 1.25, 1200, 1200


class Phase(StrEnum):
    """Where the poll stands: waiting for its timer, or for the ads it asked for."""

    IDLE = "idle"
    AWAITING_ADS = "awaiting ads"


def state_text(last_poll: float) -> str:
    """What DEFRAG_STATE_FILE holds: the last poll time, as an old-syntax ad."""
    return f"LastPoll = {int(last_poll)}\n"


def parse_state(text: str) -> float | None:
    """The last poll time from DEFRAG_STATE_FILE's text; None when it has none."""
    for line in text.splitlines():
        name, eq, value = line.partition("=")
        if eq and name.strip().lower() == "lastpoll" and value.strip().lstrip("-").isdigit():
            return float(int(value.strip())) or None
    return None


def check_expr(ad: ClassAd, schedule: DrainSpeed) -> str | None:
    """The drain's check expression from the ad's expected completion and badput (None when the
    startd does not advertise them)."""
    kind = "Graceful" if schedule is DrainSpeed.GRACEFUL else "Quick"
    completion, badput = f"ExpectedMachine{kind}DrainingCompletion", f"ExpectedMachine{kind}DrainingBadput"
    if completion not in ad or badput not in ad:
        return None
    return (f"{completion} <= {as_int(ad.get(completion)) + NEGLIGIBLE_SLIPPAGE} && "
            f"{badput} <= {int(BADPUT_GROWTH * as_int(ad.get(badput))) + NEGLIGIBLE_BADPUT}")


class Defrag:
    """The defrag daemon's core (see the module docstring)."""

    def __init__(self, settings: DefragSettings, now: float, last_poll: float | None = None,
                 seed: int = 0) -> None:
        self.settings = settings
        self.rate = DrainRate.from_settings(settings.machines_per_hour, settings.interval)
        self.started = now
        self.stats = DefragStats(started=now, quantum=max(settings.interval, 1.0))
        self.rng = random.Random(seed)
        self.last_poll = last_poll
        self.phase = Phase.IDLE
        self.next_update = now
        self.next_poll = self._first_poll(now)
        self.daemon_attrs: dict[str, Any] = {}  # the driver's own attributes (MyAddress, Machine …)
        self._costed_ads: Sequence[ClassAd] | None = None
        self._previous_poll: float | None = last_poll
        self._prev_whole: set[str] = set()
        self._prev_draining: set[str] = set()
        self._walk: Iterator[Slot] = iter(())
        self._wanted = 0
        self._accepted = 0
        self._asked: set[str] = set()
        self._outstanding: dict[str, Slot] = {}

    def _first_poll(self, now: float) -> float | None:
        interval = self.settings.interval
        if interval <= 0:
            return None
        last = self.last_poll
        if last is not None and last <= now and now - last < interval:
            return last + interval
        return now

    # ------------------------------------------------------------------ timers
    def next_deadline(self, now: float) -> float:
        polls = self.next_poll if self.phase is Phase.IDLE and self.next_poll is not None else None
        return self.next_update if polls is None else min(polls, self.next_update)

    def handle_timer(self, now: float) -> list[Action]:
        actions: list[Action] = []
        if now >= self.next_update:
            actions.append(UpdateAd(self.ad(now)))
            self.next_update = now + self.settings.update_interval
        if self.phase is Phase.IDLE and self.next_poll is not None and now >= self.next_poll:
            actions += self._begin_poll(now)
            self.phase = Phase.AWAITING_ADS
            actions.append(QueryAds("Machine", BASE_CONSTRAINT))
        return actions

    def _begin_poll(self, now: float) -> list[Action]:
        """Record the poll before deciding it: a crash mid-poll then errs toward draining less."""
        self._previous_poll = self.last_poll
        self.last_poll = now
        self.next_poll = now + self.settings.interval
        self.stats.tick(now)
        return [SaveState(self.settings.state_file, state_text(now))] if self.settings.state_file else []

    # ------------------------------------------------------------------ messages
    def handle(self, now: float, message: AdList | AdsUnavailable | DrainAnswer) -> list[Action]:
        if isinstance(message, AdList | AdsUnavailable):
            if self.phase is not Phase.AWAITING_ADS:
                return []
            self.phase = Phase.IDLE
            if isinstance(message, AdsUnavailable):  # counts and statistics stay as they were
                return [LogLine(LogLevel.WARNING, f"Doing nothing, because the query for machine ads failed: "
                                                  f"{message.reason}")]
            return self.decide(now, message.ads)
        return self._answer(now, message)

    def evaluate(self, now: float, ads: Iterable[ClassAd]) -> list[Action]:
        """One whole poll now over ``ads`` (the driver already has them)."""
        actions = self._begin_poll(now)
        self.phase = Phase.IDLE
        return actions + self.decide(now, ads)

    def reconfigure(self, settings: DefragSettings) -> list[Action]:
        """New knobs (condor_reconfig): the rate, the timers and the statistics window follow."""
        self.settings = settings
        self.rate = DrainRate.from_settings(settings.machines_per_hour, settings.interval)
        self.stats.quantum = max(settings.interval, 1.0)
        self.next_poll = None if settings.interval <= 0 else (self.last_poll or self.started) + settings.interval
        return self.startup_lines()

    def startup_lines(self) -> list[Action]:
        """What the daemon says about its configuration when it starts or is reconfigured."""
        s, r = self.settings, self.rate
        lines: list[Action] = [LogLine(LogLevel.WARNING, f"bad configuration: {p}") for p in s.problems]
        if s.interval <= 0:
            lines.append(LogLine(LogLevel.INFO, f"DEFRAG_INTERVAL={s.interval:g}, so no pool defragmentation"))
        else:
            lines.append(LogLine(LogLevel.INFO, (
                f"polling every {s.interval:g}s; DEFRAG_DRAINING_MACHINES_PER_HOUR = {s.machines_per_hour:g}/hour"
                f" = {r.per_poll}/interval + {r.per_hour}/hour + {r.per_day}/day")))
        return lines

    # ------------------------------------------------------------------ the poll
    def decide(self, now: float, ads: Iterable[ClassAd]) -> list[Action]:
        """Decide one poll over the startd ads (see the module docstring)."""
        to_drain, exact = self.rate.to_drain(now, self._previous_poll)
        ads = ads if isinstance(ads, list | tuple) else list(ads)
        self._costed_ads = ads  # AvgDraining* are worked out from them when the ad is published
        found = survey(ads, self.settings, EvalContext(clock=fixed_clock(now)), self.rng)
        self._record(now, found)
        actions: list[Action] = [LogLine(LogLevel.WARNING, (
            f"{knob.value} evaluated to ERROR on {count} slot(s); those machines are left alone"))
            for knob, count in found.errors.items()]
        cancelled = self._cancel(now, found, actions)
        actions.append(LogLine(LogLevel.INFO, (
            f"There are currently {len(found.draining)} draining and {len(found.whole)} whole machines.")))
        why_not = self._why_not(to_drain, exact, found)
        self._walk, self._wanted, self._accepted = iter(()), 0, 0
        self._asked, self._outstanding = set(), {}
        if why_not is not None:
            actions.append(LogLine(LogLevel.INFO, f"Doing nothing, because {why_not}."))
            return actions
        skip = cancelled | found.whole | found.failed
        self._walk = (slot for slot in found.candidates if slot.machine not in skip)
        self._wanted = to_drain
        actions.append(LogLine(LogLevel.INFO, f"Looking for {to_drain} machines to drain."))
        return actions + self._next_drains(now)

    def _record(self, now: float, found: Survey) -> None:
        stats = self.stats
        stats.observe(len(found.draining), len(found.whole))
        newly = len(found.whole - self._prev_whole) + len(self._prev_draining - found.draining)
        stats.arrivals.record(now, newly)
        self._prev_whole, self._prev_draining = found.whole, found.draining

    def _cancel(self, now: float, found: Survey, actions: list[Action]) -> set[str]:
        blocked = self.settings.cancels_blocked_by
        if blocked:
            actions.append(LogLine(LogLevel.WARNING, f"Not cancelling drains, because {blocked[0]}"))
            return set()
        cancelled: set[str] = set()
        for slot in found.to_cancel:
            address = slot.ad.get("MyAddress")
            if not isinstance(address, str):
                continue
            actions.append(SendCancel(slot.machine, slot.name, address, CancelDrain()))
            actions.append(LogLine(LogLevel.INFO, f"Cancel draining of {slot.machine}."))
            self.stats.cancels.append(Command(now, slot.machine))
            cancelled.add(slot.machine)
        if cancelled:
            actions.append(LogLine(LogLevel.INFO, f"Cancelled draining of {len(cancelled)} whole machines."))
        return cancelled

    def _why_not(self, to_drain: int, exact: float, found: Survey) -> str | None:
        s = self.settings
        if s.drains_blocked_by:
            return f"{s.drains_blocked_by[0]}"
        if to_drain <= 0:
            return f"number to drain in next {s.interval:g}s is calculated to be {exact:.3f}"
        if not self.rate.allows_draining:
            return f"DEFRAG_DRAINING_MACHINES_PER_HOUR={s.machines_per_hour:g}"
        if s.max_concurrent_draining == 0:
            return "DEFRAG_MAX_CONCURRENT_DRAINING=0"
        if s.max_whole_machines == 0:
            return "DEFRAG_MAX_WHOLE_MACHINES=0"
        if 0 <= s.max_concurrent_draining <= len(found.draining):
            return (f"DEFRAG_MAX_CONCURRENT_DRAINING={s.max_concurrent_draining} and there are "
                    f"{len(found.draining)} draining machines")
        if 0 <= s.max_whole_machines <= len(found.whole):
            return f"DEFRAG_MAX_WHOLE_MACHINES={s.max_whole_machines} and there are {len(found.whole)} whole machines"
        return None

    def _next_drains(self, now: float) -> list[Action]:
        """Drain the next candidates until accepted plus outstanding drains reach the poll's count."""
        actions: list[Action] = []
        s = self.settings
        while self._accepted + len(self._outstanding) < self._wanted:
            slot = next(self._walk, None)
            if slot is None:
                break
            address = slot.ad.get("MyAddress")
            if slot.machine in self._asked or not isinstance(address, str):
                continue
            self._asked.add(slot.machine)
            self._outstanding[slot.machine] = slot
            message = Drain(s.schedule, DrainCompletion.RESUME, check_expr(slot.ad, s.schedule),
                            s.start_expr.text or None, s.drain_reason)
            actions.append(LogLine(LogLevel.INFO, f"Initiating {s.schedule.value} draining of {slot.name}."))
            actions.append(SendDrain(slot.machine, slot.name, address, message))
            self.stats.drains.append(Command(now, slot.name, s.schedule.value))
        if not self._outstanding and self._wanted:
            actions.append(LogLine(LogLevel.INFO, (
                f"Drained {self._accepted} machines (wanted to drain {self._wanted} machines).")))
            self._wanted = 0
        return actions

    def _answer(self, now: float, answer: DrainAnswer) -> list[Action]:
        if answer.accepted:
            self.stats.successes.add()
        else:
            self.stats.failures.add()
        actions: list[Action] = [LogLine(
            LogLevel.INFO if answer.accepted else LogLevel.WARNING,
            f"{answer.machine} {'accepted the drain' if answer.accepted else 'refused the drain'}"
            + (f": {answer.reason}" if answer.reason else ""))]
        if self._outstanding.pop(answer.machine, None) is None:
            return actions
        if answer.accepted:
            self._accepted += 1
        return actions + self._next_drains(now)

    # ------------------------------------------------------------------ the ad
    def ad(self, now: float) -> ClassAd:
        """The Defrag ad (HTCondor's manual, "Defrag ClassAd Attributes")."""
        ad = ClassAd({"MyType": "Defrag", "Name": self.settings.name, "DaemonStartTime": int(self.started),
                      "MyCurrentTime": int(now), "DefragInterval": int(self.settings.interval)})
        ad.update(self.daemon_attrs)
        if self._costed_ads is not None:
            cost = DrainingCost.of(self._costed_ads, EvalContext(clock=fixed_clock(now)))
            self.stats.avg_draining_badput, self.stats.avg_draining_unclaimed = cost
            self._costed_ads = None
        self.stats.publish(ad, now)
        return ad

    def state(self) -> Mapping[str, float | None]:
        """What DEFRAG_STATE_FILE keeps, as data."""
        return {"LastPoll": self.last_poll}
