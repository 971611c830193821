"""condor_history's text: the default table (``htcpool.cli.formats.history``) checked against
HTCondor's output byte for byte, and ``-long``/``-af``, which are condor_q's formatters
(``adtext``) printing the ads in the order the schedd answers (newest first)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.cli import history
from htcpool.cli.formats import format_autoformat, format_history, format_long
from htcpool.schedd import JobQueue, MemoryStore
from htcpool.submit import submit_description
from tests.shared import SHARED
from tests.submit.conftest import golden_fs, golden_host

TOOLS = SHARED / "golden" / "tools"
SUBMITTED = int(datetime(2026, 11, 22, 0, 47, 12, tzinfo=UTC).timestamp())


def removed_cluster_3() -> MemoryStore:
    """The golden pool's submit_c.sub, queued as cluster 3 and removed with condor_rm 3."""
    store = MemoryStore()
    q = JobQueue(store=store, next_cluster=3)
    result = submit_description((TOOLS / "submit_c.sub").read_text(), file="submit_c.sub",
                                host=golden_host(SUBMITTED), fs=golden_fs())
    q.submit("alice", result.jobs, SUBMITTED)
    q.remove((3, 0), "alice", SUBMITTED + 75)
    return store


def test_default_table_matches_condor_history() -> None:
    assert format_history(removed_cluster_3().history) == (TOOLS / "condor_history.txt").read_text()


def test_completed_jobs_printed_in_the_order_given_with_run_time() -> None:
    store = MemoryStore()
    q = JobQueue(store=store)
    jobs = submit_description("executable = /bin/echo\narguments = \"hello there\"\nqueue 2\n",
                              host=golden_host(SUBMITTED), fs=golden_fs()).jobs
    q.submit("alice", jobs, SUBMITTED)
    for proc in (0, 1):
        q.start((1, proc), SUBMITTED + 60)
        q.finish((1, proc), SUBMITTED + 60 + 90061 * (proc + 1))
    lines = format_history(store.history[::-1], zone=3600).splitlines()
    assert lines[1] == "1.1          alice        11/22 01:47   2+02:02:02 C  11/24 03:50 echo hello there"
    assert lines[2] == "1.0          alice        11/22 01:47   1+01:01:01 C  11/23 02:49 echo hello there"


def test_missing_values_print_as_zero_and_blank() -> None:
    ad = ClassAd({"ClusterId": 7.9, "ProcId": "x", "Owner": 3, "JobStatus": 99, "Cmd": "a/b/tool",
                  "Arguments": "", "Args": "-v"})
    assert format_history([ad]).splitlines()[1] == \
        "7.0                       01/01 00:00   0+00:00:00 ?              tool -v"


def test_long_and_autoformat() -> None:
    history_ads = removed_cluster_3().history
    long = format_long(history_ads, attributes=["Owner", "clusterid", "RequestMemory", "Cmd"])
    assert long == 'ClusterId = 3\nCmd = "/bin/sleep"\nOwner = "alice"\nRequestMemory = 999999\n\n'
    full = format_long(history_ads).splitlines()
    assert full[-1] == "" and full[0] == "Args = \"300\""
    names = [line.split(" = ")[0].lower() for line in full[:-1]]
    assert names == sorted(names) and "removereason" in names
    assert format_autoformat(history_ads, ["ClusterId", "Owner", "JobStatus", "Cmd", "RequestMemory * 2",
                                           "NoSuchAttribute", "time() - QDate"], now=SUBMITTED + 100) == \
        "3 alice 3 /bin/sleep 1999998 undefined 100\n"


NEWER = ClassAd({"ClusterId": 2, "ProcId": 0, "Owner": "bob", "JobStatus": 4, "QDate": SUBMITTED,
                 "Cmd": "/bin/true"})
OLDER = ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", "JobStatus": 3, "QDate": SUBMITTED,
                 "Cmd": "/bin/false"})


class _Reply:
    def __init__(self, ads: list[ClassAd]) -> None:
        self.ads = tuple(ads)


def _run_history(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    reply: Any = _Reply([NEWER, OLDER])  # the schedd answers newest first
    monkeypatch.setattr(history, "connect", lambda: object())
    monkeypatch.setattr(history, "request", lambda client, daemon, message: reply)
    assert history.main(argv) == 0
    return capsys.readouterr().out


def test_tool_prints_newest_first_in_every_form(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_history(monkeypatch, capsys, ["-af", "ClusterId", "Owner"]) == "2 bob\n1 alice\n"
    assert _run_history(monkeypatch, capsys, ["-long"]) == format_long([NEWER, OLDER])
    assert _run_history(monkeypatch, capsys, ["-long"]).startswith("ClusterId = 2\n")
    table = _run_history(monkeypatch, capsys, []).splitlines()
    assert [line.split()[0] for line in table[1:]] == ["2.0", "1.0"]
