"""The htcondor2 bindings against a live personal pool, started by ``PersonalPool`` itself.

Every class and method of ``htcpool.htcondor2`` is called as a script would; each test
waits for the outcome it is about with a deadline and fails with what it saw. Also here:
HTCondor's own ``htcondor2.JobEventLog`` reading the live pool's user log, the manual's
tour (examples/python/manual_tour.py) run with only its import changed, and
dask-jobqueue's HTCondorCluster scaling to two workers through the ``condor_submit`` and
``condor_rm`` that installing htcpool puts on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from htcpool import htcondor2
from htcpool.htcondor2.personal import PersonalPool, PersonalPoolState

ROOT = Path(__file__).resolve().parents[2]
FAST = {"NEGOTIATOR_INTERVAL": "2", "NEGOTIATOR_MIN_INTERVAL": "0.1", "SCHEDD_INTERVAL": "2",
        "UPDATE_INTERVAL": "2", "POLLING_INTERVAL": "1", "MASTER_BACKOFF_CONSTANT": "1"}


def wait_for(probe: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    seen: Any = None
    while time.monotonic() < deadline:
        try:
            seen = probe()
        except htcondor2.HTCondorException as e:
            seen = e
        else:
            if seen:
                return seen
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s; last saw {seen!r}")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PersonalPool]:
    root = tmp_path_factory.mktemp("bindings")
    here = os.getcwd()
    os.chdir(root)
    personal = PersonalPool(local_dir=root / "pool", config=FAST, raw_config="# the bindings' tests\n")
    try:
        with personal:
            yield personal
    finally:
        os.chdir(here)
    assert personal.state is PersonalPoolState.STOPPED


def finished(schedd: Any, cluster: int, procs: int) -> list[Any]:
    done = schedd.history(f"ClusterId == {cluster}", ["ProcId", "ExitCode", "JobStatus"])
    return done if len(done) == procs else []


def test_personal_pool(pool: PersonalPool) -> None:
    assert pool.state is PersonalPoolState.READY
    who = pool.who()
    assert who["MASTER"] == "Alive" and who["SCHEDD"] == "Alive" and who["IsReady"] is True
    assert pool.get_config_val("NEGOTIATOR_INTERVAL") == "2"
    assert pool.get_config_val("NO_SUCH_KNOB", "fallback") == "fallback"
    with pytest.raises(KeyError):
        pool.get_config_val("NO_SUCH_KNOB")
    done = pool.run_command([sys.executable, "-m", "htcpool", "status"])
    assert done.returncode == 0 and "slot1" in done.stdout
    assert os.environ["CONDOR_CONFIG"] == str(pool.config_file)
    assert pool.collector.query(htcondor2.AdType.Schedd, projection=["Name"])
    assert pool.schedd.query(projection=["ClusterId"]) is not None


def test_submit_query_events_and_history(pool: PersonalPool, tmp_path: Path) -> None:
    import htcondor2 as real_htcondor2

    schedd = htcondor2.Schedd()
    log = tmp_path / "jobs.log"
    description = htcondor2.Submit({"executable": "/bin/sh",
                                    "arguments": '"-c \'echo $(word) $(n); exit $(n)\'"',
                                    "output": str(tmp_path / "out.$(Process)"), "log": str(log),
                                    "request_memory": "16MB"})
    result = schedd.submit(description, itemdata=iter([{"word": "a b", "n": "3"}, {"word": "c", "n": "0"}]))
    assert (result.num_procs(), result.first_proc()) == (2, 0)
    assert result.clusterad()["ClusterId"] == result.cluster() and result.procad()["ProcId"] == 0
    queued = schedd.query(f"ClusterId == {result.cluster()}", ["ProcId", "Arguments"])
    assert sorted(ad["ProcId"] for ad in queued) in ([], [0, 1], [1])  # some may have finished
    assert all(set(ad.keys()) <= {"ProcId", "Arguments"} for ad in queued)
    assert len(schedd.query(f"ClusterId == {result.cluster()}", ["ProcId"], limit=1)) <= 1
    ends = {}
    for event in htcondor2.JobEventLog(str(log)).events(stop_after=60):
        if event.type == htcondor2.JobEventType.JOB_TERMINATED:
            ends[event.proc] = event["ReturnValue"]
            if len(ends) == 2:
                break
    assert ends == {0: 3, 1: 0}
    theirs = [e for e in real_htcondor2.JobEventLog(str(log)).events(0)
              if e.type == real_htcondor2.JobEventType.JOB_TERMINATED]
    assert sorted((e.proc, e["ReturnValue"]) for e in theirs) == [(0, 3), (1, 0)]
    assert (tmp_path / "out.0").read_text() == "a b 3\n"
    history = wait_for(lambda: finished(schedd, result.cluster(), 2), "both jobs in the history")
    assert sorted((ad["ProcId"], ad["ExitCode"]) for ad in history) == [(0, 3), (1, 0)]
    assert set(history[0].keys()) <= {"ProcId", "ExitCode", "JobStatus"}
    assert len(schedd.history(f"ClusterId == {result.cluster()}", match=1)) == 1
    assert schedd.history(f"ClusterId == {result.cluster()}", since=f"{result.cluster()}.1") == [] or \
        history[0]["ProcId"] == 0
    counted = schedd.submit(htcondor2.Submit("executable = /bin/true\nrequest_memory = 16MB\nqueue 2"), count=3)
    assert counted.num_procs() == 3
    wait_for(lambda: finished(schedd, counted.cluster(), 3), "the counted cluster done")


def test_act_edit_summary_and_reschedule(pool: PersonalPool) -> None:
    schedd = htcondor2.Schedd()
    result = schedd.submit(htcondor2.Submit({"executable": "/bin/sleep", "arguments": "300",
                                             "request_memory": "16MB"}), count=2)
    cluster = result.cluster()
    held = schedd.act(htcondor2.JobAction.Hold, [f"{cluster}.0"], "held by the test")
    assert held["TotalSuccess"] == 1 and held["TotalJobAds"] == 1, (held, schedd.query(f"ClusterId == {cluster}"))
    again = schedd.act(htcondor2.JobAction.Hold, f"{cluster}.0")
    assert again["TotalSuccess"] == 0 and again["TotalAlreadyDone"] == 1
    ad = schedd.query(f"ClusterId == {cluster} && ProcId == 0", ["JobStatus", "HoldReason"])[0]
    assert (ad["JobStatus"], ad["HoldReason"]) == (htcondor2.JobStatus.HELD, "held by the test")
    assert schedd.edit(cluster, "Foo", '"bar"') == 2
    from htcpool import classad2

    assert schedd.edit([f"{cluster}.1"], "Bar", classad2.ExprTree("1 + 2")) == 1
    ads = schedd.query(f"ClusterId == {cluster}", ["ProcId", "Foo", "Bar"])
    assert sorted((a["ProcId"], a["Foo"], str(a.lookup("Bar")) if "Bar" in a else None) for a in ads) == \
        [(0, "bar", None), (1, "bar", "1 + 2")]
    summary = schedd.query(f"ClusterId == {cluster}", opts=htcondor2.QueryOpt.SummaryOnly)
    assert summary[0]["Jobs"] == 2 and summary[0]["Held"] == 1
    mine = schedd.query(projection=["Owner"], opts=htcondor2.QueryOpt.DefaultMyJobsOnly)
    assert {a["Owner"] for a in mine} <= {os.environ.get("USER") or __import__("getpass").getuser()}
    assert schedd.query(f"ClusterId == {cluster}", ["ProcId"], callback=lambda a: a["ProcId"] * 10) \
        in ([0, 10], [10, 0])
    released = schedd.act(htcondor2.JobAction.Release, f"ClusterId == {cluster} && ProcId == 0")
    assert released["TotalSuccess"] == 1
    schedd.reschedule()
    wait_for(lambda: schedd.query(f"ClusterId == {cluster} && JobStatus == 2", ["ProcId"]),
             "a sleeper running")
    removed = schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")
    assert removed["TotalSuccess"] == 2
    missing = schedd.act(htcondor2.JobAction.Hold, ["99999.0"])
    assert missing["TotalSuccess"] == 0 and missing["TotalNotFound"] == 1
    with pytest.raises(htcondor2.HTCondorException, match="AutoCluster"):
        schedd.query(opts=htcondor2.QueryOpt.AutoCluster)


def test_collector(pool: PersonalPool) -> None:
    collector = htcondor2.Collector()
    slots = collector.query(htcondor2.AdTypes.Startd, "true", ["Name", "State"])
    assert slots and all(set(ad.keys()) <= {"Name", "State"} for ad in slots)
    for ad_type in (htcondor2.AdType.Schedd, htcondor2.AdType.Negotiator, htcondor2.AdType.Master,
                    htcondor2.AdType.Collector):
        assert collector.query(ad_type, projection=["Name"]), ad_type
    schedd_location = collector.locate(htcondor2.DaemonTypes.Schedd)
    assert schedd_location["MyAddress"].startswith("http://127.0.0.1:")
    assert htcondor2.Schedd(schedd_location).query(projection=["ClusterId"]) is not None
    startds = collector.locateAll(htcondor2.DaemonTypes.Startd)
    assert len(startds) == 1
    direct = collector.directQuery(htcondor2.DaemonTypes.Startd, projection=["Name", "Cpus"])
    assert "Cpus" in direct
    verbose = collector.directQuery(htcondor2.DaemonTypes.Startd, statistics="DC:2")
    assert verbose["DCRecentWindowMax"] == 1200  # the statistics asked for (docs/statistics.md)
    [own] = collector.query(htcondor2.AdType.Collector, statistics="COLLECTOR:2")
    assert own["RecentWindowMax"] == 1200 and own["UpdatesTotal"] > 0
    with pytest.raises(htcondor2.HTCondorException, match="Unable to find"):
        collector.locate(htcondor2.DaemonTypes.Schedd, "no-such-schedd")
    from htcpool.classad import ClassAd

    ad = ClassAd({"MyType": "Generic", "Name": "bindings-test", "Answer": 42})
    collector.advertise([ad])
    found = collector.query(htcondor2.AdType.Generic, 'Name == "bindings-test"', ["Answer"])
    assert [a["Answer"] for a in found] == [42]
    collector.advertise([ad], "INVALIDATE_ADS_GENERIC")
    assert collector.query(htcondor2.AdType.Generic, 'Name == "bindings-test"') == []
    assert htcondor2.ping(schedd_location)["Daemon"]


def test_negotiator(pool: PersonalPool) -> None:
    negotiator = htcondor2.Negotiator()
    schedd = htcondor2.Schedd()
    job = schedd.submit(htcondor2.Submit({"executable": "/bin/sleep", "arguments": "300",
                                          "request_memory": "16MB"}))
    running = wait_for(lambda: schedd.query(f"ClusterId == {job.cluster()} && JobStatus == 2", ["User"]),
                       "the job running")
    user = running[0]["User"]
    usage = wait_for(lambda: negotiator.getResourceUsage(user), "the user's slot in use")
    assert usage[0]["RemoteUser"] == user

    def record() -> Any:
        return next((ad for ad in negotiator.getPriorities() if ad["Name"] == user), None)

    wait_for(record, "the user's accounting record")
    negotiator.setFactor(user, 250.0)
    assert record()["PriorityFactor"] == 250.0
    negotiator.setPriority(user, 42.0)
    assert abs(record()["Priority"] - 42.0 * 250.0) < 1e-6 or record()["Priority"] > 0
    negotiator.setUsage(user, 1234.0)
    assert record()["WeightedAccumulatedUsage"] == pytest.approx(1234.0, rel=0.01)
    negotiator.setCeiling(user, 7)
    assert record()["Ceiling"] == 7
    negotiator.setBeginUsage(user, 1_000_000)
    assert record()["BeginUsageTime"] == 1_000_000
    negotiator.setLastUsage(user, 2_000_000)
    assert record()["LastUsageTime"] in (2_000_000, pytest.approx(time.time(), abs=60))
    negotiator.resetUsage(user)
    assert record()["WeightedAccumulatedUsage"] < 100
    negotiator.resetAllUsage()
    with pytest.raises(htcondor2.HTCondorException, match="(?i)factor"):
        negotiator.setFactor(user, 0.5)
    schedd.act(htcondor2.JobAction.Remove, job.cluster())
    with pytest.raises(htcondor2.HTCondorException, match="no accountant record"):
        negotiator.deleteUser("nobody-at-all@localhost")
    negotiator.deleteUser(user)


def test_startd_drain_vacate(pool: PersonalPool) -> None:
    startd = htcondor2.Startd()
    collector = htcondor2.Collector()
    request_id = startd.drainJobs(htcondor2.DrainTypes.Fast, reason="bindings test")
    assert isinstance(request_id, str)
    wait_for(lambda: collector.query(htcondor2.AdType.Startd, "Draining =?= true || State == \"Drained\"",
                                     ["Name"]), "the startd draining")
    startd.cancelDrainJobs(request_id or None)
    wait_for(lambda: not collector.query(htcondor2.AdType.Startd, "Draining =?= true", ["Name"]),
             "draining cancelled")
    startd.vacate(htcondor2.VacateType.Fast)
    located = htcondor2.Startd(collector.locate(htcondor2.DaemonType.Startd))
    located.vacate()


def test_param_remote_param_and_commands(pool: PersonalPool) -> None:
    assert htcondor2.param["NEGOTIATOR_INTERVAL"] == "2"
    assert "NEGOTIATOR_INTERVAL" in htcondor2.param and "NO_SUCH_KNOB" not in htcondor2.param
    htcondor2.param["MY_KNOB"] = "x"
    assert htcondor2.param["MY_KNOB"] == "x"
    del htcondor2.param["MY_KNOB"]
    assert htcondor2.param.get("MY_KNOB") is None
    with open(pool.config_file, "a") as f:
        f.write("SCHEDD.BINDINGS_KNOB = schedd\nBINDINGS_KNOB = everyone\n")
    htcondor2.reload_config()
    assert htcondor2.param["BINDINGS_KNOB"] == "everyone"
    htcondor2.set_subsystem("SCHEDD")
    try:
        assert htcondor2.param["BINDINGS_KNOB"] == "schedd"
    finally:
        htcondor2.set_subsystem("TOOL")
    location = htcondor2.Collector().locate(htcondor2.DaemonTypes.Schedd)
    remote = htcondor2.RemoteParam(location)
    assert remote["BINDINGS_KNOB"] == "schedd"
    with pytest.raises(htcondor2.HTCondorException):
        remote["BINDINGS_KNOB"] = "no"
    master = htcondor2.Collector().locate(htcondor2.DaemonTypes.Master)
    htcondor2.send_command(location, htcondor2.DaemonCommands.Reconfig)
    htcondor2.send_command(master, htcondor2.DaemonCommands.DaemonOff, "NEGOTIATOR")
    wait_for(lambda: pool.who()["NEGOTIATOR"] == "Stopped", "the negotiator off")
    htcondor2.send_command(master, htcondor2.DaemonCommands.DaemonOn, "NEGOTIATOR")
    wait_for(lambda: pool.who()["NEGOTIATOR"] == "Alive", "the negotiator on again")
    htcondor2.enable_debug()
    htcondor2.disable_debug()


def test_the_manuals_tour_runs_with_only_its_import_changed(pool: PersonalPool, tmp_path: Path) -> None:
    script = ROOT / "examples" / "python" / "manual_tour.py"
    text = script.read_text()
    assert "from htcpool import htcondor2" in text and "\nimport htcondor2" not in text
    done = pool.run_command([sys.executable, str(script)], cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exit code 0" in done.stdout


def test_dask_jobqueue_scales_to_two_workers_and_computes(pool: PersonalPool, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dask_jobqueue")
    from dask_jobqueue import HTCondorCluster
    from distributed import Client

    bin_dir = os.path.dirname(sys.executable)  # where installing htcpool put condor_submit, condor_rm
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("HTCPOOL_LOCAL_DIR", str(pool.local_dir))
    assert shutil.which("condor_submit") and shutil.which("condor_rm")
    with HTCondorCluster(cores=1, memory="256MB", disk="100MB", processes=1, python=sys.executable,
                         log_directory=str(tmp_path / "logs"), scheduler_options={"host": "127.0.0.1"},
                         worker_extra_args=["--host", "127.0.0.1"]) as cluster:
        cluster.scale(2)
        with Client(cluster) as client:
            client.wait_for_workers(2, timeout=90)
            assert client.submit(lambda x: x * 2, 21).result(timeout=60) == 42
            assert sum(client.gather(client.map(lambda x: x * x, range(10)))) == 285
        cluster.scale(0)
    schedd = htcondor2.Schedd()
    wait_for(lambda: not schedd.query('JobBatchName =?= "dask-worker" && JobStatus == 2', ["ProcId"]),
             "the dask workers gone")
