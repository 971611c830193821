"""What the daemons' statistics cost: ``python -m benchmarks.bench_statistics``.

Measured in CPU time (``time.process_time``), best of five rounds:

* the schedd counting the submit events of a 10,000-job cluster (``ScheddStats.count_all``);
* one reading of the process for the self-monitor (``runtime/selfstats.read_process``);
* one slot ad given its DaemonCore attributes (``DaemonStatistics.decorate``, the reading cached);
* the collector's pool summary over 10,000 slot ads and 100 Submitter ads (``pool_summary``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from htcpool.classad import ClassAd
from htcpool.collector import AdStore
from htcpool.runtime.selfstats import DaemonStatistics, read_process
from htcpool.schedd.eventlog import LogEvent
from htcpool.statistics import ScheddStats, Window, pool_summary


class _Config:
    def get_str(self, name: str, default: str | None = None) -> str | None:
        return {"STATISTICS_TO_PUBLISH": "DC:1"}.get(name, default)


def _best(work: Callable[[], object], repeat: int = 1) -> float:
    times = []
    for _ in range(5):
        began = time.process_time()
        for _ in range(repeat):
            work()
        times.append((time.process_time() - began) / repeat)
    return min(times)


def main() -> None:
    events = [LogEvent(0, 1, proc, 1000.0) for proc in range(10_000)]
    stats = ScheddStats(Window(0.0))
    counting = _best(lambda: stats.count_all((e.code, e.time, e.signal is not None) for e in events))
    reading = _best(read_process, repeat=100)
    daemon = DaemonStatistics(_Config(), 0.0, "bench")  # type: ignore[arg-type]
    slot = ClassAd({"MyType": "Machine", "Name": "slot1@host", **{f"Attr{i}": i for i in range(100)}})
    daemon.decorate(slot, 1.0)
    decorating = _best(lambda: daemon.decorate(slot, 1.5), repeat=1000)
    store = AdStore()
    for i in range(10_000):
        store.update(ClassAd({"MyType": "Machine", "Name": f"slot{i}@h", "State": "Unclaimed"}), 0.0)
    for i in range(100):
        store.update(ClassAd({"MyType": "Submitter", "Name": f"u{i}", "IdleJobs": 5, "RunningJobs": 1}), 0.0)
    summary = _best(lambda: pool_summary(store.query("Machine", projection=("State",), now=1.0),
                                         store.query("Submitter", projection=("RunningJobs", "IdleJobs"), now=1.0)))
    print(f"count 10,000 submit events      {counting * 1e3:8.2f} ms")
    print(f"read the process                {reading * 1e3:8.3f} ms")
    print(f"decorate one 100-attribute ad   {decorating * 1e6:8.1f} us")
    print(f"pool summary, 10,000 slot ads   {summary * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
