"""A quiet machine's polls left out of the event loop (``sim/startd_driver.py``) change nothing
the simulation computes: the same run with every poll an event of its own gives the same
summary and time series, byte for byte, and the same full polls of every machine at the same
times (a poll left out that should have come before a message of its instant would move the
next full poll), with fewer events."""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest

from htcpool.sim import run as run_module
from htcpool.sim.options import SimOptions
from htcpool.sim.run import Simulation
from htcpool.sim.startd_driver import StartdDriver
from htcpool.startd import Startd
from tests.sim.pool_files import summary_without_timing, swf_line, write_swf

POOL = """use FEATURE : PartitionableSlot
NEGOTIATOR_INTERVAL = 60
MAXJOBRETIREMENTTIME = 120
"""
DEFRAG = """DAEMON_LIST = $(DAEMON_LIST) DEFRAG
DEFRAG_INTERVAL = 120
DEFRAG_MAX_CONCURRENT_DRAINING = 2
DEFRAG_DRAINING_MACHINES_PER_HOUR = 60
DEFRAG_MAX_WHOLE_MACHINES = 6
"""
LEASES = """JobLeaseDuration = 400
ALIVE_INTERVAL = 150
"""


def _trace(path: Path) -> Path:
    rng = random.Random(7)
    lines, t = [], 0.0
    for n in range(1, 121):
        lines.append(swf_line(n, int(t), max(1, int(rng.expovariate(1 / 900))), rng.randrange(1, 6),
                              cpus=rng.choice((1, 1, 2, 4))))
        t += rng.expovariate(1 / 25)
    return write_swf(path, lines)


def _simulate(tmp: Path, config: str, delay: float, quiet_polls: bool,
              monkeypatch: pytest.MonkeyPatch
              ) -> tuple[dict[str, object], dict[str, bytes], list[tuple[str, float]], int]:
    tmp.mkdir()
    (tmp / "condor_config").write_text(config)
    (tmp / "machines.txt").write_text("6 NUM_CPUS=4 MEMORY=16384\n")
    trace = _trace(tmp / "trace.swf")
    polls: list[tuple[str, float]] = []
    full_poll = Startd._poll

    def noted(startd: Startd, now: float, incremental: bool = False) -> None:
        polls.append((startd.settings.hostname, now))
        full_poll(startd, now, incremental)

    with monkeypatch.context() as patched:
        patched.setattr(run_module, "StartdDriver", functools.partial(StartdDriver, quiet_polls=quiet_polls))
        patched.setattr(Startd, "_poll", noted)
        simulation = Simulation(SimOptions(tmp / "condor_config", tmp / "machines.txt", trace, tmp / "out",
                                           until=2 * 3600.0, message_delay=delay))
        simulation.run()
    series = {p.name: p.read_bytes() for p in sorted((tmp / "out").glob("*.csv"))}
    return summary_without_timing(tmp / "out" / "summary.json"), series, polls, simulation.loop.events


@pytest.mark.parametrize(("extra", "delay"), [("", 0.0), (DEFRAG, 0.0), (LEASES, 0.5)],
                         ids=["plain", "defrag", "leases and a message delay"])
def test_polls_left_out_give_the_same_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          extra: str, delay: float) -> None:
    config = POOL + extra
    left_out, left_out_series, left_out_polls, fewer = _simulate(tmp_path / "left-out", config, delay, False,
                                                                 monkeypatch)
    every, every_series, every_polls, events = _simulate(tmp_path / "every", config, delay, True, monkeypatch)
    assert left_out == every
    assert left_out_series == every_series and left_out_series
    assert left_out_polls == every_polls
    assert fewer < events * 0.8, (fewer, events)
    assert every["jobs_completed"] > 50
    if extra == DEFRAG:
        assert every["defrag_drains"] > 0
