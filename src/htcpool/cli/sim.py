"""``htcpool sim``: replay a workload against a pool configuration, and sweeps of such runs.

    htcpool sim CONFIG --machines FILE --workload FILE --out DIR
                [--until T] [--seed N] [--set KNOB=VALUE]... [--skip-bad] [--delay S] [--userprio FILE]
    htcpool sim sweep CONFIG --machines FILE --workload FILE --out DIR
                --grid KNOB=v1,v2,... [--grid ...] [--scheduler ADDRESS] [--workers N] [same options]

A run shows a progress bar (simulated time, events per second, jobs done) on stderr while the
engine (`htcpool.sim.run.simulate`) works, then writes the report (`htcpool.sim.report`) into
DIR and prints a short summary. A sweep (`htcpool.sim.sweep`) shows runs done, then prints one
line per run. Durations (``--until``, ``--delay``) are seconds or a number with ``s``, ``m``,
``h`` or ``d``. Any error, of the command line or of an input file, is one line on stderr and
exit status 1. docs/simulator.md describes every option and output file.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from htcpool.cli.common import ToolError, run_tool
from htcpool.config.errors import ConfigError
from htcpool.sim.options import Progress, SimOptions

PROG = "htcpool sim"
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and status 1, like every other error here."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(1)


def parse_duration(text: str, option: str = "--until") -> float:
    """Seconds from ``90``, ``1.5``, ``30m``, ``12h`` or ``2d``."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*", text, re.IGNORECASE)
    if found is None:
        raise ToolError(f"{option} {text!r}: expected seconds or a number with s, m, h or d (30m, 12h, 2d)")
    return float(found.group(1)) * _UNITS[found.group(2).lower()]


def parse_setting(text: str) -> tuple[str, str]:
    """``KNOB=VALUE`` of ``--set`` as (knob, value); the value may be empty or contain '='."""
    knob, equals, value = text.partition("=")
    knob = knob.strip()
    if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", knob):
        raise ToolError(f"--set {text!r}: expected KNOB=VALUE")
    return knob, value.strip()


def describe_duration(seconds: float) -> str:
    for size, unit in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:,.0f} s"


def _parser(prog: str, description: str) -> _Parser:
    p = _Parser(prog=prog, description=description)
    p.add_argument("config", metavar="CONFIG", help="a condor_config file (the one the pool would read)")
    p.add_argument("--machines", required=True, metavar="FILE",
                   help="machine file (COUNT KNOB=VALUE ... per line) or condor_status -long dump")
    p.add_argument("--workload", required=True, metavar="FILE",
                   help="SWF trace, condor_history -long output, or submit file with +SimRuntime")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the output files")
    p.add_argument("--until", metavar="T", help="stop at this simulated time (seconds, or 30m, 12h, 2d)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE", dest="settings",
                   help="set a configuration knob after CONFIG (repeatable)")
    p.add_argument("--skip-bad", action="store_true", help="skip malformed trace lines, counting them")
    p.add_argument("--delay", default="0", metavar="S", help="modelled delay of every message (seconds)")
    p.add_argument("--userprio", metavar="FILE",
                   help="condor_userprio -long output: the accountant's state at the start")
    return p


def _options(args: argparse.Namespace) -> SimOptions:
    paths = {"CONFIG": args.config, "--machines": args.machines, "--workload": args.workload}
    if args.userprio is not None:
        paths["--userprio"] = args.userprio
    for option, value in paths.items():
        if not Path(value).is_file():
            raise ToolError(f"{option} {value}: no such file")
    return SimOptions(
        config=Path(args.config), machines=Path(args.machines), workload=Path(args.workload),
        out=Path(args.out), until=parse_duration(args.until) if args.until is not None else None,
        seed=args.seed, overrides=tuple(parse_setting(s) for s in args.settings),
        skip_bad=args.skip_bad, message_delay=parse_duration(args.delay, "--delay"),
        userprio=Path(args.userprio) if args.userprio is not None else None)


def _input_errors(body: Callable[[], int]) -> Callable[[], int]:
    """``body`` with the simulator's input errors turned into one-line tool errors."""

    def wrapped() -> int:
        try:
            return body()
        except (ValueError, ConfigError) as e:  # SimInputError, ReportError, GridError, config
            raise ToolError(str(e)) from None
        except OSError as e:
            raise ToolError(f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")) from None

    return wrapped


def main(argv: list[str]) -> int:
    if argv and argv[0] == "sweep":
        return sweep(argv[1:])
    p = _parser(PROG, "Replay a workload against a pool configuration on a virtual clock.")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:  # --help, or a usage error already printed
        return int(e.code or 0)

    def body() -> int:
        from htcpool.sim.report import write_report
        from htcpool.sim.run import simulate

        options = _options(args)
        with _ProgressBar() as bar:
            summary = simulate(_with_progress(options, bar.update))
        write_report(options.out)
        _print_summary(summary, options.out)
        return 0

    return run_tool(PROG, _input_errors(body))


def _with_progress(options: SimOptions, callback: Callable[[Progress], None]) -> SimOptions:
    from dataclasses import replace

    return replace(options, on_progress=callback)


class _ProgressBar:
    """A rich progress bar on stderr fed by the engine's Progress reports: against ``--until``
    when given, else against the jobs of the trace."""

    def __enter__(self) -> _ProgressBar:
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        console = Console(stderr=True)
        self.bar: Bar | None = None
        if console.is_terminal:  # no bar in a pipe or a log file
            self.bar = Bar(TextColumn("simulating"), BarColumn(), TextColumn("{task.fields[detail]}"),
                           TimeElapsedColumn(), console=console, transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task("simulating", total=None, detail="")
        return self

    def update(self, progress: Progress) -> None:
        if self.bar is None:
            return
        total: float | None
        if progress.until_s:
            total, done = progress.until_s, min(progress.simulated_s, progress.until_s)
        else:  # against the jobs read so far (the trace is streamed: the total grows)
            total, done = float(progress.jobs_total) or None, float(progress.jobs_done)
        detail = (f"{describe_duration(progress.simulated_s)} simulated · "
                  f"{progress.events_per_s:,.0f} events/s · {progress.jobs_done:,}/{progress.jobs_total:,} jobs")
        self.bar.update(self.task, total=total, completed=done, detail=detail)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _number(value: Any, spec: str) -> str:
    """``value`` formatted, or a dash where the summary has none (no job of that user waited)."""
    return format(float(value), spec) if isinstance(value, int | float) else "-"


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    timing = summary.get("timing") or {}
    print(f"Simulated {describe_duration(float(summary.get('simulated_s', 0)))} in "
          f"{float(timing.get('wall_s', 0)):,.1f} s ({float(timing.get('speedup', 0)):,.0f}x real time)")
    print(f"Jobs: {summary.get('jobs_submitted', 0):,} submitted, {summary.get('jobs_completed', 0):,} "
          f"completed; makespan {describe_duration(float(summary.get('makespan_s', 0)))}; "
          f"utilization {float(summary.get('utilization', 0)):.1%}")
    print(f"Negotiation cycles: {summary.get('negotiation_cycles', 0):,}; preemptions: "
          f"{summary.get('preemptions', 0):,}; badput: {float(summary.get('badput_s', 0)):,.0f} CPU s"
          + (f"; trace lines skipped: {summary['skipped_lines']:,}" if summary.get("skipped_lines") else ""))
    for heading, rows in (("user", summary.get("users") or {}), ("group", summary.get("groups") or {})):
        if not rows:
            continue
        width = max(len(heading), *(len(name) for name in rows))
        print(f"\n{heading:<{width}}  {'jobs':>8}  {'share':>6}  {'wait p50':>9}  {'wait p95':>9}")
        for name, row in sorted(rows.items(), key=lambda item: -float(item[1].get("cpu_s") or 0)):
            print(f"{name:<{width}}  {_number(row.get('jobs_completed'), ',.0f'):>8}  "
                  f"{_number(row.get('share'), '.1%'):>6}  {_number(row.get('wait_p50_s'), ',.0f'):>9}  "
                  f"{_number(row.get('wait_p95_s'), ',.0f'):>9}")
    for note in summary.get("notes") or ():
        print(f"\nNote: {note}")
    print(f"\nReport: {out / 'report.html'}")


# -- sweeps


def sweep(argv: Sequence[str]) -> int:
    prog = f"{PROG} sweep"
    p = _parser(prog, "Run one simulation per combination of knob values, in parallel on Dask.")
    p.add_argument("--grid", action="append", default=[], required=True, metavar="KNOB=v1,v2,...",
                   help="values of one knob to sweep (repeatable: every combination runs)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (default: a local cluster)")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes of the local cluster")
    try:
        args = p.parse_args(list(argv))
    except SystemExit as e:
        return int(e.code or 0)

    def body() -> int:
        from htcpool.sim.sweep import SweepRun, parse_grid, run_label, run_sweep

        grid = parse_grid(args.grid)
        if args.workers is not None and args.workers < 1:
            raise ToolError(f"--workers {args.workers}: at least 1")
        options = _options(args)
        count = 1
        for axis in grid:
            count *= len(axis.values)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(stderr=True)
        with Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True, disable=not console.is_terminal) as bar:
            task = bar.add_task("sweep", total=count)

            def done(_: SweepRun) -> None:
                bar.advance(task)

            runs = run_sweep(options, grid, scheduler=args.scheduler, workers=args.workers, on_done=done)
        failed = 0
        for run in runs:
            label = run_label(grid, run.settings).replace("\n", ", ")
            if run.error is not None:
                failed += 1
                print(f"run-{run.index} {label}: failed: {run.error}", file=sys.stderr)
                continue
            s = run.summary or {}
            shares = ", ".join(f"{name} {float(row.get('share', 0)):.1%}"
                               for name, row in sorted((s.get("users") or {}).items()))
            print(f"run-{run.index} {label}: {s.get('jobs_completed', 0):,} jobs done, utilization "
                  f"{float(s.get('utilization', 0)):.1%}, makespan {describe_duration(float(s.get('makespan_s', 0)))}"
                  + (f"; shares: {shares}" if shares else ""))
        print(f"\nTable: {options.out / 'sweep.csv'}\nPlot: {options.out / 'sweep.png'}")
        return 1 if failed else 0

    return run_tool(prog, _input_errors(body))
