"""Writing a simulation's input files for the engine's tests, and running it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from htcpool.sim.options import SimOptions
from htcpool.sim.run import simulate

EPOCH = 1_700_000_000


def swf_line(number: int, submit: float, runtime: float, user: int, *, cpus: int = 1, group: int = -1,
             memory_kb: int = 102_400, status: int = 1) -> str:
    fields = [number, submit, -1, runtime, cpus, -1, -1, cpus, -1, memory_kb, status, user, group,
              -1, -1, -1, -1, -1]
    return " ".join(str(f) for f in fields)


def write_swf(path: Path, lines: list[str], epoch: int = EPOCH) -> Path:
    path.write_text(f"; UnixStartTime: {epoch}\n; MaxProcs: 64\n" + "\n".join(lines) + "\n")
    return path


def run(tmp: Path, config: str, machines: str, workload: str | list[str], *, until: float | None = None,
        name: str = "trace.swf", **options: Any) -> dict[str, Any]:
    """Write the three inputs under ``tmp`` and simulate into ``tmp/out``."""
    (tmp / "condor_config").write_text(config)
    (tmp / "machines.txt").write_text(machines)
    if isinstance(workload, list):
        write_swf(tmp / name, workload)
    else:
        (tmp / name).write_text(workload)
    return simulate(SimOptions(tmp / "condor_config", tmp / "machines.txt", tmp / name, tmp / "out",
                               until=until, **options))


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def summary_without_timing(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    data.pop("timing")
    return data
