"""``htcpool config_val`` against the recorded output of HTCondor 25's condor_config_val.

The goldens (tests/config/golden/, copied from the project's shared goldens) were made
with the configuration at /etc/condor/condor_config; here the same file is read from
the test directory, so its path is mapped back before comparing, and the version line
of ``-summary`` (which names the build) is compared up to its variable part.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.cli.config_val import main

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("start.txt", ["START"], 0),
    ("start_verbose.txt", ["-verbose", "START"], 0),
    ("expand_start.txt", ["-expand", "START"], 0),
    ("dump_kill.txt", ["-dump", "KILL"], 0),
    ("slot_type_1.txt", ["SLOT_TYPE_1"], 0),
    ("undefined_name.txt", ["NO_SUCH_NAME"], 1),
    ("use_desktop.txt", ["use", "POLICY:Desktop"], 0),
    ("negotiator_max_time.txt", ["-subsystem", "negotiator", "MAX_TIME"], 0),
    ("default_halflife.txt", ["-default", "PRIORITY_HALFLIFE"], 0),
    ("summary.txt", ["-summary"], 0),
    ("config_files.txt", ["-config"], 0),
]


def _normalise(text: str, config_path: str) -> str:
    text = text.replace(config_path, "/etc/condor/condor_config")
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("# condor_config_val $CondorVersion: "):
            lines[index] = "# condor_config_val $CondorVersion: <version> $"
        if line.startswith("# Configuration from machine: "):
            lines[index] = "# Configuration from machine: <host>"
    return "\n".join(lines)


@pytest.mark.parametrize(("golden", "argv", "status"), CASES, ids=[c[0] for c in CASES])
def test_matches_condor_config_val(
    golden: str, argv: list[str], status: int, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config_path = str(GOLDEN / "condor_config")
    monkeypatch.setenv("CONDOR_CONFIG", config_path)
    for key in list(__import__("os").environ):
        if key.lower().startswith("_condor_"):
            monkeypatch.delenv(key)
    assert main(argv) == status
    captured = capsys.readouterr()
    got = _normalise(captured.out + captured.err, config_path)
    want = _normalise((GOLDEN / golden).read_text(), config_path)
    assert got == want
