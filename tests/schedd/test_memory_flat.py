"""The schedd's memory follows its queue, not its traffic (issue 19: memory flat under load).

A queue of a fixed size answering queries, totals and holds and releases again and again must
not keep anything per request. The one structure found growing was the priority index's heap,
which kept a dead entry for every hold and release until the next negotiation walked it."""

from __future__ import annotations

import gc
import tracemalloc

from htcpool.protocol import JobAction, JobActionKind, QueueQuery
from htcpool.protocol.schedd import QueueTotals
from htcpool.schedd.priority import PriorityIndex
from htcpool.schedd.totals import queue_totals
from tests.schedd.helpers import T0, schedd, submit


def test_the_priority_index_stays_near_its_live_entries() -> None:
    index = PriorityIndex()
    keys = [(0, 0, 0, 0, 0, 1, proc) for proc in range(10)]
    for key in keys:
        index.add("alice", key)
    for _ in range(5000):  # a job held (it leaves the index) and released (back, same key)
        index.discard((1, 3))
        index.add("alice", keys[3])
    assert len(index.heaps["alice"]) <= 2 * 10 + 64
    assert list(index.ordered("alice")) == [(1, proc) for proc in range(10)]
    for proc in range(10):
        index.discard((1, proc))
    assert "alice" not in index.heaps and index.submitters() == []


def test_requests_on_a_queue_of_fixed_size_keep_no_memory() -> None:
    core = schedd()
    cluster = submit(core, *[""] * 20, owner="alice")

    def cycle(i: int) -> None:
        now = T0 + i
        core.handle(QueueQuery(f"ClusterId == {cluster}", ("ProcId",)), now)
        core.handle(QueueQuery('Owner == "bob"'), now)
        queue_totals(core.queue, QueueTotals('Owner == "alice"'), now)
        core.handle(JobAction(JobActionKind.HOLD, "alice", (f"{cluster}.1",), "", "test"), now)
        core.handle(JobAction(JobActionKind.RELEASE, "alice", (f"{cluster}.1",), "", "test"), now)
        core.take_log_events()
        core.take_warnings()

    for i in range(50):  # caches filled
        cycle(i)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(50, 2050):
            cycle(i)
        gc.collect()
        grown = tracemalloc.take_snapshot().compare_to(before, "lineno")
    finally:
        tracemalloc.stop()
    total = sum(stat.size_diff for stat in grown)
    assert total < 64 * 1024, "grew by %d bytes over 2,000 request cycles; most:\n%s" % (
        total, "\n".join(str(stat) for stat in grown[:5]))
