"""``htcpool q``'s entry (``cli/qfast.py``): a plain ``-totals`` without a pool falls back to the
full tool, which says what is wrong; the same message as before the short path existed."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.cli import q, qfast


@pytest.mark.parametrize("argv", [["-totals"], ["-totals", "-allusers"], ["-nobatch"]])
def test_without_a_pool_q_says_what_the_full_tool_says(argv: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    monkeypatch.setenv("HTCPOOL_LOCAL_DIR", str(tmp_path / "none"))
    status = qfast.main(argv)
    fast = capsys.readouterr()
    assert status == q.main(argv) == 1
    full = capsys.readouterr()
    assert fast.err == full.err and "htcpool up" in fast.err and fast.out == ""
