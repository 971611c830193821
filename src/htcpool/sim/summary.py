"""``summary.json``: the totals of one simulation (the contract read by ``sim.report``).

Keys: jobs_submitted, jobs_completed, jobs_removed, jobs_left (still queued at the end: idle,
running or held), simulated_s, makespan_s (first submit to last completion), utilization (busy
cpu-seconds over total cpu-seconds during the makespan, 0–1), negotiation_cycles, matches,
preemptions (evictions of running jobs), badput_s (cpu-seconds of evicted or held runs),
defrag_drains (drains the defrag daemon started, when ``DAEMON_LIST`` names ``DEFRAG``),
skipped_lines, stop_reason, schedd_warnings (how many warnings the schedd core gave: failed
transforms, periodic expressions it could not evaluate), notes (sentences on the simulated
pool an administrator should read with its results: ``run.pool_notes``), and ``users`` and ``groups``: per name jobs_completed, wait_p50_s,
wait_p95_s (nearest-rank percentiles of the completed jobs' waits from QDate to first start),
cpu_s and share (fraction of all cpu_s). ``timing`` holds the only values that change from run
to run: wall_s and speedup (simulated_s / wall_s). The file is written with sorted keys and an
indent of 2, floats rounded to 6 decimals, so the same inputs and seed give the same bytes
outside ``timing``.
"""

from __future__ import annotations

import json
import math
from array import array
from pathlib import Path
from typing import Any

from htcpool.sim.metrics import Party, Recorder


def percentile(values: array, fraction: float) -> float | None:
    """The nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _parties(parties: dict[str, Party]) -> dict[str, Any]:
    total = sum(p.cpu_s for p in parties.values())
    return {name: {"jobs_completed": p.completed, "wait_p50_s": _r(percentile(p.waits, 0.5)),
                   "wait_p95_s": _r(percentile(p.waits, 0.95)), "cpu_s": _r(p.cpu_s),
                   "share": _r(p.cpu_s / total) if total else 0.0}
            for name, p in sorted(parties.items())}


def build_summary(recorder: Recorder, *, simulated_s: float, cycles: int, matches: int, skipped: int,
                  stop_reason: str, wall_s: float, drains: int = 0, warnings: int = 0,
                  notes: list[str] | None = None) -> dict[str, Any]:
    makespan = 0.0
    if recorder.first_submit is not None and recorder.last_end is not None:
        makespan = max(0.0, recorder.last_end - recorder.first_submit)
    capacity = recorder.total_cpus * makespan
    return {
        "jobs_submitted": recorder.submitted,
        "jobs_completed": recorder.completed,
        "jobs_removed": recorder.removed,
        "jobs_left": len(recorder.jobs),
        "simulated_s": _r(simulated_s),
        "makespan_s": _r(makespan),
        "utilization": _r(min(1.0, recorder.busy_cpu_s / capacity)) if capacity else 0.0,
        "negotiation_cycles": cycles,
        "matches": matches,
        "preemptions": recorder.preemptions,
        "badput_s": _r(recorder.badput),
        "defrag_drains": drains,
        "skipped_lines": skipped,
        "stop_reason": stop_reason,
        "schedd_warnings": warnings,
        "notes": list(notes or ()),
        "users": _parties(recorder.users),
        "groups": _parties(recorder.groups),
        "timing": {"wall_s": _r(wall_s), "speedup": _r(simulated_s / wall_s) if wall_s > 0 else None},
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.write_text(json.dumps(summary, sort_keys=True, indent=2) + "\n")


__all__ = ["build_summary", "percentile", "write_summary"]
