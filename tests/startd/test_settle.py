"""The incremental poll (``startd/settle.py``): a slot whose policy reads nothing that moves is
skipped by the periodic polls until something happens, and decides exactly as before."""

from __future__ import annotations

import pytest

from htcpool.protocol.startd import Action, Alive, SensorReadings
from htcpool.startd import Startd, settle
from tests.startd.helpers import job, make_startd, pair, run_job

NOBENCH = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\nPOLLING_INTERVAL = 5\n"


def _poll_until(startd: Startd, end: float) -> list[tuple[float, Action]]:
    """Fire the core's timers up to ``end``; the actions with their times."""
    out: list[tuple[float, Action]] = []
    while True:
        t = startd.next_deadline()
        if t is None or t > end:
            return out
        out += [(t, a) for a in startd.handle_timer(t)]


def test_a_busy_slot_under_the_default_policy_settles_and_a_message_unsettles_it() -> None:
    s = make_startd(NOBENCH, cpus=2)
    run_job(s, "slot1", job(), 10)
    _poll_until(s, 310)  # the first poll after the start (UPDATE_INTERVAL), then every 5 s
    assert {x.id_str for x in s.settled} == {"slot1", "slot2"}
    before = s.slot("slot1").ad["MyCurrentTime"]
    _poll_until(s, 340)
    assert s.slot("slot1").ad["MyCurrentTime"] == before  # skipped: not republished by the polls
    s.handle(SensorReadings(load_avg=0.0), 341)
    assert not s.settled  # any message: every slot is evaluated at the next poll
    _poll_until(s, 350)
    assert s.slot("slot1").ad["MyCurrentTime"] >= 341


@pytest.mark.parametrize("preempt", ["time() > 400", "CurrentTime > 400", "MyCurrentTime > 400",
                                     "TotalJobRunTime > 390", "KeyboardIdle < 60 || time() > 400",
                                     "MY.Busy", "MY.Busy || Cpus > 8"])
def test_a_policy_that_reads_the_clock_is_evaluated_at_every_poll(preempt: str) -> None:
    """PREEMPT turns true at 400 s with no event at all: the poll after it must see it (also
    through another attribute of the slot, ``Busy``)."""
    s = make_startd(NOBENCH + f"PREEMPT = {preempt}\nWANT_VACATE = false\nBusy = time() > 400\n"
                    "STARTD_ATTRS = Busy\n")
    run_job(s, "slot1", job(), 10)
    _poll_until(s, 399)
    assert pair(s) == ("Claimed", "Busy") and not s.settled
    _poll_until(s, 406)
    assert pair(s) != ("Claimed", "Busy")


def test_settling_changes_no_decision() -> None:
    """The same machine driven twice, with and without settling, gives the same actions and ads."""
    text = NOBENCH + "PREEMPT = (Memory < 0)\nSTART = Cpus >= 1\n"

    def drive(allow: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[object]]:
        if not allow:
            monkeypatch.setattr(settle, "settles", lambda startd, slot: False)
        s = make_startd(text, cpus=2)
        run_job(s, "slot1", job(), 10)
        trace = _poll_until(s, 700)
        run_job(s, "slot2", job(ClusterId=2), 701)
        trace += _poll_until(s, 1300)
        trace += [(1301.0, a) for a in s.handle(SensorReadings(load_avg=0.0, keyboard_idle=0.0), 1301)]
        trace += _poll_until(s, 1700)
        for t in range(1702, 2400, 37):  # the schedd's keep-alives: they leave the slots settled
            trace += [(float(t), a) for a in s.handle(Alive(s.slot("slot1").claim.id), t)]
            trace += _poll_until(s, t + 30)
        monkeypatch.undo()
        return [f"{t} {a!r}" for t, a in trace], [x.ad for x in s.slots]

    with pytest.MonkeyPatch.context() as mp:
        settled = drive(True, mp)
    with pytest.MonkeyPatch.context() as mp:
        full = drive(False, mp)
    assert any("SendAd" in line for line in settled[0])  # the update interval sent ads
    assert settled[0] == full[0]  # the same actions, the ads they carry included


def test_a_keep_alive_leaves_the_slots_settled() -> None:
    """``Alive`` only moves a claim's lease: the next poll still skips the settled slots; a
    message that changes the machine does not."""
    s = make_startd(NOBENCH, cpus=2)
    run_job(s, "slot1", job(JobLeaseDuration=600), 10)
    _poll_until(s, 310)
    assert {x.id_str for x in s.settled} == {"slot1", "slot2"}
    s.handle(Alive(s.slot("slot1").claim.id), 311)
    assert {x.id_str for x in s.settled} == {"slot1", "slot2"}
    assert s.slot("slot1").claim.lease_expires == 911
    s.handle(SensorReadings(load_avg=0.0), 312)
    assert not s.settled


def test_what_settles() -> None:
    """An unclaimed slot's poll reads IS_OWNER (not START): it settles unless IS_OWNER moves."""
    s = make_startd(NOBENCH + "START = KeyboardIdle > 60\nIS_OWNER = (START =?= False)\n")
    assert pair(s) == ("Unclaimed", "Idle")
    assert not settle.settles(s, s.slot("slot1"))  # IsOwner reads START, which reads KeyboardIdle
    plain = make_startd(NOBENCH + "START = KeyboardIdle > 60\n")
    assert settle.settles(plain, plain.slot("slot1"))
    draining_like = make_startd(NOBENCH + "STARTD_SLOT_ATTRS = State\n")
    assert not settle.settles(draining_like, draining_like.slot("slot1"))
