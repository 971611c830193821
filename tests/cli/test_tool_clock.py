"""The tools evaluate at the time they run: ``time()`` in ``-af`` and ``classad eval`` is now.

The language has no clock of its own; each tool reads the wall clock at its boundary and
hands it to the evaluation. These tests run the tools' ``main`` with the pool connection
replaced by a stub that answers with fixed ads, and check that ``time()`` prints a time
within a few seconds of the test's own reading of the clock.
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.cli import classad_tool, history, q, status
from htcpool.protocol import AdList

SLACK = 5  # seconds between the test's clock reading and the tool's


class _Reply:
    def __init__(self, ads: list[ClassAd]) -> None:
        self.ads = tuple(ads)


def _stub_pool(monkeypatch: pytest.MonkeyPatch, module: ModuleType, reply: Any) -> None:
    monkeypatch.setattr(module, "connect", lambda: object())
    monkeypatch.setattr(module, "request", lambda client, daemon, message, url=None: reply)


def _printed_times(capsys: pytest.CaptureFixture[str]) -> list[int]:
    out = capsys.readouterr().out
    return [int(float(word)) for line in out.splitlines() for word in line.split()]


def _assert_now(times: list[int], before: float) -> None:
    after = time.time()
    assert times, "the tool printed nothing"
    for t in times:
        assert before - SLACK <= t <= after + SLACK, (t, before, after)


JOB = ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", "JobStatus": 4, "QDate": 1_000_000_000})


def test_history_af_time_is_now(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stub_pool(monkeypatch, history, _Reply([JOB]))
    before = time.time()
    assert history.main(["-af", "time()", "CurrentTime"]) == 0
    _assert_now(_printed_times(capsys), before)


def test_history_af_time_minus_an_attribute(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _stub_pool(monkeypatch, history, _Reply([JOB]))
    before = time.time()
    assert history.main(["-af", "time() - QDate"]) == 0
    (age,) = _printed_times(capsys)
    assert abs(age - (before - 1_000_000_000)) <= SLACK


def test_q_af_time_is_now(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stub_pool(monkeypatch, q, _Reply([JOB]))
    before = time.time()
    assert q.main(["-af", "time()"]) == 0
    _assert_now(_printed_times(capsys), before)


def test_status_af_time_is_now(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    slot = ClassAd({"Name": "slot1@node", "Machine": "node", "MyType": "Machine"})
    _stub_pool(monkeypatch, status, AdList((slot,)))
    before = time.time()
    assert status.main(["-af", "time()"]) == 0
    _assert_now(_printed_times(capsys), before)


def test_classad_eval_time_is_now(capsys: pytest.CaptureFixture[str]) -> None:
    before = time.time()
    assert classad_tool.main(["eval", "time()"]) == 0
    _assert_now(_printed_times(capsys), before)


def test_classad_eval_time_option_fixes_the_clock(capsys: pytest.CaptureFixture[str]) -> None:
    assert classad_tool.main(["eval", "--time", "1234567890", "time()", "formatTime(time(), \"%Y\")"]) == 0
    assert capsys.readouterr().out == '1234567890\n"2009"\n'
