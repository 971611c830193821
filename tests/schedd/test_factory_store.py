"""A factory kept in the live schedd's SQLite queue: bounded rows, and a restart that goes on."""

from __future__ import annotations

from pathlib import Path

from htcpool.protocol import JobAction, JobActionKind, carry
from htcpool.runtime.store import SqliteQueueStore
from htcpool.schedd import Schedd, ScheddSettings
from tests.schedd.helpers import T0
from tests.schedd.test_factory import factory_message


def start(store: SqliteQueueStore, now: float) -> Schedd:
    jobs, next_cluster = store.load()
    core = Schedd(ScheddSettings(schedd_name="schedd@submit"), now, store=store, jobs=jobs,
                  next_cluster=next_cluster, host="submit", factories=store.load_factories())
    core.start(now, "http://submit:1", "<127.0.0.1:1>")
    return core


def test_a_million_proc_factory_is_a_few_rows_and_survives_a_restart(tmp_path: Path) -> None:
    path = str(tmp_path / "job_queue.db")
    store = SqliteQueueStore(path)
    core = start(store, T0)
    message = carry(factory_message(core, "executable = /bin/sleep\narguments = $(Process)\n"
                                          "max_materialize = 10\nqueue 1000000\n"))
    with store.batch():
        cluster = int(core.handle(message, T0).reply.cluster)
    assert store.job_count() == 10 and len(store.load_factories()) == 1
    core.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.0", f"{cluster}.1")), T0 + 1)
    store.close()

    store = SqliteQueueStore(path)
    again = start(store, T0 + 60)
    assert sorted(p for (c, p) in again.queue.jobs if c == cluster) == list(range(2, 12))
    assert again.queue.jobs[(cluster, 11)]["Args"] == "11"
    again.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.2",)), T0 + 61)
    assert again.queue.jobs[(cluster, 12)]["JobMaterializeNextProcId"] == 13
    assert store.job_count() == 10
    again.handle(JobAction(JobActionKind.REMOVE, "alice", (str(cluster),)), T0 + 62)
    assert store.job_count() == 0 and store.load_factories() == {}
    store.close()
