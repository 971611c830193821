"""Sweeps (htcpool.sim.sweep): the grid, one run per combination on Dask, the table and the plot.

Here the engine is a stand-in (tests/sim/fake_run.py) whose users' shares depend on the knob it
was given, and the Dask cluster is a local one of two threads, so the test is about the sweep's
own work; tests/sim/test_fidelity.py runs sweeps of the real engine."""

from __future__ import annotations

import csv
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from htcpool.sim.options import SimOptions
from htcpool.sim.sweep import (
    GridAxis,
    GridError,
    SweepRun,
    combinations,
    parse_grid,
    plot_sweep,
    run_sweep,
)

GRID = parse_grid(["PRIORITY_HALFLIFE=600,86400", "DEFAULT_PRIO_FACTOR=1"])


def test_grid_and_combinations() -> None:
    assert GRID == (GridAxis("PRIORITY_HALFLIFE", ("600", "86400")), GridAxis("DEFAULT_PRIO_FACTOR", ("1",)))
    assert combinations(parse_grid(["A=1,2", "B=x,y"])) == [
        (("A", "1"), ("B", "x")), (("A", "1"), ("B", "y")), (("A", "2"), ("B", "x")), (("A", "2"), ("B", "y"))]
    with pytest.raises(GridError, match="at least one --grid"):
        parse_grid([])
    with pytest.raises(GridError, match=r"--grid 'A B=1': expected KNOB=v1,v2"):
        parse_grid(["A B=1"])


def _fake_simulate(options: SimOptions) -> dict[str, Any]:
    from tests.sim.fake_run import write_run

    knobs = dict(options.overrides)
    if knobs.get("PRIORITY_HALFLIFE") == "bad":
        raise ValueError(f"{options.config}:3: PRIORITY_HALFLIFE 'bad' is not a number")
    alice = 6 if knobs["PRIORITY_HALFLIFE"] == "600" else 4  # a knob that moves the shares
    return write_run(options.out, users={"alice@sim": (alice, 1.0), "bob@sim": (8 - alice, 3.0)}, makespan=600)


def test_a_sweep_runs_every_combination_and_writes_table_and_plot(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "htcpool.sim.run", types.SimpleNamespace(simulate=_fake_simulate))
    base = SimOptions(config=tmp_path / "c", machines=tmp_path / "m", workload=tmp_path / "w", out=tmp_path / "sweep",
                      overrides=(("NEGOTIATOR_INTERVAL", "60"),))
    grid = parse_grid(["PRIORITY_HALFLIFE=600,86400,bad"])
    finished: list[SweepRun] = []
    runs = run_sweep(base, grid, workers=2, processes=False, on_done=finished.append)
    assert sorted(r.index for r in finished) == [0, 1, 2]
    assert [r.settings for r in runs] == [(("PRIORITY_HALFLIFE", v),) for v in ("600", "86400", "bad")]
    assert [r.out for r in runs] == [tmp_path / "sweep" / f"run-{i}" for i in range(3)]
    # each run's own files and report
    assert (tmp_path / "sweep" / "run-0" / "report.html").is_file()
    assert runs[2].summary is None and runs[2].error == f"{tmp_path / 'c'}:3: PRIORITY_HALFLIFE 'bad' is not a number"
    with (tmp_path / "sweep" / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [row["PRIORITY_HALFLIFE"] for row in rows] == ["600", "86400", "bad"]
    assert [row["share:alice@sim"] for row in rows] == ["0.75", "0.5", ""]
    assert [row["share:bob@sim"] for row in rows] == ["0.25", "0.5", ""]
    assert rows[0]["jobs_completed"] == "80" and rows[0]["error"] == "" and rows[2]["error"].endswith("not a number")
    assert rows[1]["wait_p50_s:bob@sim"] == "180.0" and rows[0]["group_share:group_physics"] == "0.75"
    assert (tmp_path / "sweep" / "sweep.png").read_bytes().startswith(b"\x89PNG")


def test_the_base_settings_come_before_the_grid_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[tuple[str, str], ...]] = []

    def simulate(options: SimOptions) -> dict[str, Any]:
        seen.append(options.overrides)
        return _fake_simulate(options)

    monkeypatch.setitem(sys.modules, "htcpool.sim.run", types.SimpleNamespace(simulate=simulate))
    base = SimOptions(config=tmp_path / "c", machines=tmp_path / "m", workload=tmp_path / "w", out=tmp_path / "s",
                      overrides=(("PRIORITY_HALFLIFE", "1"),))
    run_sweep(base, parse_grid(["PRIORITY_HALFLIFE=600"]), workers=1, processes=False, report=False)
    assert seen == [(("PRIORITY_HALFLIFE", "1"), ("PRIORITY_HALFLIFE", "600"))]  # the later one wins
    assert not (tmp_path / "s" / "run-0" / "report.html").exists()


def test_the_plot_of_a_two_knob_grid_names_each_run_by_both(tmp_path: Path) -> None:
    from tests.sim.fake_run import summary

    grid = parse_grid(["A=1,2", "B=x"])
    runs = [SweepRun(i, combo, tmp_path, summary(), None) for i, combo in enumerate(combinations(grid))]
    plot_sweep(tmp_path / "p.png", grid, runs)
    assert (tmp_path / "p.png").stat().st_size > 5000


def test_a_sweep_of_the_real_engine(tmp_path: Path) -> None:
    """Two runs of the simulator on Dask (a local cluster of two threads): the worse bob's
    priority factor, the longer his jobs wait."""
    from tests.sim.test_fidelity import _history

    (tmp_path / "condor_config").write_text(
        "UID_DOMAIN = sweep.test\nNEGOTIATOR_INTERVAL = 20\nSCHEDD_INTERVAL = 5\nCLAIM_WORKLIFE = 0\n"
        "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 4\n")
    (tmp_path / "machines").write_text("1 NUM_CPUS=4 MEMORY=4096\n")
    (tmp_path / "history").write_text(_history([(user, 0, 120, None) for user in ("alice", "bob") for _ in range(12)]))
    base = SimOptions(tmp_path / "condor_config", tmp_path / "machines", tmp_path / "history", tmp_path / "sweep")
    grid = parse_grid(["SIM_PRIORITY_FACTORS=alice:1 bob:1,alice:1 bob:4"])
    runs = run_sweep(base, grid, workers=2, processes=False, report=False)
    assert [r.error for r in runs] == [None, None]
    waits = [(r.summary or {})["users"]["bob"]["wait_p50_s"] for r in runs]
    assert waits[1] > waits[0], waits
    with (tmp_path / "sweep" / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [row["jobs_completed"] for row in rows] == ["24", "24"]
    assert [float(row["wait_p50_s:bob"]) for row in rows] == waits
