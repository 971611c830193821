"""The report of a simulation run: PNG plots and one HTML page, made from the run's output files.

`write_report(out)` reads what `simulate` left in ``out`` (docs/simulator.md, "Output files"):
``summary.json``, ``timeseries.csv`` and ``usage.csv``; and writes

- ``share_users.png`` / ``share_groups.png``: for each user (group), the CPUs in use over time
  as a stacked area, and below it the user's share of all CPU time used so far (the running
  integral of its CPUs in use over the running integral of everyone's), which ends at the
  ``share`` of ``summary.json``. Only the eight biggest users are named; the rest are summed as
  "others", so a trace of hundreds of users still gives a readable plot;
- ``priority_users.png``: each named user's effective priority (the accountant's EUP) over time;
- ``queue.png``: running, idle and held jobs over time;
- ``utilization.png``: the busy fraction of the pool's CPUs over time;
- ``report.html``: the summary's numbers, a table of users and one of groups, and the plots
  above (relative paths, so the directory can be moved or archived whole).

Plots use matplotlib's Agg backend (no display). Time is shown in seconds, minutes, hours or days,
whichever suits the run's length. A plot with nothing to show (a pool without accounting groups)
is left out, and the page says so.
"""

from __future__ import annotations

import csv
import html
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.axes import Axes  # noqa: E402

NAMED = 8  # users or groups drawn by name; the others are summed
OTHERS = "others"
_TIME_UNITS = ((2 * 86400, 86400.0, "days"), (2 * 3600, 3600.0, "hours"), (2 * 60, 60.0, "minutes"),
               (0, 1.0, "seconds"))


class ReportError(ValueError):
    """An output directory the report cannot be made from (a file missing or malformed)."""


@dataclass
class UsageSeries:
    """One kind (user or group) of usage.csv: the sample times and, per name, its values there."""

    times: list[float] = field(default_factory=list)
    cpus: dict[str, list[float]] = field(default_factory=dict)
    priority: dict[str, list[float]] = field(default_factory=dict)


def write_report(out: Path) -> None:
    """Write the plots and ``report.html`` of the run whose files are in ``out``."""
    summary = _read_summary(out / "summary.json")
    series = _read_timeseries(out / "timeseries.csv")
    usage = _read_usage(out / "usage.csv")
    scale, unit = _time_unit(max(series["time_s"], default=0.0))
    plots: list[tuple[str, str]] = []
    for kind, title in (("user", "users"), ("group", "groups")):
        found = usage.get(kind)
        if found is not None and found.cpus:
            name = f"share_{title}.png"
            _plot_share(found, title, scale, unit, out / name)
            plots.append((name, f"CPUs in use and share of CPU time, per {kind}"))
    users = usage.get("user")
    if users is not None and any(users.priority.values()):
        _plot_priority(users, scale, unit, out / "priority_users.png")
        plots.append(("priority_users.png", "Effective user priority (smaller is better)"))
    _plot_queue(series, scale, unit, out / "queue.png")
    plots.append(("queue.png", "Jobs running, idle and held"))
    _plot_utilization(series, scale, unit, out / "utilization.png")
    plots.append(("utilization.png", "Utilization of the pool's CPUs"))
    (out / "report.html").write_text(_page(summary, plots), encoding="utf-8")


# -- reading


def _read_summary(path: Path) -> dict[str, Any]:
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{path}: missing (is this a simulation's output directory?)") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(summary, dict):
        raise ReportError(f"{path}: not a JSON object")
    return summary


def _rows(path: Path, columns: Iterable[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """The rows of a CSV file with their line numbers, after checking its header has ``columns``."""
    try:
        handle = path.open(newline="", encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: missing (is this a simulation's output directory?)") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in columns if c not in (reader.fieldnames or ())]
        if missing:
            raise ReportError(f"{path}:1: the header lacks the column(s) {', '.join(missing)}")
        for row in reader:
            yield reader.line_num, row


def _number(path: Path, line: int, row: dict[str, str], column: str) -> float:
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise ReportError(f"{path}:{line}: {column} is {row[column]!r}, not a number") from None


def _read_timeseries(path: Path) -> dict[str, list[float]]:
    columns = ("time_s", "running_jobs", "idle_jobs", "held_jobs", "busy_cpus", "total_cpus",
               "utilization")
    series: dict[str, list[float]] = {c: [] for c in columns}
    for line, row in _rows(path, columns):
        for column in columns:
            series[column].append(_number(path, line, row, column))
    return series


def _read_usage(path: Path) -> dict[str, UsageSeries]:
    """usage.csv per kind. Each sample time lists every name active then; a name missing at a
    sample had nothing running (0 CPUs) and keeps its last priority."""
    columns = ("time_s", "kind", "name", "cpus_in_use", "effective_priority")
    found: dict[str, UsageSeries] = {}
    for line, row in _rows(path, columns):
        series = found.setdefault(row["kind"], UsageSeries())
        time = _number(path, line, row, "time_s")
        if not series.times or series.times[-1] != time:
            if series.times and time < series.times[-1]:
                raise ReportError(f"{path}:{line}: time_s {time:g} is before the previous sample")
            series.times.append(time)
            for values in series.cpus.values():
                values.append(0.0)
            for values in series.priority.values():
                values.append(values[-1])
        at = len(series.times)
        name = row["name"]
        cpus = series.cpus.setdefault(name, [0.0] * at)
        cpus[-1] = _number(path, line, row, "cpus_in_use")
        prio = series.priority.setdefault(name, [float("nan")] * at)
        text = row["effective_priority"]
        prio[-1] = _number(path, line, row, "effective_priority") if text not in ("", None) else prio[-1]
    return found


# -- plotting


def _time_unit(span: float) -> tuple[float, str]:
    for least, scale, unit in _TIME_UNITS:
        if span >= least:
            return scale, unit
    return 1.0, "seconds"


def _biggest(series: UsageSeries) -> list[str]:
    """The names drawn on their own: the NAMED with most CPU time, biggest first."""
    totals = {name: _integral(series.times, values) for name, values in series.cpus.items()}
    return sorted(totals, key=lambda name: (-totals[name], name))[:NAMED]


def _integral(times: list[float], values: list[float]) -> float:
    """CPU-seconds of a step function: each value holds until the next sample."""
    return sum(v * (t1 - t0) for t0, t1, v in zip(times, times[1:], values, strict=False))


def _running_share(times: list[float], values: list[float], totals: list[float]) -> list[float]:
    used = everyone = 0.0
    share = [float("nan")]  # nothing used yet: no share
    for i in range(1, len(times)):
        step = times[i] - times[i - 1]
        used += values[i - 1] * step
        everyone += totals[i - 1] * step
        share.append(used / everyone if everyone > 0 else 0.0)
    return share


def _plot_share(series: UsageSeries, title: str, scale: float, unit: str, path: Path) -> None:
    names = _biggest(series)
    stacks = {name: series.cpus[name] for name in names}
    rest = [n for n in series.cpus if n not in names]
    if rest:
        stacks[OTHERS] = [sum(series.cpus[n][i] for n in rest) for i in range(len(series.times))]
    totals = [sum(values[i] for values in stacks.values()) for i in range(len(series.times))]
    x = [t / scale for t in series.times]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True, layout="constrained")
    top.stackplot(x, *stacks.values(), labels=list(stacks), step="post", alpha=0.85)
    top.set_ylabel("CPUs in use")
    top.set_title(f"Usage per {title[:-1]}")
    for name, values in stacks.items():
        bottom.plot(x, _running_share(series.times, values, totals), label=name)
    bottom.set_ylabel("share of CPU time so far")
    bottom.set_ylim(0, 1)
    bottom.set_xlabel(f"simulated time ({unit})")
    _legend(top)
    _finish(figure, (top, bottom), path)


def _plot_priority(series: UsageSeries, scale: float, unit: str, path: Path) -> None:
    figure, axes = plt.subplots(figsize=(9, 4), layout="constrained")
    x = [t / scale for t in series.times]
    for name in _biggest(series):
        axes.plot(x, series.priority[name], label=name, drawstyle="steps-post")
    axes.set_yscale("log")
    axes.set_ylabel("effective priority")
    axes.set_xlabel(f"simulated time ({unit})")
    axes.set_title("Effective user priority (smaller is better)")
    _legend(axes)
    _finish(figure, (axes,), path)


def _plot_queue(series: dict[str, list[float]], scale: float, unit: str, path: Path) -> None:
    figure, axes = plt.subplots(figsize=(9, 4), layout="constrained")
    x = [t / scale for t in series["time_s"]]
    for column, label in (("running_jobs", "running"), ("idle_jobs", "idle"), ("held_jobs", "held")):
        axes.plot(x, series[column], label=label, drawstyle="steps-post")
    axes.set_ylabel("jobs")
    axes.set_xlabel(f"simulated time ({unit})")
    axes.set_title("Queue")
    _legend(axes)
    _finish(figure, (axes,), path)


def _plot_utilization(series: dict[str, list[float]], scale: float, unit: str, path: Path) -> None:
    figure, axes = plt.subplots(figsize=(9, 3.5), layout="constrained")
    x = [t / scale for t in series["time_s"]]
    axes.fill_between(x, series["utilization"], step="post", alpha=0.6)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("busy CPUs / all CPUs")
    axes.set_xlabel(f"simulated time ({unit})")
    axes.set_title("Utilization")
    _finish(figure, (axes,), path)


def _legend(axes: Axes) -> None:
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)


def _finish(figure: Any, axes: Iterable[Axes], path: Path) -> None:
    for each in axes:
        each.grid(alpha=0.3)
        each.set_xlim(left=0)
    figure.savefig(path, dpi=90)
    plt.close(figure)


# -- the page


_HEADLINE = (("jobs_submitted", "jobs submitted", "{:,.0f}"), ("jobs_completed", "jobs completed", "{:,.0f}"),
             ("simulated_s", "simulated time (s)", "{:,.0f}"), ("makespan_s", "makespan (s)", "{:,.0f}"),
             ("utilization", "utilization", "{:.1%}"), ("negotiation_cycles", "negotiation cycles", "{:,.0f}"),
             ("preemptions", "preemptions", "{:,.0f}"), ("badput_s", "badput (CPU s)", "{:,.0f}"),
             ("skipped_lines", "trace lines skipped", "{:,.0f}"))
_PER_NAME = (("jobs_completed", "jobs completed", "{:,.0f}"), ("wait_p50_s", "wait p50 (s)", "{:,.0f}"),
             ("wait_p95_s", "wait p95 (s)", "{:,.0f}"), ("cpu_s", "CPU time (s)", "{:,.0f}"),
             ("share", "share", "{:.1%}"))


def _format(template: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return html.escape(str(value)) if value is not None else "–"
    return template.format(value)


def _table(heading: str, rows: dict[str, Any], first: str) -> str:
    if not rows:
        return f"<h2>{heading}</h2><p>none in this run</p>"
    head = "".join(f"<th>{label}</th>" for _, label, _ in _PER_NAME)
    body = "".join(
        f"<tr><td>{html.escape(name)}</td>"
        + "".join(f"<td>{_format(t, (values or {}).get(key))}</td>" for key, _, t in _PER_NAME)
        + "</tr>"
        for name, values in sorted(rows.items(), key=lambda item: -float((item[1] or {}).get("cpu_s") or 0)))
    return f"<h2>{heading}</h2><table><tr><th>{first}</th>{head}</tr>{body}</table>"


def _page(summary: dict[str, Any], plots: list[tuple[str, str]]) -> str:
    timing = summary.get("timing") or {}
    numbers = [(label, _format(t, summary.get(key))) for key, label, t in _HEADLINE]
    numbers += [("wall time (s)", _format("{:,.1f}", timing.get("wall_s"))),
                ("speed-up (simulated / wall)", _format("{:,.0f}×", timing.get("speedup")))]
    headline = "".join(f"<tr><th>{label}</th><td>{value}</td></tr>" for label, value in numbers)
    figures = "".join(f'<figure><img src="{name}" alt="{html.escape(caption)}">'
                      f"<figcaption>{html.escape(caption)}</figcaption></figure>" for name, caption in plots)
    if not any(name == "share_groups.png" for name, _ in plots):
        figures += "<p>No accounting groups in this run, so no plot per group.</p>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>htcpool simulation report</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 60em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
img {{ max-width: 100%; }}
figcaption {{ color: #555; margin-bottom: 1.5em; }}
</style></head><body>
<h1>htcpool simulation report</h1>
<table>{headline}</table>
{_table("Users", summary.get("users") or {}, "user")}
{_table("Accounting groups", summary.get("groups") or {}, "group")}
<h2>Plots</h2>
{figures}
</body></html>
"""
