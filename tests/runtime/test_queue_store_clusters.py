"""The queue store keeps a cluster as one cluster ad and each job's changes from it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.runtime.queue_store import SqliteQueueStore


def cluster_jobs(cluster: int, count: int) -> list[ClassAd]:
    """Job ads as the schedd admits them: copies of one ad, each with its own ProcId."""
    first = ClassAd({"ClusterId": cluster, "Owner": "alice", "JobStatus": 1, "Cmd": "/bin/sleep",
                     "Args": "60", "ProcId": 0})
    first.insert_node("Requirements", ExprTree("TARGET.Memory >= RequestMemory")._node)
    ads = []
    for proc in range(count):
        ad = first.copy()
        ad["ProcId"] = proc
        ads.append(ad)
    return ads


def rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as raw:
        order = "cluster, proc" if table == "jobs" else "cluster"
        columns = "cluster, proc, ad, base" if table == "jobs" else "cluster, ad"
        return raw.execute(f"SELECT {columns} FROM {table} ORDER BY {order}").fetchall()


def test_a_cluster_is_one_ad_and_rows_of_changes(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(4, 3)
    with SqliteQueueStore(path) as store, store.batch():
        for proc, ad in enumerate(ads):
            store.save_job((4, proc), ad)
        store.save_next_cluster(5)
    assert len(rows(path, "clusters")) == 1
    assert rows(path, "jobs") == [(4, 0, "[ ]", 1), (4, 1, "[ ]", 1), (4, 2, "[ ]", 1)]
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
        assert [repr(jobs[(4, proc)]) for proc in range(3)] == [repr(ad) for ad in ads]
        # the loaded jobs share their cluster ad's expressions, as submitted jobs do
        assert jobs[(4, 0)]._exprs["requirements"] is jobs[(4, 2)]._exprs["requirements"]
        assert again.problems == []


def test_changed_added_dropped_and_renumbered_attributes_read_back(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(1, 5)
    ads[1]["JobStatus"] = 2  # changed
    ads[2]["RemoteHost"] = "slot1@host"  # added
    del ads[3]["Args"]  # dropped: the job is stored whole
    ads[4]["ProcId"] = 40  # not the row's proc: stored with the job
    with SqliteQueueStore(path) as store:
        for proc, ad in enumerate(ads):
            store.save_job((1, proc), ad)
    stored = {proc: (text, base) for _, proc, text, base in rows(path, "jobs")}
    assert stored[1] == ("[ JobStatus = 2 ]", 1)
    assert stored[2] == ('[ RemoteHost = "slot1@host" ]', 1)
    assert stored[3][1] == 0 and "Cmd" in str(stored[3][0])
    assert stored[4] == ("[ ProcId = 40 ]", 1)
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
    assert [repr(jobs[(1, proc)]) for proc in range(5)] == [repr(ad) for ad in ads]


def test_the_cluster_ad_goes_with_the_clusters_last_job(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteQueueStore(path) as store:
        with store.batch():
            for proc, ad in enumerate(cluster_jobs(2, 2)):
                store.save_job((2, proc), ad)
        store.delete_job((2, 0))
        assert len(rows(path, "clusters")) == 1
        store.delete_job((2, 1))
        assert rows(path, "clusters") == [] and rows(path, "jobs") == []
        later = cluster_jobs(2, 1)[0]  # a job of that cluster saved again gets a new cluster ad
        later["JobStatus"] = 5
        store.save_job((2, 0), later)
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
    assert list(jobs) == [(2, 0)] and jobs[(2, 0)]["JobStatus"] == 5


def test_a_failed_batch_leaves_no_cluster_ad_behind(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    store = SqliteQueueStore(path)
    first = cluster_jobs(3, 2)
    with pytest.raises(RuntimeError), store.batch():
        for proc, ad in enumerate(first):
            store.save_job((3, proc), ad)
        raise RuntimeError("rejected")
    assert rows(path, "clusters") == []
    second = cluster_jobs(3, 2)
    for ad in second:
        ad["Cmd"] = "/bin/true"
    with store.batch():  # the cluster ad of the failed batch was forgotten with it
        for proc, ad in enumerate(second):
            store.save_job((3, proc), ad)
    store.close()
    jobs, _ = SqliteQueueStore(path).load()
    assert [jobs[(3, proc)]["Cmd"] for proc in range(2)] == ["/bin/true", "/bin/true"]


def test_a_damaged_cluster_ad_skips_its_jobs_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    with SqliteQueueStore(path) as store:
        for proc, ad in enumerate(cluster_jobs(5, 2)):
            store.save_job((5, proc), ad)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE clusters SET ad = '[ Owner = ' WHERE cluster = 5")
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
        assert jobs == {}
        assert any("the ad of cluster 5 skipped" in p for p in again.problems)
        assert any("job 5.1 skipped: its cluster ad is missing or damaged" in p for p in again.problems)


def test_a_file_of_the_first_schema_is_upgraded_and_read(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ad = cluster_jobs(7, 1)[0]
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE jobs (cluster INTEGER NOT NULL, proc INTEGER NOT NULL, ad TEXT NOT NULL,"
                    " PRIMARY KEY (cluster, proc)) WITHOUT ROWID")
        raw.execute("INSERT INTO jobs VALUES (7, 0, ?)", (repr(ad).replace("\n", " "),))
        raw.execute("PRAGMA user_version = 1")
    with SqliteQueueStore(path) as store:
        jobs, _ = store.load()
        assert repr(jobs[(7, 0)]) == repr(ad)
        store.save_job((7, 1), cluster_jobs(7, 2)[1])
    with SqliteQueueStore(path) as again:
        assert sorted(again.load()[0]) == [(7, 0), (7, 1)]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2


def test_only_jobs_that_are_their_cluster_ad_but_for_procid_are_stored_empty(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(2, 6)
    ads[1]["ProcId"] = 1.0  # a real, not the row's integer: kept
    ads[2].insert_node("Requirements", ExprTree("TARGET.Memory  >=  RequestMemory")._node)  # equal, not the same
    renamed = ads[3]
    renamed._own()
    renamed._names["cmd"] = "CMD"  # the same expressions, spelled differently: stored whole
    reordered = ClassAd()
    for name in reversed(list(ads[4])):
        reordered.insert_node(name, ads[4]._exprs[name.lower()])  # the same objects in another order
    ads[4] = reordered
    with SqliteQueueStore(path) as store, store.batch():
        for proc, ad in enumerate(ads):
            store.save_job((2, proc), ad)
        store.save_next_cluster(3)
    stored = rows(path, "jobs")
    assert [row[2] == "[ ]" for row in stored] == [True, False, False, False, True, True]
    assert stored[3][3] == 0
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
        assert [repr(jobs[(2, proc)]) for proc in range(6)] == [repr(ad) for ad in ads]
        assert again.problems == []
