"""A simulation's output directory made by hand, in the format `simulate` writes
(docs/simulator.md, "Output files"), for testing the report, the sweep table and the command line
without running the engine."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

USERS = {"alice@sim": (6, 1.0), "bob@sim": (2, 3.0)}  # CPUs each holds, priority factor
GROUPS = {"group_physics": 6}


def summary(users: dict[str, tuple[int, float]] = USERS, makespan: float = 7200.0) -> dict[str, Any]:
    total = sum(cpus for cpus, _ in users.values())
    per_user = {name: {"jobs_completed": cpus * 10, "wait_p50_s": 60.0 * factor,
                       "wait_p95_s": 300.0 * factor, "cpu_s": cpus * makespan, "share": cpus / total}
                for name, (cpus, factor) in users.items()}
    return {"jobs_submitted": 90, "jobs_completed": 80, "simulated_s": makespan, "makespan_s": makespan,
            "utilization": 0.8, "negotiation_cycles": 120, "preemptions": 3, "badput_s": 42.0,
            "skipped_lines": 0, "users": per_user,
            "groups": {"group_physics": {"jobs_completed": 60, "wait_p50_s": 60.0, "wait_p95_s": 300.0,
                                         "cpu_s": 6 * makespan, "share": 0.75}},
            "timing": {"wall_s": 0.5, "speedup": makespan / 0.5}}


def write_run(out: Path, users: dict[str, tuple[int, float]] = USERS, makespan: float = 7200.0,
              step: float = 60.0) -> dict[str, Any]:
    """Write summary.json, timeseries.csv, usage.csv and jobs.csv into ``out``; return the summary."""
    out.mkdir(parents=True, exist_ok=True)
    result = summary(users, makespan)
    (out / "summary.json").write_text(json.dumps(result, indent=2, sort_keys=True))
    samples = int(makespan // step) + 1
    busy = sum(cpus for cpus, _ in users.values())
    with (out / "timeseries.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s", "running_jobs", "idle_jobs", "held_jobs", "busy_cpus", "total_cpus",
                    "utilization"])
        for i in range(samples):
            idle = max(0, 40 - i)
            w.writerow([i * step, busy, idle, 1 if i % 10 == 0 else 0, busy, 10, busy / 10])
    with (out / "usage.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s", "kind", "name", "running_jobs", "cpus_in_use", "cpu_s", "effective_priority"])
        for i in range(samples):
            t = i * step
            for name, (cpus, factor) in users.items():
                w.writerow([t, "user", name, cpus, cpus, cpus * t, round(factor * (0.5 + cpus * i / samples), 4)])
            for name, cpus in GROUPS.items():
                w.writerow([t, "group", name, cpus, cpus, cpus * t, ""])
    with (out / "jobs.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "owner", "group", "qdate_s", "start_s", "end_s", "wait_s", "runtime_s", "cpus",
                    "preemptions"])
        for i, name in enumerate(users):
            w.writerow([f"1.{i}", name.split("@")[0], "", 0, 60, 660, 60, 600, 1, 0])
    return result
