"""``$F`` file-name parts and the ``config_val`` tool's other modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.cli.config_val import main
from htcpool.config.paths import filename_parts

PATH_CASES = [
    ("/a/b/c.txt", "p", "/a/b/"),
    ("/a/b/c.txt", "pb", "/a/b"),
    ("/a/b/c.txt", "n", "c"),
    ("/a/b/c.txt", "x", ".txt"),
    ("/a/b/c.txt", "xb", "txt"),
    ("/a/b/c.txt", "nx", "c.txt"),
    ("/a/b/c.txt", "d", "b/"),
    ("/a/b/c.txt", "dd", "a/b/"),
    ("/a/b/c.txt", "q", '"/a/b/c.txt"'),
    ("/a/b/c.txt", "qa", "'/a/b/c.txt'"),
    ('"/a/b/c.txt"', "", "/a/b/c.txt"),
    ("c.txt", "p", ""),
    ("c.txt", "n", "c"),
    ("a\\b\\c.txt", "u", "a/b/c.txt"),
    ("rel/file", "f", "/home/user/rel/file"),
]


@pytest.mark.parametrize(("value", "flags", "expected"), PATH_CASES)
def test_filename_parts(value: str, flags: str, expected: str) -> None:
    assert filename_parts(value, flags, "/home/user") == expected


def _run(argv: list[str], config: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setenv("CONDOR_CONFIG", str(config))
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_tool_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "condor_config"
    config.write_text("A = $(B)x\nB = b\nXYZZY.NAME = local\n")
    assert _run(["A"], config, monkeypatch, capsys) == (0, "bx\n", "")
    assert _run(["-raw", "A"], config, monkeypatch, capsys) == (0, "$(B)x\n", "")
    assert _run(["-local-name", "xyzzy", "NAME"], config, monkeypatch, capsys) == (0, "local\n", "")
    assert _run(["-macro", "$(B)-$(A)"], config, monkeypatch, capsys) == (0, "b-bx\n", "")
    status, out, _ = _run(["use", "ROLE"], config, monkeypatch, capsys)
    assert status == 0 and out.splitlines() == [
        "use ROLE accepts", "  CentralManager", "  Execute", "  get_htcondor_central_manager",
        "  get_htcondor_execute", "  get_htcondor_submit", "  Personal", "  Submit",
    ]
    status, _, err = _run(["use", "ROLE:Nope"], config, monkeypatch, capsys)
    assert status == 1 and "not a known template" in err
    status, out, err = _run(["A", "NOPE"], config, monkeypatch, capsys)
    assert (status, out, err) == (1, "bx\n", "Not defined: NOPE\n")


def test_tool_reports_bad_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "condor_config"
    config.write_text("if true\nA = 1\n")
    status, _, err = _run(["A"], config, monkeypatch, capsys)
    assert status == 1 and f'"{config}", line 2: endif(s) not found' in err
