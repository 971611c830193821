"""The shape of ``htcpool.htcondor2``: HTCondor's names and numbers, cheap import, bad input
refused before anything is sent, and a pool that is down reported at once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from htcpool import htcondor2
from htcpool.htcondor2._pool import use_pool
from tests.bindings.reference import real_htcondor2, requires_reference

ENUMS = ["AdType", "AdTypes", "DaemonType", "DaemonTypes", "JobAction", "JobStatus", "DrainType",
         "DrainTypes", "CompletionType", "VacateType", "QueryOpt", "QueryOpts", "TransactionFlag",
         "DaemonCommand", "DaemonCommands", "SubsystemType", "SubmitMethod", "HistorySrc", "LogLevel",
         "JobEventType"]


@requires_reference
@pytest.mark.parametrize("name", ENUMS)
def test_enumerations_have_htcondors_names_and_numbers(name: str) -> None:
    ours = {m.name: int(m.value) for m in getattr(htcondor2, name)}
    theirs = {m.name: int(m.value) for m in getattr(real_htcondor2, name)}
    ours.pop("Default", None)  # the flags' zero member, which htcondor2 names as well
    theirs.pop("Default", None)
    missing = {k: v for k, v in theirs.items() if k.startswith("EP_") is False and ours.get(k) != v}
    assert not missing


@requires_reference
def test_the_classes_and_functions_scripts_use_are_there() -> None:
    for name in ["Schedd", "Submit", "SubmitResult", "Collector", "Startd", "Negotiator", "JobEventLog",
                 "JobEvent", "param", "reload_config", "RemoteParam", "send_command", "enable_debug",
                 "enable_log", "HTCondorException", "set_subsystem", "ping"]:
        assert hasattr(real_htcondor2, name) and hasattr(htcondor2, name), name
    assert issubclass(htcondor2.HTCondorException, Exception)


def test_import_is_cheap() -> None:
    # what it imports, not how long it takes: 25 ms here on an idle host, over 100 ms on a loaded one
    code = ("import sys, time; before = set(sys.modules); t = time.perf_counter(); import htcpool.htcondor2; "
            "took = time.perf_counter() - t; print(took, *sorted(set(sys.modules) - before))")
    took, *modules = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.split()
    mine = [m for m in modules if m.startswith("htcpool")]
    assert mine == ["htcpool", "htcpool.htcondor2"], mine  # the rest is imported when first used
    assert len(modules) < 60, modules  # a few modules of the standard library
    assert float(took) <= 1.0


@pytest.fixture
def dead_pool(tmp_path: Path):
    """A pool directory with a token and daemon addresses, but no daemon listening."""
    import socket

    from htcpool.runtime.layout import PoolLayout

    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.ensure_token()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for daemon in ("collector", "negotiator", "schedd", "startd", "master"):
        layout.write_address(daemon, f"http://127.0.0.1:{port}")
    use_pool(layout.root)
    yield port
    use_pool(None)


def test_a_pool_that_is_down_is_reported_at_once_naming_daemon_and_address(dead_pool: int) -> None:
    calls = [lambda: htcondor2.Schedd().query(), lambda: htcondor2.Collector().query(),
             lambda: htcondor2.Negotiator().getPriorities(), lambda: htcondor2.Startd().vacate()]
    for call, daemon in zip(calls, ["schedd", "collector", "negotiator", "startd"], strict=True):
        started = time.monotonic()
        with pytest.raises(htcondor2.HTCondorException) as info:
            call()
        assert time.monotonic() - started < 5
        assert daemon in str(info.value) and f"127.0.0.1:{dead_pool}" in str(info.value)


def test_no_pool_at_all_is_reported(tmp_path: Path) -> None:
    use_pool(tmp_path / "nothing")
    try:
        with pytest.raises(htcondor2.HTCondorException, match="not running"):
            htcondor2.Schedd().query()
    finally:
        use_pool(None)


def test_bad_input_is_refused_before_anything_is_sent(dead_pool: int) -> None:
    schedd = htcondor2.Schedd()
    with pytest.raises(TypeError, match="JobAction"):
        schedd.act(7, "1.0")
    with pytest.raises(htcondor2.HTCondorException, match="Invalid constraint"):
        schedd.query("JobStatus ==")
    with pytest.raises(htcondor2.HTCondorException, match="Invalid projection"):
        schedd.query("true", ["ClusterId", "not an attribute"])
    with pytest.raises(htcondor2.HTCondorException, match="Invalid job id"):
        schedd.act(htcondor2.JobAction.Hold, ["1.x"])
    with pytest.raises(htcondor2.HTCondorException, match="Invalid value"):
        schedd.edit("1", "Foo", "1 +")
    with pytest.raises(htcondor2.HTCondorException, match="Invalid constraint"):
        htcondor2.Collector().query(htcondor2.AdType.Startd, "State ==")
    with pytest.raises(ValueError, match="full name"):
        htcondor2.Negotiator().setFactor("alice", 2.0)


def test_a_description_without_an_executable_is_refused_with_condor_submits_message(tmp_path: Path) -> None:
    from htcpool.htcondor2._submitting import build_jobs

    with pytest.raises(htcondor2.HTCondorException, match="(?i)executable"):
        build_jobs(htcondor2.Submit({"arguments": "1"}), 5, "alice")
    jobs = build_jobs(htcondor2.Submit({"executable": "/bin/echo", "arguments": "$(x) $(y)"}), 5,
                      "alice", itemdata=iter([{"x": "a b", "y": "c, d"}, {"x": "e", "y": ""}]))
    assert [(j["ClusterId"], j["ProcId"], j["Args"]) for j in jobs] == [(5, 0, "a b c, d"), (5, 1, "e")]
    jobs = build_jobs(htcondor2.Submit("executable = /bin/echo\nqueue 2"), 6, "alice", count=4)
    assert [j["ProcId"] for j in jobs] == [0, 1, 2, 3]
    jobs = build_jobs(htcondor2.Submit("executable = /bin/echo\narguments = $(Item)\nqueue"), 6, "alice",
                      itemdata=iter(["x", "y"]))
    assert [j["Args"] for j in jobs] == ["x", "y"]
    jobs = build_jobs(htcondor2.Submit("executable = /bin/echo\narguments = $(v)\nqueue 9"), 7, "alice",
                      queue="v in (p, q, r)")
    assert [(j["ClusterId"], j["Args"]) for j in jobs] == [(7, "p"), (7, "q"), (7, "r")]
    jobs = build_jobs(htcondor2.Submit("executable = /bin/echo\narguments = $(v)\nqueue v from (\n1\n2\n)"),
                      8, "alice")
    assert [j["Args"] for j in jobs] == ["1", "2"]
    assert build_jobs(htcondor2.Submit({"executable": "/bin/echo"}), 9, "alice", itemdata=None)[0]["ProcId"] == 0
