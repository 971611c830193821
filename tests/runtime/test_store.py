"""The SQLite stores: ad text round trips, reopening, kill -9, history queries, damaged rows."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from htcpool.classad import ClassAd, ExprTree, parseOne
from htcpool.negotiator import Accountant, AccountantPolicy, MemoryStore
from htcpool.runtime.accountant_store import SqliteAccountantStore
from htcpool.runtime.queue_store import SqliteQueueStore
from htcpool.runtime.store import StoreError, ad_text, parse_ad

START = 1_800_000_000.0
SRC = str(Path(__file__).resolve().parents[2] / "src")


def job(cluster: int, proc: int = 0, **attrs: object) -> ClassAd:
    ad = ClassAd({"ClusterId": cluster, "ProcId": proc, "Owner": "alice", "JobStatus": 1})
    for name, value in attrs.items():
        ad[name] = value
    return ad


# ------------------------------------------------------------------ ad text

ROUND_TRIPS = {
    "quotes and escapes": {"Cmd": '/bin/echo "hi" \'there\'', "Odd": "back\\slash\ttab\r\n\x07"},
    "newlines": {"Env": "A=1\nB=2\n", "Empty": ""},
    "non-ascii": {"Title": "h\u00e9llo \u2603 \U0001f600"},
    "lists": {"L": [1, 2.5, "x", [3, [4]], {"q": 1}], "Nil": []},
    "nested ads": {"Outer": {"Inner": {"Deep": "yes"}, "N": 2}},
    "reals": {"A": 0.1 + 0.2, "B": 1e300, "C": 5e-324, "D": -2.5e-7, "E": -0.0, "F": 3.0,
              "G": float("inf"), "H": -1e16},
    "integers and booleans": {"Big": 2**62, "Neg": -5, "T": True, "F": False},
    "names": {"Strange Name": 1, "true": 2, "Mixed_Case": 3},
}
EXPRESSIONS = [
    "TARGET.Memory >= MY.RequestMemory && regexp(\"a.*b\", Name) ? 1 : undefined",
    "error",
    "undefined",
    "Owner =?= \"alice\" || Owner =!= \"bob\"",
    "-x + (y - -3) * 2 / 4 % 3",
    "{ 1, a, [ b = c ] }[0]",
    "strcat(\"a\\\"b\", 'quoted name') isnt undefined",
    "absTime(\"2024-01-02T03:04:05Z\") + relTime(\"1+02:03:04\")",
    "parent.x",
]


@pytest.mark.parametrize("attrs", list(ROUND_TRIPS.values()), ids=list(ROUND_TRIPS))
def test_ad_text_reads_back_equal(attrs: dict[str, object]) -> None:
    ad = ClassAd(attrs)
    text = ad_text(ad)
    assert "\n" not in text
    back = parse_ad(text)
    assert back == ad
    assert list(back) == list(ad)


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_ad_text_keeps_expressions(expr: str) -> None:
    ad = ClassAd({"E": ExprTree(expr), "X": 1})
    back = parse_ad(ad_text(ad))
    assert back == ad
    assert repr(back.lookup("E")) == repr(ExprTree(expr))


def test_ad_text_is_what_parse_one_reads() -> None:
    ad = ClassAd({"A": 0.30000000000000004, "S": 'x"y'})
    assert parseOne(ad_text(ad))["A"] == 0.30000000000000004


def test_printers_remember_their_own_text_of_a_shared_expression() -> None:
    # the printers remember the text of compound expressions by node; the canonical printer's
    # %1.15E must not leak into the exact text of the same node, nor the other way round
    shared = ExprTree("x * 0.30000000000000004 + y")
    ads = [ClassAd({"E": shared, "ProcId": p}) for p in range(3)]
    canonical = [repr(a) for a in ads]
    exact = [ad_text(a) for a in ads]
    assert canonical == [repr(a) for a in ads] and exact == [ad_text(a) for a in ads]
    assert all("3.000000000000000E-01" in t for t in canonical)
    assert all("0.30000000000000004" in t for t in exact)
    assert all(parse_ad(t)["E"].eval(ClassAd({"x": 1, "y": 0})) == 0.30000000000000004 for t in exact)


# ------------------------------------------------------------------ the queue


def test_queue_round_trip_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "spool" / "job_queue.db"
    store = SqliteQueueStore(path)
    store.save_job((1, 0), job(1, 0, Cmd="/bin/a"))
    store.save_job((1, 1), job(1, 1))
    store.save_job((2, 0), job(2, 0))
    store.save_job((1, 1), job(1, 1, JobStatus=2))  # replaced
    store.delete_job((2, 0))
    store.delete_job((9, 9))  # unknown: nothing happens
    store.append_history(job(2, 0, JobStatus=4))
    store.save_next_cluster(3)
    store.set_meta("ScheddAddress", "http://127.0.0.1:9618")
    store.close()
    store.close()

    with SqliteQueueStore(path) as again:
        jobs, next_cluster = again.load()
        assert list(jobs) == [(1, 0), (1, 1)]
        assert jobs[(1, 0)] == job(1, 0, Cmd="/bin/a")
        assert jobs[(1, 1)].evaluate("JobStatus") == 2
        assert next_cluster == 3
        assert [ad["ClusterId"] for ad in again.history()] == [2]
        assert again.get_meta("ScheddAddress") == "http://127.0.0.1:9618"
        assert again.get_meta("missing") is None
        assert again.problems == []
    assert again.closed
    with pytest.raises(StoreError, match="closed"):
        again.load()


def test_empty_store_loads_nothing(tmp_path: Path) -> None:
    with SqliteQueueStore(tmp_path / "q.db") as store:
        assert store.load() == ({}, 1)
        assert store.history() == []


def test_ten_thousand_jobs_in_one_batch_take_well_under_a_second(tmp_path: Path) -> None:
    store = SqliteQueueStore(tmp_path / "q.db")
    proto = job(1, 0, Cmd="/bin/sleep", Arguments="60", RequestCpus=1, RequestMemory=128,
                Requirements=ExprTree("TARGET.Memory >= RequestMemory"), QDate=1_700_000_000)
    started = time.perf_counter()
    with store.batch():
        store.save_next_cluster(2)
        for proc in range(10_000):
            proto["ProcId"] = proc
            store.save_job((1, proc), proto)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, elapsed
    assert store.job_count() == 10_000
    store.close()


def test_a_failed_batch_keeps_nothing_and_batches_nest(tmp_path: Path) -> None:
    store = SqliteQueueStore(tmp_path / "q.db")
    with pytest.raises(RuntimeError), store.batch():
        store.save_job((1, 0), job(1))
        with store.batch():
            store.save_job((1, 1), job(1, 1))
        assert store.in_batch
        raise RuntimeError("submit transform failed")
    assert not store.in_batch
    assert store.load() == ({}, 1)
    with store.batch():
        with store.batch():
            store.save_job((2, 0), job(2))
        store.save_next_cluster(3)
    store.close()
    jobs, next_cluster = SqliteQueueStore(tmp_path / "q.db").load()
    assert list(jobs) == [(2, 0)] and next_cluster == 3


def test_a_batch_not_synced_leaves_the_next_ones_synced(tmp_path: Path) -> None:
    store = SqliteQueueStore(tmp_path / "q.db")

    def level() -> int:
        return int(store.connection.execute("PRAGMA synchronous").fetchone()[0])

    full = level()
    with store.batch(synced=False):
        assert level() < full  # NORMAL: the commit does not wait for the disk
        with store.batch():  # the outermost batch decides
            store.save_job((1, 0), job(1))
    assert level() == full
    with pytest.raises(RuntimeError), store.batch(synced=False):
        store.save_job((2, 0), job(2))
        raise RuntimeError("refused")
    assert level() == full
    assert set(store.load()[0]) == {(1, 0)}
    store.close()


def test_next_cluster_is_never_an_id_already_used(tmp_path: Path) -> None:
    store = SqliteQueueStore(tmp_path / "q.db")
    store.save_next_cluster(5)
    store.save_job((7, 0), job(7))  # a crash before the counter was saved
    store.append_history(job(8))
    assert store.load()[1] == 9
    assert any("next cluster 5" in p for p in store.problems)
    store.close()


CHILD = """
import sys
from htcpool.classad import ClassAd
from htcpool.runtime.queue_store import SqliteQueueStore
store = SqliteQueueStore(sys.argv[1])
size = int(sys.argv[2])
synced = sys.argv[3] == "synced"
for cluster in range(1, 100000):
    if size:
        with store.batch(synced=synced):
            for proc in range(size):
                store.save_job((cluster, proc), ClassAd({"ClusterId": cluster, "ProcId": proc}))
            store.save_next_cluster(cluster + 1)
    else:
        store.save_job((cluster, 0), ClassAd({"ClusterId": cluster, "ProcId": 0}))
        store.save_next_cluster(cluster + 1)
    print("ok", cluster, flush=True)
"""


def _kill_after(path: Path, size: int, acknowledged: int, synced: bool = True) -> set[int]:
    """Run the child, SIGKILL it after ``acknowledged`` saves; every cluster it acknowledged."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(size), "synced" if synced else "unsynced"],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    assert child.stdout is not None
    seen: set[int] = set()
    deadline = time.monotonic() + 20
    try:
        while len(seen) < acknowledged and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            seen.add(int(line.split()[1]))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        seen.update(int(line.split()[1]) for line in child.stdout if line.startswith("ok"))
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert len(seen) >= acknowledged, "the child stopped acknowledging saves"
    return seen


@pytest.mark.parametrize(("size", "synced"), [(0, True), (25, True), (25, False)],
                         ids=["one save per job", "batches of 25", "batches of 25 not synced"])
def test_every_acknowledged_save_survives_kill_9(tmp_path: Path, size: int, synced: bool) -> None:
    """A batch not synced to disk is lost only if the machine goes down, never with the process."""
    path = tmp_path / "q.db"
    acknowledged = _kill_after(path, size, 60, synced)
    with SqliteQueueStore(path) as store:
        jobs, next_cluster = store.load()
        # killed between a job and its counter, the counter is repaired: nothing else is wrong
        assert all(": counters: " in problem for problem in store.problems)
    clusters = {cluster for cluster, _ in jobs}
    assert acknowledged <= clusters
    assert next_cluster == max(clusters) + 1
    if size:
        for cluster in clusters:  # a batch is all there or not at all
            assert all((cluster, proc) in jobs for proc in range(size))


# ------------------------------------------------------------------ history


def _history_store(path: Path) -> SqliteQueueStore:
    store = SqliteQueueStore(path)
    with store.batch():
        for cluster in range(1, 11):
            owner = "alice" if cluster % 2 else "bob"
            store.append_history(job(cluster, Owner=owner, RemoteWallClockTime=cluster * 10.0))
    return store


def test_history_is_newest_first_with_constraint_and_limits(tmp_path: Path) -> None:
    store = _history_store(tmp_path / "q.db")
    ids = [ad["ClusterId"] for ad in store.history()]
    assert ids == list(range(10, 0, -1))
    alice = store.history('Owner == "alice"')
    assert [ad["ClusterId"] for ad in alice] == [9, 7, 5, 3, 1]
    assert [ad["ClusterId"] for ad in store.history('Owner == "alice"', limit=2)] == [9, 7]
    assert [ad["ClusterId"] for ad in store.history(None, 5, match_ads=3)] == [10, 9, 8]
    assert [ad["ClusterId"] for ad in store.history("RemoteWallClockTime > 35", scan_limit=4)] \
        == [10, 9, 8, 7]
    assert store.history("ClusterId", limit=3) != []  # a non-zero number counts as true
    assert store.history("NoSuchAttr > 1") == []  # undefined selects nothing
    assert store.history(limit=0) == []
    store.close()


@pytest.mark.parametrize("constraint", ['Owner == "alice', "ClusterId >", "a b"])
def test_a_malformed_history_constraint_is_a_store_error(tmp_path: Path, constraint: str) -> None:
    store = _history_store(tmp_path / "q.db")
    with pytest.raises(StoreError) as caught:
        store.history(constraint)
    assert repr(constraint) in str(caught.value)
    assert "column" in str(caught.value)
    store.close()


# ------------------------------------------------------------------ damage


def test_damaged_rows_are_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    store = SqliteQueueStore(path)
    store.save_job((1, 0), job(1))
    store.save_job((2, 0), job(2))
    store.save_job((2, 1), job(2, 1))
    store.append_history(job(3))
    store.append_history(job(4))
    store.save_next_cluster(5)
    store.close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE jobs SET ad = '[ ClusterId = 1; Owner = \"unterminated ]' WHERE cluster = 1")
    raw.execute("UPDATE jobs SET ad = '[ ProcId = 1 ] [ ProcId = 2 ]' WHERE proc = 1")
    raw.execute("UPDATE history SET ad = 'not an ad at all' WHERE cluster = 3")
    raw.commit()
    raw.close()

    store = SqliteQueueStore(path)
    jobs, _ = store.load()
    assert list(jobs) == [(2, 0)]
    assert [ad["ClusterId"] for ad in store.history()] == [4]
    store.history()  # read twice, reported once
    assert len(store.problems) == 3
    assert "job 1.0" in store.problems[0] and "job 2.1" in store.problems[1]
    assert "history: entry 1" in store.problems[2]
    store.close()


def test_files_that_are_not_stores_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable database"):
        SqliteQueueStore(junk)
    newer = tmp_path / "newer.db"
    raw = sqlite3.connect(newer)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StoreError, match="newer htcpool"):
        SqliteQueueStore(newer)


# ------------------------------------------------------------------ the accountant


def _slot(name: str, user: str, cpus: int = 1) -> ClassAd:
    return ClassAd({"Name": name, "State": "Claimed", "Activity": "Busy", "RemoteUser": user,
                    "Cpus": cpus, "SlotWeight": cpus})


def test_accountant_usage_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "accountant.db"
    store = SqliteAccountantStore(path)
    acct = Accountant(AccountantPolicy(), store=store)
    acct.update_priorities(START)
    acct.check_matches([_slot("s1@m", "u@d", 2), _slot("s2@m", "v@d")], START)
    acct.update_priorities(START + 600)
    acct.set_priority_factor("v@d", 1e6 / 3)
    acct.set_priority("w@d", 3.25)
    acct.commit()
    acct.delete("w@d")
    acct.commit()
    store.close()

    with SqliteAccountantStore(path) as again:
        reloaded = Accountant(AccountantPolicy(), store=again)
        assert reloaded.last_update_time == START + 600
        by_name = sorted(acct.snapshot().records, key=lambda r: r.name)
        assert sorted(reloaded.snapshot().records, key=lambda r: r.name) == by_name
        assert reloaded.records["u@d"].accumulated_usage == acct.records["u@d"].accumulated_usage > 0
        assert reloaded.priority_factor("v@d") == 1e6 / 3
        assert "w@d" not in reloaded.records
        assert again.problems == []


def test_accountant_store_loads_as_memory_store_does(tmp_path: Path) -> None:
    memory, sqlite = MemoryStore(), SqliteAccountantStore(tmp_path / "a.db")
    acct_m, acct_s = Accountant(store=memory), Accountant(store=sqlite)
    for acct in (acct_m, acct_s):
        for name in ("c@d", "a@d", "b@d"):
            acct.set_priority(name, 2.0)
        acct.commit()
        acct.set_priority("a@d", 4.0)  # keeps its place
        acct.delete("c@d")
        acct.commit()
        acct.set_priority("c@d", 1.5)  # back, at the end
        acct.commit()
    assert sqlite.load() == memory.load()
    assert [r.name for r in sqlite.load().records] == ["a@d", "b@d", "c@d"]
    assert SqliteAccountantStore(tmp_path / "fresh.db").load() == MemoryStore().load()
    sqlite.close()


def test_a_damaged_customer_record_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = SqliteAccountantStore(path)
    acct = Accountant(store=store)
    acct.set_priority("good@d", 2.0)
    acct.set_priority("bad@d", 2.0)
    acct.commit()
    store.connection.execute("UPDATE customers SET record = '{\"Priority\": ' WHERE name = 'bad@d'")
    snapshot = store.load()
    assert [r.name for r in snapshot.records] == ["good@d"]
    assert len(store.problems) == 1 and "bad@d" in store.problems[0]
    store.close()
