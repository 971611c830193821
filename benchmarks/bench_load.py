"""The schedd under load: 20 concurrent clients on a 10,000-job queue.

``main()`` starts a personal pool in a temporary directory with ``START = False``
(nothing runs, so the queue only changes by what the clients do), fills the queue
with one 10,000-job cluster, and lets CLIENTS threads, each on its own connection to
the schedd (the tools' light client, ``cli/wire.py``), issue a mix of what users do for
DURATION seconds, each request followed by a short random think time. The threads run in
PROCESSES client processes (4 by default, 5 threads each): users at their terminals are
separate processes, and 20 threads in one process would queue behind one another for the
interpreter's lock, adding their own wait to the schedd's latency; ``--processes 1`` keeps
them all in this process, as the first version of this benchmark did. The mix:

* ``q`` of the client's own jobs: a constraint on its cluster, a projection of the
  batch view's attributes;
* ``q`` of one user's idle jobs with a three-attribute projection (a scan of the queue
  that returns little);
* ``q -totals``: the counts for a constraint and for the whole queue
  (``QueueTotals``, no ads sent);
* a submit of a small cluster (``NewCluster`` then ``Submit`` of 3 jobs);
* a hold, then a release, of the client's last cluster.

It reports the requests, the errors, the latency percentiles (p50/p95/p99) per kind
and overall, and the schedd's resident memory at the start and the end (psutil).
Targets (docs/performance.md, "The schedd under load and `htcpool q -totals`"): no errors, p99 under 200 ms,
memory flat. Run: ``.venv/bin/python -m benchmarks load`` (60 s) or
``.venv/bin/python -m benchmarks.bench_load --quick`` (10 s); ``--duration S``,
``--clients N``, ``--processes N`` and ``--think S`` change the run.
"""

from __future__ import annotations

import argparse
import getpass
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOBS = 10_000
CLIENTS = 20
PROCESSES = 4
DURATION = 60.0
THINK = 0.1  # the longest pause between one client's requests (uniform from zero)
TARGET_P99 = 0.2
BATCH_ATTRS = ("ClusterId", "ProcId", "Owner", "JobStatus", "QDate", "JobUniverse", "Cmd", "Args")


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latencies.setdefault(kind, []).append(seconds)

    def fail(self, kind: str, error: Exception) -> None:
        with self.lock:
            self.errors.append(f"{kind}: {error}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


class LoadClient:
    """One user at a terminal: its own connection, its own clusters."""

    def __init__(self, connect: Callable[[], Any], owner: str, seed: int) -> None:
        self.client = connect()
        self.owner = owner
        self.rng = random.Random(seed)
        self.cluster: int | None = None
        self.held = False

    def step(self) -> str:
        from htcpool.protocol import JobAction, JobActionKind, QueueQuery, Submit
        from htcpool.protocol.schedd import NewCluster, QueueTotals

        roll = self.rng.random()
        if self.cluster is None or roll < 0.15:
            cluster = self.client.send(NewCluster(self.owner)).cluster
            self.client.send(Submit(self.owner, tuple(_job(cluster, p, self.owner) for p in range(3)), cluster))
            self.cluster, self.held = cluster, False
            return "submit"
        if roll < 0.25:
            kind = JobActionKind.RELEASE if self.held else JobActionKind.HOLD
            self.client.send(JobAction(kind, self.owner, (str(self.cluster),), "", "load test"))
            self.held = not self.held
            return "hold/release"
        if roll < 0.55:
            reply = self.client.send(QueueQuery(f"ClusterId == {self.cluster}", BATCH_ATTRS))
            if len(reply.ads) != 3:
                raise AssertionError(f"q of cluster {self.cluster}: {len(reply.ads)} jobs, expected 3")
            return "q own cluster"
        if roll < 0.75:
            self.client.send(QueueQuery('Owner == "nobody" && JobStatus == 1', ("ClusterId", "ProcId", "JobStatus")))
            return "q scan"
        reply = self.client.send(QueueTotals(f"Owner == {_quote(self.owner)}"))
        if sum(reply.everything.values()) < JOBS:
            raise AssertionError(f"q -totals: {sum(reply.everything.values())} jobs in all, expected {JOBS} or more")
        return "q -totals"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _job(cluster: int, proc: int, owner: str) -> Any:
    from htcpool.classad import ClassAd

    return ClassAd({"ClusterId": cluster, "ProcId": proc, "Owner": owner, "JobStatus": 1, "JobUniverse": 5,
                    "Cmd": "/bin/true", "Args": "", "QDate": int(time.time()), "RequestMemory": 16,
                    "RequestCpus": 1, "RequestDisk": 1024, "Requirements": True})


def _run_clients(users: list[LoadClient], tally: Tally, deadline: float, think: float) -> None:
    threads = [threading.Thread(target=_run_client, args=(u, tally, deadline, think)) for u in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _client_process(seeds: list[int], owner: str, duration: float, think: float, ready: Any,
                    results: Any) -> None:
    """One client process: a thread per seed, started together with the other processes'."""
    from htcpool.cli.locate import pool_layout
    from htcpool.cli.wire import daemon_client

    layout = pool_layout()  # the pool this benchmark started (CONDOR_CONFIG is inherited)
    users = [LoadClient(lambda: daemon_client(layout, "schedd"), owner, seed) for seed in seeds]
    tally = Tally()
    ready.wait()
    _run_clients(users, tally, time.monotonic() + duration, think)
    results.put((tally.latencies, tally.errors))


def _in_processes(clients: int, processes: int, owner: str, duration: float, think: float, tally: Tally) -> None:
    """Run the clients in ``processes`` fresh interpreters and gather their latencies into ``tally``."""
    context = multiprocessing.get_context("spawn")  # nothing of this process's threads carried over
    ready = context.Barrier(processes + 1)
    results = context.Queue()
    workers = [context.Process(target=_client_process,
                               args=(list(range(i, clients, processes)), owner, duration, think, ready, results))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    ready.wait(timeout=120)
    for _ in workers:
        latencies, errors = results.get(timeout=duration + 120)
        for kind, values in latencies.items():
            tally.latencies.setdefault(kind, []).extend(values)
        tally.errors.extend(errors)
    for worker in workers:
        worker.join(timeout=30)


def _run_client(client: LoadClient, tally: Tally, deadline: float, think: float) -> None:
    while time.monotonic() < deadline:
        started = time.perf_counter()
        kind = "?"
        try:
            kind = client.step()
            tally.add(kind, time.perf_counter() - started)
        except Exception as e:  # counted and reported: the run goes on
            tally.fail(kind, e)
        time.sleep(client.rng.uniform(0, think))
    client.client.close()


def _schedd_process(local_dir: Path) -> Any:
    import psutil

    master = int((local_dir / "run" / "master.pid").read_text().split()[0])
    for child in psutil.Process(master).children(recursive=True):
        if any("schedd" in part.lower() for part in child.cmdline()[1:]):
            return child
    raise RuntimeError("no schedd process under the master")


def _report(tally: Tally, duration: float, rss: tuple[float, float]) -> None:
    everything = [s for values in tally.latencies.values() for s in values]
    print(f"{'kind':<14} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, values in sorted(tally.latencies.items()) + [("all", everything)]:
        print(f"{kind:<14} {len(values):>8} {percentile(values, 0.5) * 1e3:>8.1f} "
              f"{percentile(values, 0.95) * 1e3:>8.1f} {percentile(values, 0.99) * 1e3:>8.1f} "
              f"{max(values, default=0) * 1e3:>8.1f}")
    p99 = percentile(everything, 0.99)
    print(f"{len(everything)} requests in {duration:.0f} s ({len(everything) / duration:.0f}/s), "
          f"{len(tally.errors)} errors; p99 {p99 * 1e3:.0f} ms (target {TARGET_P99 * 1e3:.0f} ms: "
          f"{'ok' if p99 <= TARGET_P99 and not tally.errors else 'MISSED'})")
    for error in tally.errors[:5]:
        print(f"  error: {error}")
    print(f"schedd RSS {rss[0]:.0f} MB at the start, {rss[1]:.0f} MB at the end; load average "
          f"{os.getloadavg()[0]:.1f}")


def run(duration: float = DURATION, clients: int = CLIENTS, think: float = THINK,
        processes: int = PROCESSES) -> Tally:
    from htcpool import htcondor2
    from htcpool.cli.locate import pool_layout
    from htcpool.cli.wire import daemon_client
    from htcpool.htcondor2.personal import PersonalPool

    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        local_dir = Path(tmp) / "pool"
        with PersonalPool(local_dir, config={"START": "False", "NEGOTIATOR_INTERVAL": "600"}):
            htcondor2.Schedd().submit(htcondor2.Submit({"executable": "/bin/true", "request_memory": "16MB"}),
                                      count=JOBS)
            layout = pool_layout()
            schedd = _schedd_process(local_dir)
            start_rss = schedd.memory_info().rss / 2**20
            start_cpu = sum(schedd.cpu_times()[:2])
            owner = getpass.getuser()
            processes = max(1, min(processes, clients))
            if processes > 1:
                _in_processes(clients, processes, owner, duration, think, tally)
            else:
                users = [LoadClient(lambda: daemon_client(layout, "schedd"), owner, seed) for seed in range(clients)]
                _run_clients(users, tally, time.monotonic() + duration, think)
            end_rss = schedd.memory_info().rss / 2**20
            cpu = sum(schedd.cpu_times()[:2]) - start_cpu
    print(f"{clients} clients in {processes} process{'es' if processes > 1 else ''}")
    _report(tally, duration, (start_rss, end_rss))
    requests = sum(len(values) for values in tally.latencies.values())
    print(f"schedd CPU {cpu:.1f} s in all, {cpu / max(requests, 1) * 1e3:.1f} ms a request")
    return tally


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_load", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 10-second run")
    parser.add_argument("--duration", type=float, default=DURATION, help="seconds of load")
    parser.add_argument("--clients", type=int, default=CLIENTS, help="concurrent clients")
    parser.add_argument("--processes", type=int, default=PROCESSES,
                        help="client processes the clients' threads are spread over (1: all in this one)")
    parser.add_argument("--think", type=float, default=THINK, help="longest pause between a client's requests")
    args = parser.parse_args(argv or [])
    run(10.0 if args.quick else args.duration, args.clients, args.think, args.processes)


if __name__ == "__main__":
    main(sys.argv[1:])
