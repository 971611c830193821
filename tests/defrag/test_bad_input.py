"""Bad input: a DEFRAG_* expression that does not parse or evaluate is reported, naming the knob, and
the core keeps polling without draining on that account."""

from __future__ import annotations

from htcpool.defrag import LogLevel, LogLine
from tests.defrag.helpers import T0, cancels, core, drains, pslot

FAST_RATE = "DEFRAG_DRAINING_MACHINES_PER_HOUR = 100\n"


def _warnings(actions: list) -> list[str]:
    return [a.text for a in actions if isinstance(a, LogLine) and a.level is LogLevel.WARNING]


def test_unparsable_requirements_stop_drains_but_not_cancels() -> None:
    d = core(FAST_RATE + "DEFRAG_REQUIREMENTS = TotalCpus >=\n")
    assert any("DEFRAG_REQUIREMENTS" in a.text for a in d.startup_lines() if isinstance(a, LogLine))
    ads = [pslot("m1"), pslot("m2", cpus=8, Draining=True)]
    for poll in range(3):  # every poll says why, and goes on
        actions = d.evaluate(T0 + 600 * poll, ads)
        assert drains(actions) == [] and cancels(actions) == ["m2"]
        assert any("Doing nothing, because DEFRAG_REQUIREMENTS: cannot parse" in a.text
                   for a in actions if isinstance(a, LogLine))


def test_unparsable_cancel_requirements_stop_cancels_but_not_drains() -> None:
    d = core(FAST_RATE + "DEFRAG_CANCEL_REQUIREMENTS = Cpus ==\n")
    actions = d.evaluate(T0, [pslot("m1"), pslot("m2", cpus=8, Draining=True)])
    assert drains(actions) == ["m1"] and cancels(actions) == []
    assert any("DEFRAG_CANCEL_REQUIREMENTS" in w for w in _warnings(actions))


def test_expression_that_evaluates_to_error_leaves_that_machine_alone() -> None:
    """DEFRAG_RANK is ERROR on m1 (a string plus a number): m1 is not drained, the others are, and the
    log names the knob and the count of slots."""
    d = core(FAST_RATE + "DEFRAG_RANK = Weight + 1\n")
    actions = d.evaluate(T0, [pslot("m1", Weight="heavy"), pslot("m2", Weight=2), pslot("m3", Weight=5)])
    assert drains(actions) == ["m3", "m2"]
    assert _warnings(actions) == ["DEFRAG_RANK evaluated to ERROR on 1 slot(s); those machines are left alone"]
    requirements = core(FAST_RATE + 'DEFRAG_REQUIREMENTS = Weight > 1\n').evaluate(
        T0, [pslot("m1", Weight="heavy"), pslot("m2", Weight=2)])
    assert drains(requirements) == ["m2"] and "DEFRAG_REQUIREMENTS evaluated to ERROR" in _warnings(requirements)[0]


def test_bad_schedule_stops_drains() -> None:
    actions = core(FAST_RATE + "DEFRAG_DRAINING_SCHEDULE = gently\n").evaluate(T0, [pslot("m1")])
    assert drains(actions) == []
    assert any("DEFRAG_DRAINING_SCHEDULE: 'gently' is not graceful, quick or fast" in a.text
               for a in actions if isinstance(a, LogLine))
