"""condor_wait, condor_watch_q, classad_eval, condor_qedit, condor_version, the extra condor_q and
condor_status views, and how tools find their pool: each as its documentation says, without a pool."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from htcpool.classad import ClassAd, parseOne
from htcpool.cli import classad_eval, qedit, version, wait
from htcpool.cli.common import ToolError
from htcpool.cli.formats.qviews import dag_order, format_autocluster, format_io, human_bytes
from htcpool.cli.formats.status import format_status
from htcpool.cli.formats.watch import Tracker, exit_reached, format_watch, groups
from htcpool.cli.locate import LocateError, pool_dir
from htcpool.cli.userlog import WaitState, WaitTracker, parse_events, parse_job

GOLDEN_LOG = Path(__file__).parents[3] / "shared" / "golden" / "tools" / "sleep.log"

SUBMIT = "000 ({c:03d}.{p:03d}.000) 2026-11-22 00:20:22 Job submitted from host: <127.0.0.1:1>\n...\n"
DONE = ("005 ({c:03d}.{p:03d}.000) 2026-11-22 00:20:43 Job terminated.\n"
        "\t(1) Normal termination (return value 0)\n...\n")


def test_parse_events_keeps_an_unfinished_event_for_later():
    text = SUBMIT.format(c=1, p=0) + DONE.format(c=1, p=0)[:40]
    events, used = parse_events(text)
    assert [(e.code, e.cluster, e.proc) for e in events] == [(0, 1, 0)]
    assert used == len(SUBMIT.format(c=1, p=0))
    if GOLDEN_LOG.exists():  # HTCondor's own log: submit, execute, image size, terminate
        codes = [e.code for e in parse_events(GOLDEN_LOG.read_text())[0]]
        assert codes[0] == 0 and 5 in codes and 1 in codes


def test_condor_wait_reads_a_factorys_cluster_events_and_waits_for_its_jobs():
    cluster = ("035 (001.-01.000) 2026-11-22 00:20:22 Cluster submitted from host: <127.0.0.1:1>\n...\n",
               "036 (001.-01.000) 2026-11-22 00:20:44 Cluster removed\n"
               "\tMaterialized 1 jobs from 1 items.\tComplete\n...\n")
    events, used = parse_events(cluster[0] + SUBMIT.format(c=1, p=0) + DONE.format(c=1, p=0) + cluster[1])
    assert [(e.code, e.proc) for e in events] == [(35, -1), (0, 0), (5, 0), (36, -1)]
    tracker = WaitTracker(parse_job("1"))
    for e in events:
        tracker.take(e)
    assert tracker.state is WaitState.ALL_DONE and tracker.seen == 1


def test_wait_tracker_all_one_job_and_number():
    events, _ = parse_events(SUBMIT.format(c=1, p=0) + SUBMIT.format(c=1, p=1) + DONE.format(c=1, p=0))
    everything = WaitTracker()
    one = WaitTracker(parse_job("1.0"))
    two = WaitTracker(number=2)
    for e in events:
        for t in (everything, one, two):
            t.take(e)
    assert everything.state is WaitState.WAITING and one.state is WaitState.ALL_DONE
    assert two.state is WaitState.WAITING
    assert WaitTracker(number=1, finished=1).state is WaitState.NUMBER_DONE
    with pytest.raises(ValueError):
        parse_job("1.x")


def test_condor_wait_follows_a_growing_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    log = tmp_path / "job.log"
    log.write_text(SUBMIT.format(c=4, p=0))

    def finish() -> None:
        time.sleep(0.5)
        with log.open("a") as f:
            f.write(DONE.format(c=4, p=0))

    threading.Thread(target=finish).start()
    assert wait.main(["-status", str(log)]) == 0
    assert capsys.readouterr().out == "4.0.0 submitted\n4.0.0 completed\nAll jobs done.\n"
    assert wait.main(["-wait", "0.3", str(log), "5"]) == 1
    assert capsys.readouterr().out == "Time expired.\n"
    assert wait.main(["-num", "1", str(log)]) == 0
    assert capsys.readouterr().out == "Specified number of jobs (1) done.\n"
    assert wait.main([str(tmp_path / "missing.log")]) == 1
    assert "Couldn't open log file" in capsys.readouterr().err


def _job(cluster: int, proc: int, status: int, total: int = 3, **extra: object) -> ClassAd:
    return ClassAd({"ClusterId": cluster, "ProcId": proc, "JobStatus": status, "TotalSubmitProcs": total,
                    "Owner": "alice", **extra})


def test_watch_rows_count_jobs_that_left_as_done_and_show_hold_only_when_held():
    tracker = Tracker()
    jobs = [_job(7, 1, 2), _job(7, 2, 1)]
    tracker.see(jobs)
    rows = groups(tracker, jobs)
    text = format_watch(rows, now=0, bar_width=9)
    assert text.splitlines()[0] == "BATCH  IDLE  RUN  DONE  TOTAL  JOB_IDS"
    assert text.splitlines()[1] == "ID: 7     1    1     1      3  7.1-2   [===>>>---]"
    assert "Total: 3 jobs; 1 completed, 1 running, 1 idle" in text
    assert text.endswith("Updated at 1970-01-01 00:00:00\n")
    held = groups(tracker, [_job(7, 1, 5)])
    assert "HOLD" in format_watch(held, now=0, updated_at=False)
    assert exit_reached(held, "any", "held") and not exit_reached(held, "all", "done")
    assert exit_reached(groups(tracker, []), "all", "done") and exit_reached([], "all", "done")
    assert exit_reached(rows, "none", "held")
    with pytest.raises(ValueError):
        exit_reached(rows, "most", "done")


def test_classad_eval_prints_the_ad_when_it_changed_then_values(capsys: pytest.CaptureFixture[str]):
    assert classad_eval.main(["a = 2", "b = a + 1", "a * b", "[c = \"x\"]", "strcat(c, a)", "nope"]) == 0
    assert capsys.readouterr().out == '[ a = 2; b = a + 1 ]\n6\n[ a = 2; b = a + 1; c = "x" ]\n"x2"\nundefined\n'
    assert classad_eval.main(["-quiet", "x = 1; y = 2", "x + y"]) == 0
    assert capsys.readouterr().out == "3\n"
    assert classad_eval.main(["1 +"]) == 1
    assert "cannot parse" in capsys.readouterr().err


def test_classad_eval_reads_ads_from_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "my").write_text("Memory = 2048\n")
    (tmp_path / "target").write_text("RequestMemory = 1024\n")
    argv = ["-quiet", "-file", str(tmp_path / "my"), "-target-file", str(tmp_path / "target"),
            "MY.Memory >= TARGET.RequestMemory"]
    assert classad_eval.main(argv) == 0
    assert capsys.readouterr().out == "true\n"


def test_qedit_refuses_identity_attributes_and_reads_edit_files(tmp_path: Path):
    with pytest.raises(ToolError, match='Update of attribute "procid" is not allowed.'):
        qedit.check_edits([("procid", "3")])
    with pytest.raises(ToolError, match="not a ClassAd expression"):
        qedit.check_edits([("Foo", "1 +")])
    edits = tmp_path / "edits"
    edits.write_text("# comment\nFoo = \"bar\"\n\nRank = Memory * 2\n")
    assert qedit.read_edits(str(edits)) == [("Foo", '"bar"'), ("Rank", "Memory * 2")]
    edits.write_text("Foo\n")
    with pytest.raises(ToolError, match="line 1"):
        qedit.read_edits(str(edits))


def test_qedit_dryrun_prints_the_edits(capsys: pytest.CaptureFixture[str]):
    assert qedit.main(["-dryrun", "3.1", "Foo", '"bar"', "JobPrio", "4"]) == 0
    assert capsys.readouterr().out == 'Foo = "bar"\nJobPrio = 4\n'
    assert qedit.main(["3.1", "Foo"]) == 1


def test_version_lines(capsys: pytest.CaptureFixture[str]):
    assert version.main([]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("$CondorVersion: 25.") and first.endswith(" $")
    assert second.startswith("$CondorPlatform: ") and second.endswith(" $")


def test_io_autocluster_and_dag_views():
    jobs = [_job(1, 0, 2, NumJobStarts=1, BytesRecvd=2048.0, BytesSent=0.0, RemoteWallClockTime=0.0,
                 JobCurrentStartDate=90, RequestCpus=1, RequestMemory=128, Requirements=True),
            _job(2, 0, 1, RequestCpus=1, RequestMemory=128, Requirements=True),
            _job(3, 0, 1, RequestCpus=2, RequestMemory=128, Requirements=True)]
    io = format_io(jobs, now=100).splitlines()
    assert io[0].split() == ["ID", "OWNER", "RUNS", "ST", "INPUT", "OUTPUT", "RATE", "MISC"]
    assert io[1].split() == ["1.0", "alice", "1", "R", "2.0", "KB", "0", "B", "205", "B/s", "-"]
    auto = format_autocluster(jobs).splitlines()
    assert [line.split()[:2] for line in auto[1:]] == [["1", "2"], ["2", "1"]]
    assert human_bytes(3 * 1024 * 1024) == "3.0 MB"
    dag = [_job(10, 0, 2), _job(11, 0, 1, DAGManJobId=10, DAGNodeName="A"), _job(12, 0, 1)]
    assert [str(j["Owner"]) for j in dag_order(dag)] == ["alice", " |-A", "alice"]


def test_status_views_state_server_and_compact():
    slots = [parseOne('[Name = "slot1@m"; Machine = "m"; OpSys = "LINUX"; Arch = "X86_64"; State = "Unclaimed"; '
                      'Activity = "Idle"; Cpus = 4; Memory = 2048; Disk = 100; CondorLoadAvg = 0.0; '
                      'PartitionableSlot = true; TotalSlotCpus = 4; TotalSlotMemory = 4096; '
                      'EnteredCurrentState = 0; EnteredCurrentActivity = 0; MyCurrentTime = 60]'),
             parseOne('[Name = "slot1_1@m"; Machine = "m"; OpSys = "LINUX"; Arch = "X86_64"; State = "Claimed"; '
                      'Activity = "Busy"; Cpus = 2; Memory = 2048; DynamicSlot = true; CondorLoadAvg = 1.0]')]
    state = format_status(slots, view="state", now=60).splitlines()
    assert state[0].split()[:6] == ["Name", "Cpu", "Mem", "LoadAv", "KbdIdle", "State"]
    assert "0+00:01:00" in state[2]
    assert format_status(slots, view="server", now=0).splitlines()[0].split()[-2:] == ["Mips", "KFlops"]
    compact = format_status(slots, view="compact", now=0).splitlines()
    assert compact[2].split() == ["m", "x86_64/LINUX", "2", "4", "0", "4.00", "4", "2.00", "1.00", "UI", "1"]


def test_pool_is_found_through_condor_config_then_the_default(tmp_path: Path):
    assert pool_dir(environ={"HTCPOOL_LOCAL_DIR": str(tmp_path)}) == tmp_path
    (tmp_path / "pool.token").write_text("t")
    (tmp_path / "condor_config").write_text("LOCAL_DIR = /elsewhere\n")
    assert pool_dir(environ={"CONDOR_CONFIG": str(tmp_path / "condor_config")}) == tmp_path
    own = tmp_path / "mine"
    own.mkdir()
    (own / "config").write_text(f"LOCAL_DIR = {tmp_path}/p\n")
    assert pool_dir(environ={"CONDOR_CONFIG": str(own / "config"), "HTCPOOL_LOCAL_DIR": "/x"}) == tmp_path / "p"
    (own / "empty").write_text("A = 1\n")
    with pytest.raises(LocateError, match="sets no LOCAL_DIR"):
        pool_dir(environ={"CONDOR_CONFIG": str(own / "empty")})
    assert pool_dir("/explicit", environ={"CONDOR_CONFIG": str(own / "config")}) == Path("/explicit")


HISTORY_FILE = """\
ClusterId = 1
ProcId = 0
Owner = "alice"
JobStatus = 4
CompletionDate = 100
Cmd = "/bin/true"
*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = "alice" CompletionDate = 100
ClusterId = 2
ProcId = 0
Owner = "bob"
JobStatus = 3
CompletionDate = 0
*** Offset = 90 ClusterId = 2 ProcId = 0 Owner = "bob" CompletionDate = 0
ClusterId = 3
ProcId = 0
Owner = "alice"
JobStatus = 4
CompletionDate = 300
*** Offset = 160 ClusterId = 3 ProcId = 0 Owner = "alice" CompletionDate = 300
"""


def _history(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    from htcpool.cli import history

    path = tmp_path / "history"
    path.write_text(HISTORY_FILE)
    assert history.main(["-file", str(path), *argv, "-af", "ClusterId"]) == 0
    return capsys.readouterr().out


def test_history_file_scan_order_and_stop_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert _history(tmp_path, capsys) == "3\n2\n1\n"  # newest first
    assert _history(tmp_path, capsys, "-forwards") == "1\n2\n3\n"
    assert _history(tmp_path, capsys, "-limit", "2") == "3\n2\n"
    assert _history(tmp_path, capsys, "-match", "1", "-forwards") == "1\n"
    assert _history(tmp_path, capsys, "alice") == "3\n1\n"
    assert _history(tmp_path, capsys, "-constraint", "JobStatus == 3") == "2\n"
    assert _history(tmp_path, capsys, "-since", "2") == "3\n"
    assert _history(tmp_path, capsys, "-since", "Owner == \"bob\"") == "3\n"
    assert _history(tmp_path, capsys, "-scanlimit", "1") == "3\n"
    assert _history(tmp_path, capsys, "-completedsince", "200") == "3\n2\n"  # bob's never completed


def test_q_reads_job_ads_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from htcpool.cli import q

    path = tmp_path / "jobs"
    path.write_text('ClusterId = 5\nProcId = 0\nOwner = "alice"\nJobStatus = 1\n\n'
                    'ClusterId = 5\nProcId = 1\nOwner = "alice"\nJobStatus = 2\n\n')
    assert q.main(["-jobads", str(path), "-allusers", "-af:j", "JobStatus"]) == 0
    assert capsys.readouterr().out == "5.0 1\n5.1 2\n"
    assert q.main(["-jobads", str(path), "-allusers", "-idle", "-format", "%d\\n", "ProcId"]) == 0
    assert capsys.readouterr().out == "0\n"
    assert q.main(["-jobads", str(path), "-allusers", "-limit", "1", "-xml", "-attributes", "ProcId"]) == 0
    assert '<a n="ProcId"><i>0</i></a>' in capsys.readouterr().out
