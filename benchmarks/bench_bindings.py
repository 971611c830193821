"""The htcondor2 bindings on a live personal pool: import, a 10,000-job submit, a 10,000-job query.

``main()`` starts a personal pool with ``PersonalPool`` in a temporary
directory, with ``START = False`` so that nothing runs and the queue only grows,
and measures, each the best of REPEATS:

1. ``import htcpool.htcondor2`` in a fresh interpreter (the bindings import
   their classes on first use);
2. ``Schedd().submit(Submit({...}), count=10000)``: reserving the cluster,
   building the 10,000 job ads on the client and the schedd's answer once they
   are in SQLite; each repeat is a new cluster. The description has no per-job
   macro, so the submit language builds one ad and copies it; the same with
   ``$(Process)`` in the arguments (every ad built on its own) is printed too;
3. ``Schedd().query(projection=["ClusterId", "ProcId", "JobStatus"])`` with
   exactly 10,000 jobs in the queue.

Each figure is printed beside its target (docs/performance.md, "Python
bindings"). Run: ``.venv/bin/python -m benchmarks bindings``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPEATS = 3
JOBS = 10_000
TARGETS = {"import": 0.1, "submit": 0.3, "query": 0.2}


def best(fn: Callable[[], Any], repeat: int = REPEATS) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import htcpool.htcondor2; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(5))


def row(name: str, seconds: float, target: float) -> None:
    verdict = "ok" if seconds <= target else "SLOWER than the target"
    print(f"{name:<52} {seconds:>8.3f} s   target {target:.1f} s   {verdict}")


def main() -> None:
    from htcpool import htcondor2
    from htcpool.htcondor2._submitting import build_jobs
    from htcpool.htcondor2.personal import PersonalPool

    row("import htcpool.htcondor2", import_time(), TARGETS["import"])
    with tempfile.TemporaryDirectory() as tmp:
        here = os.getcwd()
        os.chdir(tmp)
        try:
            with PersonalPool(Path(tmp) / "pool", config={"START": "False", "NEGOTIATOR_INTERVAL": "600"}):
                schedd = htcondor2.Schedd()
                description = htcondor2.Submit({"executable": "/bin/true", "request_memory": "16MB"})
                per_job = htcondor2.Submit({"executable": "/bin/true", "arguments": "$(Process)",
                                            "request_memory": "16MB"})
                first = best(lambda: schedd.submit(description, count=JOBS), repeat=1)
                query = best(lambda: schedd.query(projection=["ClusterId", "ProcId", "JobStatus"]))
                assert len(schedd.query(projection=["ProcId"])) == JOBS
                again = best(lambda: schedd.submit(description, count=JOBS), repeat=REPEATS - 1)
                build = best(lambda: build_jobs(description, 1, "bench", count=JOBS))
                macro = best(lambda: schedd.submit(per_job, count=JOBS), repeat=1)
                row(f"Schedd().submit of a {JOBS:,}-proc cluster", min(first, again), TARGETS["submit"])
                print(f"  … of which building the job ads on the client {build:>14.3f} s")
                print(f"  the same with $(Process) in the arguments (each ad built) {macro:>5.3f} s")
                row(f"Schedd().query of {JOBS:,} jobs, 3-attribute projection", query, TARGETS["query"])
        finally:
            os.chdir(here)


if __name__ == "__main__":
    main()
