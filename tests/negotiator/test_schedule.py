"""The cycle timer: interval from the start of a cycle, reschedule, the minimum gap after a cycle."""

from __future__ import annotations

from htcpool.negotiator import CycleSchedule


def test_cycles_come_an_interval_after_the_previous_start() -> None:
    s = CycleSchedule(100.0, interval=60.0, min_interval=5.0)
    assert s.next_deadline(100.0) == 101.0 and not s.due(100.5) and s.due(101.0)
    s.begin(101.0)
    s.end(103.0)  # a two-second cycle
    assert s.next_deadline(103.0) == 161.0


def test_a_cycle_longer_than_its_interval_still_leaves_the_minimum_gap() -> None:
    s = CycleSchedule(0.0, interval=10.0, min_interval=5.0)
    s.begin(1.0)
    s.end(30.0)
    assert s.next_deadline(30.0) == 35.0


def test_reschedule_brings_the_cycle_forward_but_not_closer_than_the_minimum_gap() -> None:
    s = CycleSchedule(0.0, interval=60.0, min_interval=5.0)
    s.begin(1.0)
    s.end(2.0)
    assert s.reschedule(3.0) and s.next_deadline(3.0) == 7.0
    assert s.reschedule(20.0) is False and s.next_deadline(20.0) == 7.0  # never later
    s.begin(7.0)
    s.end(8.0)
    assert s.reschedule(30.0) and s.next_deadline(30.0) == 30.0  # long after: at once


def test_a_reschedule_during_a_cycle_waits_for_the_minimum_gap_after_it() -> None:
    s = CycleSchedule(0.0, interval=60.0, min_interval=5.0)
    s.begin(1.0)
    assert s.reschedule(2.0) and s.next_deadline(2.0) == 5.0  # from the previous end (none: 0 + 5)
    s.end(10.0)
    assert s.next_deadline(10.0) == 15.0


def test_reconfigure_applies_from_the_next_start() -> None:
    s = CycleSchedule(0.0, interval=60.0, min_interval=5.0)
    s.begin(1.0)
    s.reconfigure(20.0, 1.0)
    s.end(2.0)
    assert s.next_deadline(2.0) == 61.0
    s.begin(61.0)
    assert s.next_deadline(61.0) == 81.0
