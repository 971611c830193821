"""The event loop: order of events, armed timers, stopping."""

from __future__ import annotations

from htcpool.sim.events import EventLoop, Priority
from htcpool.sim.transport import Transport


def test_events_run_by_time_then_priority_then_insertion_order() -> None:
    loop = EventLoop(100.0)
    seen: list[str] = []
    loop.at(105, Priority.TIMER, lambda: seen.append("timer@105"))
    loop.at(105, Priority.MESSAGE, lambda: seen.append("message1@105"))
    loop.at(101, Priority.SAMPLE, lambda: seen.append("sample@101"))
    loop.at(105, Priority.MESSAGE, lambda: seen.append("message2@105"))
    loop.run()
    assert seen == ["sample@101", "message1@105", "message2@105", "timer@105"]
    assert loop.now == 105 and loop.events == 4


def test_an_event_in_the_past_runs_now() -> None:
    loop = EventLoop(50.0)
    times: list[float] = []
    loop.at(10, Priority.JOB, lambda: times.append(loop.now))
    loop.run()
    assert times == [50.0]


def test_arming_earlier_replaces_the_timer_and_later_is_ignored() -> None:
    loop = EventLoop(0.0)
    fired: list[float] = []
    owner = object()
    loop.arm(owner, 30, fired.append)
    loop.arm(owner, 40, fired.append)  # later than armed: nothing changes
    loop.arm(owner, 10, fired.append)  # earlier: rings at 10 only
    assert loop.pending == 2  # the entry at 30 stays queued, stale, until it comes up
    loop.run()
    assert fired == [10.0] and loop.pending == 0
    loop.arm(owner, 60, fired.append)
    loop.run()
    assert fired == [10.0, 60.0]


def test_run_stops_at_until_and_keeps_later_events() -> None:
    loop = EventLoop(0.0)
    seen: list[int] = []
    for t in (5, 15, 25):
        loop.at(t, Priority.JOB, lambda t=t: seen.append(t))
    loop.run(until=20)
    assert seen == [5, 15] and loop.now == 20
    loop.run()
    assert seen == [5, 15, 25]


def test_messages_arrive_after_the_delay_in_the_order_sent() -> None:
    loop = EventLoop(0.0)
    transport = Transport(loop, delay=0.5)
    got: list[tuple[float, str]] = []
    transport.register("a", lambda m: got.append((loop.now, m)))
    transport.send("a", "first")
    transport.send("a", "second")
    transport.send("nobody", "lost")
    loop.run()
    assert got == [(0.5, "first"), (0.5, "second")]
    assert transport.lost == 1 and transport.sent == 2


def test_timers_of_one_instant_fire_in_the_order_their_owners_first_armed() -> None:
    loop = EventLoop(0.0)
    fired: list[str] = []
    first, second, third = object(), object(), object()
    loop.arm(first, 50, lambda now: fired.append("first"))
    loop.arm(second, 20, lambda now: fired.append("second"))
    loop.arm(third, 10, lambda now: fired.append("third"))
    loop.run()
    loop.arm(third, 100, lambda now: fired.append("third"))  # armed first this time: ranks stay
    loop.arm(second, 100, lambda now: fired.append("second"))
    loop.arm(first, 100, lambda now: fired.append("first"))
    loop.run()
    assert fired == ["third", "second", "first", "first", "second", "third"]
    assert [loop.rank(o) for o in (first, second, third)] == [0, 1, 2]


def test_passed_says_whether_a_timer_of_the_instant_would_have_fired_already() -> None:
    loop = EventLoop(0.0)
    early, late, quiet = object(), object(), object()
    for owner in (early, quiet, late):
        loop.rank(owner)
    seen: list[tuple[str, bool]] = []

    def message(who: str) -> None:
        loop.at(loop.now, Priority.MESSAGE, lambda: seen.append((who, loop.passed(quiet))))

    loop.at(10, Priority.MESSAGE, lambda: seen.append(("queued before", loop.passed(quiet))))
    loop.arm(early, 10, lambda now: message("early timer"))
    loop.arm(late, 10, lambda now: (message("late timer"), loop.arm(early, 10, lambda n: message("early, re-armed"))))
    loop.at(10, Priority.JOB, lambda: seen.append(("job", loop.passed(quiet))))
    loop.at(11, Priority.MESSAGE, lambda: seen.append(("next instant", loop.passed(quiet))))
    loop.run()
    assert seen == [("queued before", False), ("early timer", False), ("late timer", True),
                    ("early, re-armed", True), ("job", True), ("next instant", False)]
