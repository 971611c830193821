"""``htcpool sim`` (htcpool.cli.sim): options to SimOptions, progress, report, summary, errors.

The engine is replaced by a stand-in that checks what it was given and writes a hand-made run
(tests/sim/fake_run.py), so these tests are about the command, not the simulation."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from htcpool.cli import main as htcpool_main
from htcpool.cli.common import ToolError
from htcpool.cli.sim import describe_duration, parse_duration, parse_setting
from htcpool.sim.errors import SimInputError
from htcpool.sim.options import Progress, SimOptions
from tests.sim.fake_run import write_run


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("1.5", 1.5), ("30m", 1800.0), ("12h", 43200.0),
                                               ("2d", 172800.0), ("45s", 45.0), (" 3H ", 10800.0)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten", "5w", "-3", "1h30m"])
def test_bad_durations_name_the_option(text: str) -> None:
    with pytest.raises(ToolError, match=r"--until .*expected seconds or a number with s, m, h or d"):
        parse_duration(text)


def test_settings() -> None:
    assert parse_setting("PRIORITY_HALFLIFE=3600") == ("PRIORITY_HALFLIFE", "3600")
    assert parse_setting("START = KeyboardIdle > 15*60") == ("START", "KeyboardIdle > 15*60")
    assert parse_setting("GROUP_QUOTA_group_a.b=") == ("GROUP_QUOTA_group_a.b", "")
    with pytest.raises(ToolError, match="--set 'no equals': expected KNOB=VALUE"):
        parse_setting("no equals")
    with pytest.raises(ToolError, match="expected KNOB=VALUE"):
        parse_setting("=5")


def test_describe_duration() -> None:
    assert [describe_duration(s) for s in (59, 600, 7200, 3 * 86400)] == ["59 s", "10.0 minutes", "2.0 hours",
                                                                          "3.0 days"]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    files = {"config": tmp_path / "condor_config", "machines": tmp_path / "machines",
             "workload": tmp_path / "trace.swf"}
    for path in files.values():
        path.write_text("# made by the test\n")
    return files


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> list[SimOptions]:
    """A stand-in for htcpool.sim.run: records its options, reports progress twice, writes a run."""
    calls: list[SimOptions] = []

    def simulate(options: SimOptions) -> dict[str, Any]:
        calls.append(options)
        assert options.on_progress is not None
        options.on_progress(Progress(600.0, options.until, 1000, 5e4, 3, 90))
        options.on_progress(Progress(7200.0, options.until, 9000, 6e4, 80, 90))
        return write_run(options.out)

    monkeypatch.setitem(sys.modules, "htcpool.sim.run", types.SimpleNamespace(simulate=simulate))
    return calls


def _argv(inputs: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return ["sim", str(inputs["config"]), "--machines", str(inputs["machines"]), "--workload",
            str(inputs["workload"]), "--out", str(out), *extra]


def test_a_run_passes_every_option_writes_the_report_and_prints_a_summary(
        inputs: dict[str, Path], engine: list[SimOptions], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    status = htcpool_main(_argv(inputs, out, "--until", "12h", "--seed", "7", "--set", "PRIORITY_HALFLIFE=3600",
                                "--set", "GROUP_QUOTA_group_physics = 6", "--skip-bad", "--delay", "0.5"))
    assert status == 0
    (options,) = engine
    assert (options.config, options.machines, options.workload, options.out) == (
        inputs["config"], inputs["machines"], inputs["workload"], out)
    assert options.until == 43200.0 and options.seed == 7 and options.skip_bad and options.message_delay == 0.5
    assert options.overrides == (("PRIORITY_HALFLIFE", "3600"), ("GROUP_QUOTA_group_physics", "6"))
    assert (out / "report.html").is_file() and (out / "share_users.png").is_file()
    printed = capsys.readouterr().out
    assert "Simulated 2.0 hours in 0.5 s (14,400x real time)" in printed
    assert "Jobs: 90 submitted, 80 completed" in printed and "utilization 80.0%" in printed
    assert "alice@sim" in printed and "75.0%" in printed and "group_physics" in printed
    assert f"Report: {out / 'report.html'}" in printed


def test_defaults(inputs: dict[str, Path], engine: list[SimOptions], tmp_path: Path) -> None:
    assert htcpool_main(_argv(inputs, tmp_path / "out")) == 0
    (options,) = engine
    assert options.until is None and options.seed == 0 and options.overrides == ()
    assert not options.skip_bad and options.message_delay == 0.0


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert htcpool_main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_a_missing_input_is_one_line(inputs: dict[str, Path], engine: list[SimOptions], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    inputs["machines"].unlink()
    err = _fails(_argv(inputs, tmp_path / "out"), capsys)
    assert err.startswith(f"htcpool sim: --machines {inputs['machines']}: no such file")
    assert engine == []


def test_bad_input_found_by_the_engine_is_one_line(inputs: dict[str, Path], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    def simulate(options: SimOptions) -> dict[str, Any]:
        raise SimInputError(options.workload, 17, "field 4 (run time) is 'abc', not a number")

    monkeypatch.setitem(sys.modules, "htcpool.sim.run", types.SimpleNamespace(simulate=simulate))
    err = _fails(_argv(inputs, tmp_path / "out"), capsys)
    assert err == f"htcpool sim: {inputs['workload']}:17: field 4 (run time) is 'abc', not a number\n"


@pytest.mark.parametrize(("extra", "message"), [
    (["--until", "soon"], "--until 'soon': expected seconds"),
    (["--delay", "x"], "--delay 'x': expected seconds"),
    (["--set", "oops"], "--set 'oops': expected KNOB=VALUE"),
    (["--seed", "one"], "argument --seed: invalid int value: 'one'"),
])
def test_bad_options_are_one_line(inputs: dict[str, Path], engine: list[SimOptions], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    assert message in _fails(_argv(inputs, tmp_path / "out", *extra), capsys)
    assert engine == []


def test_a_missing_required_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fails(["sim", "condor_config", "--machines", "m"], capsys)
    assert "the following arguments are required: --workload, --out" in err


@pytest.mark.parametrize(("grid", "message"), [
    (["NEGOTIATOR_INTERVAL"], "--grid 'NEGOTIATOR_INTERVAL': expected KNOB=v1,v2"),
    (["A=1,,2"], "--grid 'A=1,,2': a value is empty"),
    (["A=1,2", "a=3"], "--grid 'a=3': a is already swept by another --grid"),
])
def test_a_bad_grid_is_one_line(inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                grid: list[str], message: str) -> None:
    argv = _argv(inputs, tmp_path / "out")
    argv[0:1] = ["sim", "sweep"]
    for spec in grid:
        argv += ["--grid", spec]
    assert message in _fails(argv, capsys)
    assert not (tmp_path / "out").exists()


def test_a_real_run_from_a_submit_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command with the real engine: a submit file of four jobs of 60 + 30 × Process seconds
    on two single-core slots; every output file and the report are written."""
    (tmp_path / "condor_config").write_text("UID_DOMAIN = cli.test\nNEGOTIATOR_INTERVAL = 20\n"
                                            "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n")
    (tmp_path / "machines").write_text("1 NUM_CPUS=2 MEMORY=2048\n")
    (tmp_path / "jobs.sub").write_text("executable = /bin/true\n+SimRuntime = 60 + 30 * $(Process)\nqueue 4\n")
    out = tmp_path / "out"
    status = htcpool_main(["sim", str(tmp_path / "condor_config"), "--machines", str(tmp_path / "machines"),
                           "--workload", str(tmp_path / "jobs.sub"), "--out", str(out)])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    assert "Jobs: 4 submitted, 4 completed" in printed.out
    for name in ("summary.json", "timeseries.csv", "usage.csv", "jobs.csv", "report.html", "queue.png",
                 "utilization.png", "share_users.png"):
        assert (out / name).is_file(), name
    runtimes = sorted(line.split(",")[7] for line in (out / "jobs.csv").read_text().splitlines()[1:])
    assert runtimes == ["120.0", "150.0", "60.0", "90.0"]
