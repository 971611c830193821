"""Submit and schedd throughput: a 100,000-job cluster, and job order from a large queue.

``main()`` measures (1) building 100,000 job ads from a submit description
(parse, macro expansion, generated Requirements), (2) putting them through the
schedd core (a transform and a submit requirement per job, queue insert), (3)
the same end to end for a cluster whose jobs differ in a per-job macro
(``arguments = $(Process)``, so every job ad is built on its own) and (4)
asking for the next job of a submitter, skipping unmatchable ones, from a
queue of QUEUE_SIZE jobs. Run: ``.venv/bin/python benchmarks/bench_submit.py [queue_size]``.

``--core`` measures only step (2) in CPU time (``time.process_time``, steadier than the wall
clock on a shared machine), best of REPEATS fresh queues, alternating with a run whose
screening of submitted attributes (``schedd.protected.Screen``) is a pass-through, so the
difference is what the screening costs: ``.venv/bin/python benchmarks/bench_submit.py --core``.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from typing import Any

from htcpool.classad import ClassAd
from htcpool.schedd import JobQueue, settings_from_config
from htcpool.schedd.protected import Screen
from htcpool.submit import MemoryFileSystem, SubmitHost, submit_description

CLUSTER = 100_000
REPEATS = 3
SUBMIT = """executable = /bin/sleep
arguments = 60
request_memory = 1G
output = out.$(Cluster)
priority = 5
queue {n}
"""
CONFIG = {
    "JOB_TRANSFORM_NAMES": "Tag",
    "JOB_TRANSFORM_Tag": "SET Site = \"local\"\nDEFAULT ProjectName = \"none\"\n",
    "SUBMIT_REQUIREMENT_NAMES": "Memory",
    "SUBMIT_REQUIREMENT_Memory": "RequestMemory >= 128",
    # HTCondor's defaults (20,000 a submission, 100,000 an owner) would refuse these clusters
    "MAX_JOBS_PER_SUBMISSION": "1000000",
    "MAX_JOBS_PER_OWNER": "10000000",
    "MAX_JOBS_SUBMITTED": "10000000",
}


def _proc_ends_in(digit: int, ad: ClassAd) -> bool:
    return bool(ad["ProcId"] % 10 == digit)


def _host() -> tuple[SubmitHost, MemoryFileSystem]:
    fs = MemoryFileSystem(sizes={"/bin/sleep": 40000})
    return SubmitHost(user="alice", cwd="/home/alice", now=1_700_000_000), fs


def main(queue_size: int = 1_000_000) -> dict[str, float]:
    host, fs = _host()
    t0 = time.perf_counter()
    result = submit_description(SUBMIT.format(n=CLUSTER), host=host, fs=fs)
    t1 = time.perf_counter()
    q = JobQueue(settings_from_config(CONFIG.get))
    q.submit("alice", result.jobs, 1_700_000_000)
    t2 = time.perf_counter()
    figures = {"build_jobs_per_s": CLUSTER / (t1 - t0), "schedd_jobs_per_s": CLUSTER / (t2 - t1),
               "end_to_end_jobs_per_s": CLUSTER / (t2 - t0)}
    t0 = time.perf_counter()
    per_job = submit_description(SUBMIT.replace("arguments = 60", "arguments = $(Process)").format(n=CLUSTER),
                                 host=host, fs=fs)
    q.submit("alice", per_job.jobs, 1_700_000_000)
    figures["per_job_args_end_to_end_jobs_per_s"] = CLUSTER / (time.perf_counter() - t0)
    big = JobQueue(settings_from_config(CONFIG.get))
    for start in range(0, queue_size, CLUSTER):
        ads = submit_description(SUBMIT.format(n=min(CLUSTER, queue_size - start)), host=host, fs=fs).jobs
        big.submit("bob", ads, 1_700_000_000 + start)
    t3 = time.perf_counter()
    asks = 1000
    for i in range(asks):
        big.next_job("bob", functools.partial(_proc_ends_in, i % 10))
    t4 = time.perf_counter()
    figures["queue_size"] = queue_size
    figures["next_job_per_s"] = asks / (t4 - t3)
    for name, value in figures.items():
        print(f"{name:>34}: {value:,.0f}")
    return figures


def _status_only(screen: Screen, ad: ClassAd) -> Any:
    return ad._exprs.get("jobstatus")


def core(repeats: int = REPEATS) -> dict[str, float]:
    """The schedd core's CPU rate for one CLUSTER-job cluster, with and without the screening."""
    host, fs = _host()
    screen = Screen.__call__
    best = {"screened": float("inf"), "unscreened": float("inf")}
    try:
        for _ in range(repeats):
            for mode in best:
                Screen.__call__ = screen if mode == "screened" else _status_only  # type: ignore[method-assign]
                jobs = submit_description(SUBMIT.format(n=CLUSTER), host=host, fs=fs).jobs
                q = JobQueue(settings_from_config(CONFIG.get))
                gc.collect()
                started = time.process_time()
                q.submit("alice", jobs, 1_700_000_000)
                best[mode] = min(best[mode], time.process_time() - started)
    finally:
        Screen.__call__ = screen  # type: ignore[method-assign]
    figures = {f"schedd_cpu_jobs_per_s_{mode}": CLUSTER / seconds for mode, seconds in best.items()}
    figures["screening_share_percent"] = 100 * (best["screened"] - best["unscreened"]) / best["screened"]
    for name, value in figures.items():
        print(f"{name:>40}: {value:,.1f}")
    return figures


if __name__ == "__main__":
    if sys.argv[1:] == ["--core"]:
        core()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
