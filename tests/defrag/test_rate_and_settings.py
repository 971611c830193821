"""DEFRAG_DRAINING_MACHINES_PER_HOUR spread over polls, and every DEFRAG_* knob read from the
configuration with HTCondor's defaults (HTCondor's manual, "Defrag Daemon Configuration Options")."""

from __future__ import annotations

from htcpool.defrag import DrainRate, Knob, prorate
from htcpool.protocol.startd import DrainSpeed
from tests.defrag.helpers import T0, settings


def test_rate_splits_into_whole_machines_per_poll_hour_and_day() -> None:
    """DEFRAG_DRAINING_MACHINES_PER_HOUR: the manual's example of 1 per hour with a 3600 s interval is 1 per poll;
    1.5 per hour every 600 s is 0 per poll, 1 once an hour and the left half (12) once a day."""
    assert DrainRate.from_settings(1.0, 3600) == DrainRate(1.0, 3600, 1, 0, 0)
    assert DrainRate.from_settings(1.5, 600) == DrainRate(1.5, 600, 0, 1, 12)
    assert DrainRate.from_settings(30, 600) == DrainRate(30, 600, 5, 0, 0)
    one_a_day = DrainRate.from_settings(1 / 24, 600)
    assert (one_a_day.per_poll, one_a_day.per_hour, one_a_day.per_day) == (0, 0, 1)
    too_slow = DrainRate.from_settings(2, 7200)  # an interval over an hour: no draining at all
    assert not too_slow.allows_draining and DrainRate.from_settings(0.1, 600).allows_draining


def test_hourly_and_daily_parts_are_prorated_at_boundaries() -> None:
    """The once-an-hour part goes to the first poll of an hour, scaled to what is left of the hour plus
    one interval; the first poll after a start without a saved poll gets only the per-poll part."""
    rate = DrainRate.from_settings(1.5, 600)
    assert rate.to_drain(T0 + 10, None) == (0, 0.0)
    assert rate.to_drain(T0 + 1200, T0 + 600)[0] == 0  # same hour, same day
    assert rate.to_drain(T0 + 3600, T0 + 3000)[0] == 1  # a new hour: 1 × (1 + 600/3600) rounds to 1
    assert rate.to_drain(T0 + 3600 + 3000, T0 + 3000)[0] == 0  # late in the hour: 1 × (600+600)/3600 = 0.33
    whole, exact = rate.to_drain(T0 + 86400, T0 + 86400 - 600)  # a new day and a new hour
    assert whole == 1 + 12 and abs(exact - (1 + 600 / 3600 + 12 * (1 + 600 / 86400))) < 1e-9
    whole, exact = prorate(4, 2700, 3600, 600)
    assert whole == 2 and abs(exact - 4 * (900 + 600) / 3600) < 1e-9  # 1.67 rounds to 2
    assert prorate(3, 0, 3600, 600)[0] == 3  # never more than n
    assert prorate(-3, 0, 3600, 600)[0] == -3


def test_defaults_are_htcondors() -> None:
    """Every knob's default from the parameter table."""
    s = settings()
    assert (s.interval, s.machines_per_hour, s.max_concurrent_draining, s.max_whole_machines) == (600, 0, -1, -1)
    assert s.schedule is DrainSpeed.GRACEFUL and s.update_interval == 300
    assert (s.start_expr.text, s.requirements.text) == ("FALSE", "")
    assert s.whole_machine_expr.text == s.cancel_requirements.text == "Cpus == TotalSlotCpus"
    assert s.rank.text == "-ExpectedMachineGracefulDrainingBadput"
    assert s.name == "DEFRAG@cm.test" and s.drain_reason == "Defrag DEFRAG@cm.test"
    assert s.state_file.endswith("DEFRAG_state") and s.problems == ()


def test_knobs_are_read() -> None:
    s = settings("DEFRAG_INTERVAL = 3600\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 2.5\n"
                 "DEFRAG_MAX_CONCURRENT_DRAINING = 10\nDEFRAG_MAX_WHOLE_MACHINES = 20\n"
                 "DEFRAG_DRAINING_SCHEDULE = quick\nDEFRAG_NAME = big\nDEFRAG_UPDATE_INTERVAL = 60\n"
                 "DEFRAG_STATE_FILE = /var/defrag.state\nDEFRAG_REQUIREMENTS = TotalCpus >= 8\n"
                 "DEFRAG_CANCEL_REQUIREMENTS =\n")
    assert (s.interval, s.machines_per_hour, s.max_concurrent_draining, s.max_whole_machines) == (3600, 2.5, 10, 20)
    assert s.schedule is DrainSpeed.QUICK and s.name == "big@cm.test" and s.update_interval == 60
    assert s.state_file == "/var/defrag.state" and s.requirements.text == "TotalCpus >= 8"
    assert s.cancel_requirements.tree is None and s.problems == ()
    assert settings("DEFRAG_SCHEDULE = fast\n").schedule is DrainSpeed.FAST  # the manual's name for the knob
    assert settings("DEFRAG_NAME = a@b\n").name == "a@b"


def test_bad_knobs_are_problems_naming_the_knob() -> None:
    """Bad input: an expression that does not parse, an unknown schedule or a number that does not
    convert is a Problem naming the knob; drains (or cancels) are blocked, nothing raises."""
    s = settings("DEFRAG_RANK = 3 +\nDEFRAG_DRAINING_SCHEDULE = slowly\nDEFRAG_INTERVAL = soon\n"
                 "DEFRAG_CANCEL_REQUIREMENTS = (((\n")
    knobs = {p.knob for p in s.problems}
    assert knobs == {Knob.RANK, Knob.SCHEDULE, Knob.INTERVAL, Knob.CANCEL_REQUIREMENTS}
    assert s.interval == 600 and s.rank.tree is None
    assert {p.knob for p in s.drains_blocked_by} == {Knob.RANK, Knob.SCHEDULE}
    assert [p.knob for p in s.cancels_blocked_by] == [Knob.CANCEL_REQUIREMENTS]
    assert all(str(p).startswith(p.knob.value) for p in s.problems)
