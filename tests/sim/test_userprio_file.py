"""The accountant's state at the start from ``condor_userprio -long`` output (``--userprio``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.sim.errors import SimInputError
from htcpool.sim.userprio_file import read_userprio
from tests.sim.pool_files import EPOCH, run, summary_without_timing
from tests.sim.test_engine import FAIR, _fair_trace

LONG = """Name = "u1@{domain}"
Priority = 500.0
PriorityFactor = 1000.0
AccumulatedUsage = 3600.0
ResourcesUsed = 4
LastUsageTime = 1699999000
LastUpdate = 1700000000

Name = "u2@{domain}"
Priority = 3000.0
PriorityFactor = 3000.0
LastUpdate = 1699999990
"""


def test_records_are_read_with_real_priorities_and_moved_to_the_start(tmp_path: Path) -> None:
    path = tmp_path / "prio.txt"
    path.write_text(LONG.format(domain="example.org"))
    snap = read_userprio(path, start=EPOCH + 5000)
    u1, u2 = snap.records
    assert (u1.name, u1.priority, u1.priority_factor, u1.accumulated_usage) == ("u1@example.org", 0.5, 1000.0, 3600.0)
    assert u1.resources_used == 0  # the simulated pool starts without claims
    assert u1.last_usage_time == EPOCH + 5000 - 1000  # as old, at the start, as when the output was taken
    assert (u2.priority, u2.priority_factor) == (1.0, 3000.0)
    assert snap.last_update_time == EPOCH + 5000


@pytest.mark.parametrize("text, message", [
    ('Priority = 5\n', ":1: an accounting ad without a Name"),
    ('Name = "a@b"\nPriority = 5\nPriorityFactor = "x"\n', ":1: PriorityFactor of a@b is not a number"),
    ('Name = "a@b"\nPriority = 5\n', ":1: PriorityFactor of a@b must be positive"),
    ('\n\nName = "a@b"\nPriority = [\n', ":3: not an accounting ad"),
    ("", "no accounting ads"),
])
def test_bad_files_are_named_with_their_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prio.txt"
    path.write_text(text)
    with pytest.raises(SimInputError, match=message):
        read_userprio(path, start=EPOCH)


def test_factors_from_userprio_output_act_as_the_knob_does(tmp_path: Path) -> None:
    """u1 at factor 1 and u2 at factor 3 from a userprio file give the very run the simulator's
    SIM_PRIORITY_FACTORS knob gives."""
    for where in ("knob", "file"):
        (tmp_path / where).mkdir()
    knob = run(tmp_path / "knob", FAIR, "1 NUM_CPUS=4 MEMORY=8192\n", _fair_trace(), until=3000)
    config = FAIR.replace("SIM_PRIORITY_FACTORS = u1:1, u2:3\n", "UID_DOMAIN = example.org\n")
    prio = tmp_path / "prio.txt"
    prio.write_text(LONG.format(domain="example.org").replace("3000.0", "3.0").replace("1000.0", "1.0")
                    .replace("500.0", "0.5"))
    from_file = run(tmp_path / "file", config, "1 NUM_CPUS=4 MEMORY=8192\n", _fair_trace(), until=3000,
                    userprio=prio)
    assert knob["users"] == from_file["users"]
    assert summary_without_timing(tmp_path / "knob" / "out" / "summary.json") == \
        summary_without_timing(tmp_path / "file" / "out" / "summary.json")
