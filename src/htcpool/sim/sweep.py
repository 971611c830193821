"""Sweeps: one simulation per combination of knob values, run in parallel on Dask distributed.

A grid is a list of axes ``KNOB=v1,v2,…`` (``--grid`` on the command line); every combination
of their values (the Cartesian product, the first axis varying slowest) is one run: the base
options with the combination appended to its overrides, so a grid value wins over a ``--set`` of
the same knob and both win over CONFIG. Run *i* (from 0, in that order) writes its files and its
report into ``OUT/run-<i>/``.

Runs are handed to a Dask cluster: a `distributed.LocalCluster` of worker processes on this
machine by default, or an existing cluster's scheduler given by address (its workers must have
htcpool installed and see the same paths). Each run is one task, `run_one`, which is a pure
function of its options, so the results do not depend on which worker ran it or in which
order runs finished. A run whose input is bad (or whose engine failed) is recorded with its
error; the other runs go on.

The sweep then writes ``OUT/sweep.csv`` (one row per run: the grid values, the summary's main
numbers, each user's and group's share and each user's median wait) and ``OUT/sweep.png``
(per run, the users' shares of CPU time as stacked bars, their median and 95th-percentile
waits). See
docs/simulator.md, "Sweeps".
"""

from __future__ import annotations

import csv
import itertools
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from htcpool.sim.options import SimOptions
from htcpool.sim.report import NAMED, OTHERS, plt, write_report

Settings = tuple[tuple[str, str], ...]
MAIN_NUMBERS = ("jobs_submitted", "jobs_completed", "simulated_s", "makespan_s", "utilization",
                "negotiation_cycles", "preemptions", "badput_s", "skipped_lines")


class GridError(ValueError):
    """A ``--grid`` that is not ``KNOB=v1,v2,…``."""


@dataclass(frozen=True)
class GridAxis:
    knob: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class SweepRun:
    """One finished run: its place, its grid values, where it wrote, and its summary or error."""

    index: int
    settings: Settings
    out: Path
    summary: dict[str, Any] | None
    error: str | None


def parse_grid(specs: Sequence[str]) -> tuple[GridAxis, ...]:
    """``["KNOB=v1,v2", …]`` as axes. A knob may appear once; values are kept as typed (they are
    configuration text), empty ones are refused."""
    axes: list[GridAxis] = []
    for spec in specs:
        knob, equals, text = spec.partition("=")
        knob = knob.strip()
        if not equals or not knob or not knob.replace("_", "a").replace(".", "a").isalnum():
            raise GridError(f"--grid {spec!r}: expected KNOB=v1,v2,… (a knob name, '=', values)")
        values = tuple(v.strip() for v in text.split(","))
        if not text.strip() or any(not v for v in values):
            raise GridError(f"--grid {spec!r}: a value is empty")
        if any(axis.knob.upper() == knob.upper() for axis in axes):
            raise GridError(f"--grid {spec!r}: {knob} is already swept by another --grid")
        axes.append(GridAxis(knob, values))
    if not axes:
        raise GridError("a sweep needs at least one --grid KNOB=v1,v2,…")
    return tuple(axes)


def combinations(grid: Sequence[GridAxis]) -> list[Settings]:
    """Every combination of the grid's values, the first axis varying slowest."""
    return [tuple(zip((axis.knob for axis in grid), values, strict=True))
            for values in itertools.product(*(axis.values for axis in grid))]


def run_one(options: SimOptions, report: bool = True) -> dict[str, Any]:
    """One run on a worker: simulate, write its report, return ``{"summary"}`` or ``{"error"}``
    for input the simulator refuses."""
    from htcpool.sim.run import simulate

    try:
        summary = simulate(options)
    except (ValueError, OSError) as e:  # SimInputError and unreadable files: this run's input
        return {"summary": None, "error": str(e)}
    if report:
        write_report(options.out)
    return {"summary": summary, "error": None}


def run_sweep(base: SimOptions, grid: Sequence[GridAxis], *, scheduler: str | None = None,
              workers: int | None = None, processes: bool = True, report: bool = True,
              on_done: Callable[[SweepRun], None] | None = None) -> list[SweepRun]:
    """Run every combination of ``grid`` over ``base`` (its ``out`` is the sweep's directory) on
    a Dask cluster; call ``on_done`` as each run finishes; return the runs in grid order."""
    from distributed import Client, LocalCluster, as_completed

    settings = combinations(grid)
    base.out.mkdir(parents=True, exist_ok=True)
    jobs = [replace(base, out=base.out / f"run-{i}", overrides=base.overrides + combo, on_progress=None)
            for i, combo in enumerate(settings)]
    cluster = None
    if scheduler is None:
        count = workers or min(len(jobs), os.cpu_count() or 1)
        cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=processes,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    runs: dict[int, SweepRun] = {}
    try:
        futures = {client.submit(run_one, job, report, pure=False): i
                   for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                result = future.result()
            except Exception as e:  # an engine failure on the worker: recorded, the others go on
                result = {"summary": None, "error": f"the run failed: {type(e).__name__}: {e}"}
            runs[i] = SweepRun(i, settings[i], jobs[i].out, result["summary"], result["error"])
            if on_done is not None:
                on_done(runs[i])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    ordered = [runs[i] for i in range(len(jobs))]
    write_table(base.out / "sweep.csv", grid, ordered)
    plot_sweep(base.out / "sweep.png", grid, ordered)
    return ordered


# -- the table


def _names(runs: Sequence[SweepRun], kind: str) -> list[str]:
    found = {name for run in runs if run.summary for name in (run.summary.get(kind) or {})}
    return sorted(found)


def write_table(path: Path, grid: Sequence[GridAxis], runs: Sequence[SweepRun]) -> None:
    """sweep.csv: run, the grid's knobs, error, the main numbers, then per user ``share:NAME``
    and ``wait_p50_s:NAME`` and per group ``group_share:NAME``."""
    users, groups = _names(runs, "users"), _names(runs, "groups")
    header = (["run", *(axis.knob for axis in grid), "error", *MAIN_NUMBERS, "wall_s", "speedup"]
              + [f"share:{u}" for u in users] + [f"wait_p50_s:{u}" for u in users]
              + [f"group_share:{g}" for g in groups])
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for run in runs:
            summary = run.summary or {}
            timing = summary.get("timing") or {}
            per_user = summary.get("users") or {}
            per_group = summary.get("groups") or {}
            writer.writerow(
                [run.index, *(value for _, value in run.settings), run.error or ""]
                + [summary.get(key, "") for key in MAIN_NUMBERS]
                + [timing.get("wall_s", ""), timing.get("speedup", "")]
                + [(per_user.get(u) or {}).get("share", "") for u in users]
                + [(per_user.get(u) or {}).get("wait_p50_s", "") for u in users]
                + [(per_group.get(g) or {}).get("share", "") for g in groups])


# -- the comparison plot


def run_label(grid: Sequence[GridAxis], settings: Settings) -> str:
    """A run's name on the plot: its value for a one-knob grid, else ``KNOB=value`` per line."""
    if len(grid) == 1:
        return settings[0][1]
    return "\n".join(f"{knob}={value}" for knob, value in settings)


def plot_sweep(path: Path, grid: Sequence[GridAxis], runs: Sequence[SweepRun]) -> None:
    """sweep.png: per run, the eight biggest users' shares stacked (the rest as "others"), and
    their median and 95th-percentile waits side by side. A failed run is an empty column marked
    "failed"."""
    totals: dict[str, float] = {}
    for run in runs:
        for name, row in ((run.summary or {}).get("users") or {}).items():
            totals[name] = totals.get(name, 0.0) + float((row or {}).get("cpu_s") or 0.0)
    named = sorted(totals, key=lambda n: (-totals[n], n))[:NAMED]
    labels = [run_label(grid, run.settings) for run in runs]
    x = list(range(len(runs)))
    figure, (top, *waits) = plt.subplots(3, 1, figsize=(max(6.0, 1.3 * len(runs) + 3), 9.5), layout="constrained")
    bottoms = [0.0] * len(runs)
    for name in [*named, OTHERS]:
        shares = [_share(run, name, named) for run in runs]
        if name == OTHERS and not any(shares):
            continue
        top.bar(x, shares, bottom=bottoms, label=name)
        bottoms = [b + s for b, s in zip(bottoms, shares, strict=True)]
    for i, run in enumerate(runs):
        if run.error is not None:
            top.text(i, 0.5, "failed", ha="center", rotation=90, color="firebrick")
    top.set_ylim(0, 1)
    top.set_ylabel("share of CPU time")
    top.set_title("Share of CPU time per user, per run")
    width = 0.8 / max(1, len(named))
    for axes, key, label in zip(waits, ("wait_p50_s", "wait_p95_s"), ("median", "95th percentile"), strict=True):
        for k, name in enumerate(named):
            values = [float((((run.summary or {}).get("users") or {}).get(name) or {}).get(key) or 0.0)
                      for run in runs]
            axes.bar([i - 0.4 + width * (k + 0.5) for i in x], values, width=width, label=name)
        axes.set_ylabel(f"{label} wait (s)")
        axes.set_title(f"Wait per user ({label}), per run")
    for axes in (top, *waits):
        axes.set_xticks(x, labels, fontsize="small")
        axes.grid(alpha=0.3, axis="y")
    knobs = ", ".join(axis.knob for axis in grid)
    waits[-1].set_xlabel(knobs if len(grid) == 1 else "run")
    if named:
        top.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _share(run: SweepRun, name: str, named: Sequence[str]) -> float:
    users = (run.summary or {}).get("users") or {}
    if name == OTHERS:
        return sum(float((row or {}).get("share") or 0.0) for n, row in users.items() if n not in named)
    return float((users.get(name) or {}).get("share") or 0.0)
