"""condor_history's formats, the default table checked against HTCondor's output byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime

from htcpool.schedd import JobQueue, MemoryStore
from htcpool.schedd.history import format_autoformat, format_history, format_long
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


def test_completed_jobs_newest_first_with_run_time() -> None:
    store = MemoryStore()
    q = JobQueue(store=store)
    jobs = submit_description("executable = /bin/echo\narguments = \"hello there\"\nqueue 2\n",
                              host=golden_host(SUBMITTED), fs=golden_fs()).jobs
    q.submit("alice", jobs, SUBMITTED)
    for proc in (0, 1):
        q.start((1, proc), SUBMITTED + 60)
        q.finish((1, proc), SUBMITTED + 60 + 90061 * (proc + 1))
    lines = format_history(store.history, zone=3600).splitlines()
    assert lines[1] == "1.1          alice        11/22 01:47   2+02:02:02 C  11/24 03:50 echo hello there"
    assert lines[2] == "1.0          alice        11/22 01:47   1+01:01:01 C  11/23 02:49 echo hello there"


def test_long_and_autoformat() -> None:
    history = removed_cluster_3().history
    long = format_long(history, attributes=["Owner", "clusterid", "RequestMemory", "Cmd"])
    assert long == 'ClusterId = 3\nCmd = "/bin/sleep"\nOwner = "alice"\nRequestMemory = 999999\n\n'
    full = format_long(history).splitlines()
    assert full[-1] == "" and full[0] == "Args = \"300\""
    names = [line.split(" = ")[0].lower() for line in full[:-1]]
    assert names == sorted(names) and "removereason" in names
    assert format_autoformat(history, ["ClusterId", "Owner", "JobStatus", "Cmd", "RequestMemory * 2",
                                       "NoSuchAttribute", "time() - QDate"], now=SUBMITTED + 100) == \
        "3 alice 3 /bin/sleep 1999998 undefined 100\n"
