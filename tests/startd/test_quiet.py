"""Quiet machines (``startd/quiet.py``): while every slot is settled and the load is steady, a
due poll only moves its own times, and the machine decides exactly what it decides with every
poll run in full."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from htcpool.protocol.startd import Action, ActivateClaim, Alive, RequestClaim, SensorReadings
from htcpool.startd import Startd, dynamic
from htcpool.startd import machine as machine_module
from tests.startd.helpers import finish, job, make_startd, run_job

NOBENCH = "RunBenchmarks = false\nPOLLING_INTERVAL = 5\n"
STATIC = NOBENCH + "SLOT_TYPE_0_PARTITIONABLE = false\n"
PSLOT = NOBENCH + "use FEATURE : PartitionableSlot\n"

Step = tuple[float, Callable[[Startd, float], list[Action]]]


def _readings(**values: Any) -> Callable[[Startd, float], list[Action]]:
    return lambda s, t: s.handle(SensorReadings(**values), t)


def _run(slot: str, cluster: int, **attrs: Any) -> Callable[[Startd, float], list[Action]]:
    def step(s: Startd, t: float) -> list[Action]:
        run_job(s, slot, job(ClusterId=cluster, **attrs), t)
        return []
    return step


def _run_dynamic(cluster: int, **attrs: Any) -> Callable[[Startd, float], list[Action]]:
    """A job claims part of the p-slot ``slot1`` and starts in the dynamic slot carved for it."""
    def step(s: Startd, t: float) -> list[Action]:
        request = job(ClusterId=cluster, **attrs)
        before = {x.name for x in s.slots}
        out = s.handle(RequestClaim(s.slot("slot1").claim.id, request), t)
        (new,) = [x for x in s.slots if x.name not in before]
        return out + s.handle(ActivateClaim(new.claim.id, request), t)
    return step


def _alive(slot: str) -> Callable[[Startd, float], list[Action]]:
    return lambda s, t: s.handle(Alive(s.slot(slot).claim.id), t)


def _finish(slot: str) -> Callable[[Startd, float], list[Action]]:
    return lambda s, t: finish(s, slot, t)


def _state(s: Startd) -> list[object]:
    """Everything a poll can change, per slot and for the machine."""
    slots = [(x.name, x.state.value, x.activity.value, str(x.ad), tuple(x.load_samples), x.condor_load,
              x.owner_load, x.accounted_at) for x in s.slots]
    return [slots, s.last_load_time, s._next_poll, s._next_update, dict(s.totals), s.drain_totals.expected_at]


def _drive(text: str, cpus: int, steps: list[Step], end: float,
           state: Callable[[Startd], list[object]] = _state) -> tuple[list[str], list[list[object]], int]:
    """The machine driven through ``steps`` with its timers fired in between; the actions with
    their times, the machine's ``state`` after every call, and how many polls were quiet."""
    s = make_startd(text, cpus=cpus)
    quiet = 0
    real = s._quiet_poll

    def counted(now: float, spell: object) -> None:
        nonlocal quiet
        quiet += 1
        real(now, spell)  # type: ignore[arg-type]

    s._quiet_poll = counted  # type: ignore[method-assign]
    trace: list[str] = []
    states: list[list[object]] = []
    pending = sorted(steps, key=lambda step: step[0])
    while True:
        t = s.next_deadline()
        if pending and (t is None or pending[0][0] <= t):
            at, fn = pending.pop(0)
            trace += [f"{at} {a!r}" for a in fn(s, at)]
        elif t is not None and t <= end:
            trace += [f"{t} {a!r}" for a in s.handle_timer(t)]
        else:
            return trace, states, quiet
        states.append(state(s))
        assert s._timers_at in (None, s.timers_deadline())  # the timers deadline kept in a quiet spell is current


SCENARIOS: dict[str, tuple[str, int, list[Step], float]] = {
    "static slots, a load ramp, jobs ending": (STATIC, 3, [
        (10, _run("slot1", 1)),
        (20, _readings(load_avg=1.0, condor_load={"slot1": 1.0})),  # 60 samples to climb: not steady
        (400, _run("slot2", 2)),
        (905, _finish("slot1")),
        (1300, _readings(load_avg=0.5, condor_load={"slot2": 0.5})),
        (2000, _finish("slot2")),
    ], 3000),
    "a partitionable slot and its dynamic slots": (PSLOT, 4, [
        (10, _run_dynamic(1)),
        (12, _run_dynamic(2, RequestCpus=2)),
        (700, _finish("slot1_1")),
        (1500, _finish("slot1_2")),
    ], 2500),
    "a lease that runs out in a quiet spell": (STATIC, 2, [
        (10, _run("slot1", 1, JobLeaseDuration=1240)),  # runs out at 1250, when a poll is due too
    ], 2000),
    "keep-alives renewing a lease in quiet spells": (STATIC, 2, [
        (10, _run("slot1", 1, JobLeaseDuration=300)),
        *[(float(t), _alive("slot1")) for t in range(250, 1900, 240)],  # the last renewal runs out at 2040
    ], 2400),
    "a policy that reads the clock never goes quiet": (STATIC + "PREEMPT = time() > 1500\nWANT_VACATE = false\n", 1, [
        (10, _run("slot1", 1)),
    ], 2000),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_quiet_polls_change_no_decision(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text, cpus, steps, end = SCENARIOS[name]
    quiet_trace, quiet_states, quiet_polls = _drive(text, cpus, steps, end)
    monkeypatch.setattr(machine_module, "quiet_spell", lambda startd, interval: None)
    full_trace, full_states, none = _drive(text, cpus, steps, end)
    assert none == 0
    assert quiet_trace == full_trace
    assert quiet_states == full_states
    assert any("SendAd" in line for line in quiet_trace)
    if "never" in name:
        assert quiet_polls == 0
    else:
        assert quiet_polls > 50, quiet_polls


def test_a_quiet_poll_publishes_and_evaluates_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    s = make_startd(STATIC, cpus=2)
    run_job(s, "slot1", job(), 10)
    while s._quiet is None:
        s.handle_timer(s.next_deadline())
    at = s.next_deadline()
    assert at == s._next_poll

    def refused(*args: object) -> None:
        raise AssertionError("a quiet poll did the work of a full one")

    with monkeypatch.context() as patched:
        for name in ("compute_machine", "publish_all", "publish_dynamic"):
            patched.setattr(dynamic, name, refused)
        assert s.handle_timer(at) == []
    assert s._next_poll == at + 5 and s.last_load_time == at
    assert s.handle(SensorReadings(load_avg=0.0), at + 1) is not None and s._quiet is None  # a message ends it


def _drive_waking(text: str, cpus: int, steps: list[Step], end: float, catch_up: bool
                  ) -> tuple[list[str], list[list[object]], int]:
    """``_drive`` with the machine woken only when more than a quiet poll is due
    (``quiet_deadline``) and the polls missed made before each step (``catch_up``), as the
    simulator's startd driver does; or, without ``catch_up``, every poll fired. The machine's
    state after each step and at ``end``, and how many times its timer fired."""
    s = make_startd(text, cpus=cpus)
    trace: list[str] = []
    states: list[list[object]] = []
    fired = 0
    pending = sorted(steps, key=lambda step: step[0])
    while True:
        t = s.quiet_deadline() if catch_up else s.next_deadline()
        if pending and (t is None or pending[0][0] <= t):
            at, fn = pending.pop(0)
            s.catch_up(at, inclusive=False)  # a step of a poll's instant comes first, as in ``_drive``
            trace += [f"{at} {a!r}" for a in fn(s, at)]
            states.append(_state(s))
        elif t is not None and t <= end:
            s.catch_up(t, inclusive=False)
            trace += [f"{t} {a!r}" for a in s.handle_timer(t)]
            fired += 1
        else:
            s.catch_up(end, inclusive=True)
            return trace, states + [_state(s)], fired


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_polls_left_out_and_caught_up_change_nothing(name: str) -> None:
    text, cpus, steps, end = SCENARIOS[name]
    woken, woken_states, wakes = _drive_waking(text, cpus, steps, end, catch_up=True)
    every, every_states, polls = _drive_waking(text, cpus, steps, end, catch_up=False)
    assert woken == every
    assert woken_states == every_states
    if "never" in name:
        assert wakes == polls
    else:
        assert wakes < polls / 2, (wakes, polls)


def test_a_quiet_machine_wakes_for_its_periodic_update_or_its_next_timer() -> None:
    s = make_startd(STATIC, cpus=2)
    run_job(s, "slot1", job(JobLeaseDuration=1240), 10)
    while s._quiet is None:
        s.handle_timer(s.next_deadline())
    spell = s._quiet
    assert spell is not None and spell.until == 1250  # the lease
    wake = s.quiet_deadline()
    due = s._next_poll
    while due < min(spell.until, s._next_update):
        due += spell.interval
    assert wake == min(due, spell.until) and wake > s._next_poll + 10 * spell.interval
    before = s._next_poll
    s.catch_up(before + 2 * spell.interval, inclusive=False)  # two polls, not the one of that instant
    assert s._next_poll == before + 2 * spell.interval and s.last_load_time == before + spell.interval
    s.catch_up(s._next_poll, inclusive=True)
    assert s._next_poll == before + 3 * spell.interval
    assert all(slot.accounted_at == before + 2 * spell.interval for slot in s.slots)
