"""Where a 10,000-job submit and query spend their time, one process, no sockets.

``main()`` takes the path a ``Schedd().submit`` of a 10,000-proc cluster and a
``Schedd().query`` with a three-attribute projection take through htcpool, step
by step, and times each (wall clock and CPU, ``time.process_time``: the CPU time
moves less with the machine's other load):

1. client: build the job ads from the description (``build_jobs``, the bindings'
   submit language run) and encode the ``Submit`` message to JSON text;
2. schedd: decode the message, admit the cluster through the schedd core, write
   it to an SQLite queue in one transaction (``SqliteQueueStore``, as the live
   schedd does, the cyclic collector held off as its service holds it) and encode
   the answer; three clusters go into one queue, as repeated submits do;
3. schedd: answer the query over a queue of exactly 10,000 jobs and encode it;
   client: decode it.

Each figure is the best of REPEATS. Run: ``.venv/bin/python -m benchmarks submit_path``;
docs/performance.md, "Submitting and querying 10,000 jobs", has the figures.
"""

from __future__ import annotations

import functools
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPEATS = 3
JOBS = 10_000


def _to_json(encode: Callable[[Any], Any], message: Any) -> str:
    return json.dumps(encode(message))


def _from_json(decode: Callable[[Any], Any], text: str) -> Any:
    return decode(json.loads(text))


def main() -> dict[str, tuple[float, float]]:
    from htcpool import htcondor2
    from htcpool.gcpause import paused_gc
    from htcpool.htcondor2._submitting import build_jobs
    from htcpool.protocol import QueueQuery, decode, encode
    from htcpool.protocol import Submit as SubmitMessage
    from htcpool.protocol.schedd import NewCluster
    from htcpool.runtime.store import SqliteQueueStore
    from htcpool.schedd import Schedd, settings_from_config

    settings = {"MAX_JOBS_PER_SUBMISSION": "1000000"}.get
    description = htcondor2.Submit({"executable": "/bin/true", "request_memory": "16MB"})
    times: dict[str, list[tuple[float, float]]] = {}

    def clock(name: str, step: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = step()
        times.setdefault(name, []).append((time.perf_counter() - wall, time.process_time() - cpu))
        return out

    def submit(core: Schedd, store: SqliteQueueStore, body: str) -> str:
        message = decode(json.loads(body))
        with store.batch(), paused_gc():
            outcome = core.handle(message, 1e9 + 1)
        return json.dumps(encode(outcome.reply))

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteQueueStore(Path(tmp) / "q.db")
        core = Schedd(settings_from_config(settings), 1e9, store=store)
        for _ in range(REPEATS):
            cluster = core.handle(NewCluster("bench"), 1e9).reply.cluster
            jobs = clock("client: build 10,000 job ads",
                         functools.partial(build_jobs, description, cluster, "bench", count=JOBS))
            message = SubmitMessage("bench", tuple(jobs), cluster)
            body = clock("client: encode the Submit", functools.partial(_to_json, encode, message))
            clock("schedd: decode, admit, SQLite, answer", functools.partial(submit, core, store, body))
        store.close()
        store = SqliteQueueStore(Path(tmp) / "query.db")
        core = Schedd(settings_from_config(settings), 1e9, store=store)
        cluster = core.handle(NewCluster("bench"), 1e9).reply.cluster
        submit(core, store, json.dumps(encode(SubmitMessage("bench", tuple(build_jobs(description, cluster, "bench",
                                                                                       count=JOBS)), cluster))))
        query = QueueQuery("", ("ClusterId", "ProcId", "JobStatus"))
        for _ in range(REPEATS):
            answer = clock("schedd: query, 3 attributes, encode", lambda: json.dumps(encode(core.handle(query, 1e9 + 2).reply)))
            ads = clock("client: decode the answer", functools.partial(_from_json, decode, answer)).ads
            assert len(ads) == JOBS
        store.close()
    best = {name: (min(w for w, _ in runs), min(c for _, c in runs)) for name, runs in times.items()}
    for name, (wall, cpu) in best.items():
        print(f"{name:<42} {wall:>7.3f} s wall {cpu:>7.3f} s CPU")
    return best


if __name__ == "__main__":
    main()
