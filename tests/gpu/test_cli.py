"""``htcpool gpu_discovery``: the tool's output and exit status through the command line."""

from __future__ import annotations

import pytest

from htcpool.cli import main


def test_simulated_devices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpu_discovery", "-simulate:1,2", "-config"]) == 0
    assert capsys.readouterr().out == "DetectedGPUs=GPU-a0223334, GPU-b1223334\nNUM_DETECTED_GPUs=2\n"


def test_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpu_discovery", "-frobnicate"]) == 1
    seen = capsys.readouterr()
    assert seen.out == "" and seen.err.startswith("option -frobnicate is not valid\nUsage: htcpool gpu_discovery")
