"""``save_copies``: proc 0's copies are written as empty change rows without a comparison each."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.runtime.queue_store import SqliteQueueStore
from tests.runtime.test_queue_store_clusters import cluster_jobs, rows


def test_copies_of_the_cluster_ad_are_empty_rows_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(3, 4)
    with SqliteQueueStore(path) as store, store.batch():
        store.save_job((3, 0), ads[0])
        store.save_copies(3, ads[0], [(proc, ads[proc]) for proc in range(1, 4)])
    assert rows(path, "jobs") == [(3, proc, "[ ]", 1) for proc in range(4)]
    with SqliteQueueStore(path) as again:
        jobs, next_cluster = again.load()
    assert [repr(jobs[(3, proc)]) for proc in range(4)] == [repr(ad) for ad in ads]
    assert next_cluster == 4


def test_copies_of_a_job_that_is_not_the_cluster_ad_are_compared(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(5, 3)
    with SqliteQueueStore(path) as store, store.batch():
        store.save_job((5, 0), ads[0])
        first = ads[0].copy()
        first["Args"] = "changed"  # proc 0 saved again, now unlike the cluster ad
        store.save_job((5, 0), first)
        copies = []
        for proc in (1, 2):
            ad = first.copy()
            ad["ProcId"] = proc
            copies.append((proc, ad))
        store.save_copies(5, first, copies)
    assert rows(path, "jobs") == [(5, proc, '[ Args = "changed" ]', 1) for proc in range(3)]
    with SqliteQueueStore(path) as again:
        jobs, _ = again.load()
    assert [jobs[(5, proc)]["Args"] for proc in range(3)] == ["changed"] * 3


def test_a_failed_batch_keeps_no_copies(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    ads = cluster_jobs(6, 3)
    with SqliteQueueStore(path) as store:
        with pytest.raises(RuntimeError), store.batch():
            store.save_job((6, 0), ads[0])
            store.save_copies(6, ads[0], [(1, ads[1]), (2, ads[2])])
            raise RuntimeError("refused")
        assert rows(path, "jobs") == [] and rows(path, "clusters") == []
        with store.batch():  # the same cluster again: whole, as if never tried
            store.save_job((6, 0), ads[0])
            store.save_copies(6, ads[0], [(1, ads[1])])
        store.delete_job((6, 0))
        store.delete_job((6, 1))
        assert rows(path, "jobs") == [] and rows(path, "clusters") == []
