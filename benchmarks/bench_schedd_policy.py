"""What the access point's policies cost the schedd core: queue limits at submit, and the
periodic pass with the pool's SYSTEM_PERIODIC_* expressions.

The limits add one check per submission (``limits.check_submission``: three comparisons, one
dictionary lookup) and one count update; nothing per job. On a shared machine the end-to-end
submit rate moves by more than that between runs, so ``main()`` times the check itself and sets
it against (1) the submit of one 100,000-job cluster and (2) a one-job submit. The periodic pass
(``JobQueue.handle_timer`` over 100,000 idle jobs) is timed without and with a hold, a release
and a remove expression that do not fire, best of three taken in turns; it runs on the schedd's
timer, not in the submit path, and ``PERIODIC_EXPR_TIMESLICE`` (1 %) bounds its share of the
schedd's time. Run: ``.venv/bin/python benchmarks/bench_schedd_policy.py``.
"""

from __future__ import annotations

import gc
import time
import timeit
from collections.abc import Callable

from htcpool.classad import ClassAd
from htcpool.schedd import JobQueue, settings_from_config
from htcpool.schedd.limits import TABLE_DEFAULTS, check_submission
from htcpool.submit import MemoryFileSystem, SubmitHost, submit_description

CLUSTER = 100_000
SUBMIT = """executable = /bin/sleep
arguments = 60
request_memory = 1G
queue {n}
"""
BIG = {"MAX_JOBS_PER_SUBMISSION": "1000000"}
SYSTEM = {
    "SYSTEM_PERIODIC_HOLD": "RequestMemory > 100000",
    "SYSTEM_PERIODIC_HOLD_REASON": '"too much memory"',
    "SYSTEM_PERIODIC_RELEASE": "HoldReasonCode == 26 && NumHolds < 3",
    "SYSTEM_PERIODIC_REMOVE": "JobStatus == 5 && time() - EnteredCurrentStatus > 30 * 86400",
}


def _jobs(n: int) -> list[ClassAd]:
    fs = MemoryFileSystem(sizes={"/bin/sleep": 40000})
    host = SubmitHost(user="alice", cwd="/home/alice", now=1_700_000_000)
    return submit_description(SUBMIT.format(n=n), host=host, fs=fs).jobs


def _submit_seconds(jobs: list[ClassAd]) -> float:
    q = JobQueue(settings_from_config(BIG.get))
    gc.collect()
    t0 = time.perf_counter()
    q.submit("alice", jobs, 1_700_000_000)
    return time.perf_counter() - t0


def _one_job_submit_seconds(job: list[ClassAd], count: int = 2000) -> float:
    q = JobQueue(settings_from_config({}.get))
    t0 = time.perf_counter()
    for i in range(count):
        q.submit("alice", [job[0].copy()], 1_700_000_000 + i)
    return (time.perf_counter() - t0) / count


def _periodic_seconds(jobs: list[ClassAd], knobs: dict[str, str]) -> float:
    q = JobQueue(settings_from_config({**BIG, **knobs}.get))
    q.submit("alice", jobs, 1_700_000_000)
    gc.collect()
    t0 = time.perf_counter()
    q.handle_timer(1_700_000_100)
    return time.perf_counter() - t0


def _turns(first: Callable[[], float], second: Callable[[], float], rounds: int = 3) -> tuple[float, float]:
    a, b = [], []
    for _ in range(rounds):
        a.append(first())
        b.append(second())
    return min(a), min(b)


def main() -> dict[str, float]:
    jobs = _jobs(CLUSTER)
    check = min(timeit.repeat(lambda: check_submission(TABLE_DEFAULTS, 5000, 300, 1), number=20000, repeat=5))
    check /= 20000
    cluster = min(_submit_seconds(jobs) for _ in range(3))
    one = min(_one_job_submit_seconds(jobs[:1]) for _ in range(3))
    plain, system = _turns(lambda: _periodic_seconds(jobs, {}), lambda: _periodic_seconds(jobs, SYSTEM))
    figures = {
        "submit_100k_cluster_jobs_per_s": CLUSTER / cluster,
        "limit_check_us_per_submission": check * 1e6,
        "limits_cost_percent_100k_cluster": 100 * check / cluster,
        "one_job_submit_us": one * 1e6,
        "limits_cost_percent_one_job_submit": 100 * check / one,
        "periodic_jobs_per_s_job_expressions_only": CLUSTER / plain,
        "periodic_jobs_per_s_with_system_expressions": CLUSTER / system,
    }
    for name, value in figures.items():
        print(f"{name:>44}: {value:,.2f}")
    return figures


if __name__ == "__main__":
    main()
