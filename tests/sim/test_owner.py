"""Owner activity on simulated machines (``OWNER_ACTIVE`` in the machine file, ``sim/owner.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.sim.errors import SimInputError
from htcpool.sim.owner import DAY, OwnerActivity
from tests.sim.pool_files import EPOCH, rows, run, swf_line

#: the trace's epoch is 22:13:20 UTC
START_OF_DAY = EPOCH - EPOCH % DAY
DESKTOP = """NEGOTIATOR_INTERVAL = 20
START = KeyboardIdle > 300
PREEMPT = KeyboardIdle < 60
WANT_SUSPEND = false
WANT_VACATE = false
MaxJobRetirementTime = 0
SLOTS_CONNECTED_TO_KEYBOARD = 1000000
SLOTS_CONNECTED_TO_CONSOLE = 1000000
"""


def test_periods_touches_and_midnight() -> None:
    owner = OwnerActivity.parse("09:00-17:00, 22:00-02:00")
    day = 10 * DAY
    assert owner.active(day + 9 * 3600) and not owner.active(day + 17 * 3600)
    assert owner.last_touch(day + 18 * 3600) == day + 17 * 3600
    assert owner.active(day + 23 * 3600) and owner.active(day + 3600)  # past midnight
    assert owner.last_touch(day + 3 * 3600) == day + 2 * 3600
    assert owner.next_change(day + 3 * 3600) == day + 9 * 3600
    assert OwnerActivity.parse("08:00-09:00").last_touch(day + 7 * 3600) == day - DAY + 9 * 3600


@pytest.mark.parametrize("text", ["9-17", "25:00-26:00", "10:00-10:00", "10:61-11:00"])
def test_bad_periods_are_named(tmp_path: Path, text: str) -> None:
    with pytest.raises(SimInputError, match=r"machines.txt:1: OWNER_ACTIVE: "):
        run(tmp_path, DESKTOP, f"1 NUM_CPUS=1 MEMORY=1024 OWNER_ACTIVE={text}\n", [swf_line(1, 0, 10, user=1)])


def test_the_owner_preempts_the_job_and_start_waits_for_an_idle_keyboard(tmp_path: Path) -> None:
    """The owner works from 400 s to 1000 s after the start: the job running since 0 is preempted
    when the keyboard is touched, and starts again only once it has been idle for five minutes,
    then runs its whole 2000 s again."""
    begin, end = EPOCH + 400 - START_OF_DAY, EPOCH + 1000 - START_OF_DAY
    hours = f"{int(begin // 3600):02d}:{int(begin % 3600 // 60):02d}-{int(end // 3600):02d}:{int(end % 3600 // 60):02d}"
    summary = run(tmp_path, DESKTOP, f"1 NUM_CPUS=1 MEMORY=1024 OWNER_ACTIVE={hours}\n",
                  [swf_line(1, 0, 2000, user=1)])
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert summary["jobs_completed"] == 1 and summary["preemptions"] == 1, summary
    assert float(job["end_s"]) >= 1000 + 300 + 2000, job
    alone = run(tmp_path, DESKTOP, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 0, 2000, user=1)])
    assert alone["preemptions"] == 0 and float(rows(tmp_path / "out" / "jobs.csv")[0]["end_s"]) < 2100
