"""The policy simulator: a workload replayed against a pool on a virtual clock by the real cores.

``simulate(SimOptions(config, machines, workload, out, ...))`` runs one simulation and writes
``summary.json``, ``timeseries.csv``, ``usage.csv`` and ``jobs.csv`` into ``out`` (docs/simulator.md).
Modules: ``options`` (what a run is asked), ``events`` (virtual clock and event heap),
``transport`` (messages in memory), ``central``, ``schedd_driver``, ``startd_driver`` and
``defrag_driver`` (one driver per daemon over its core), ``setup`` (configuration), ``machines``
and ``workload`` (the inputs), ``metrics`` and ``summary`` (the outputs), ``run`` (a whole run),
``report`` and ``sweep`` (plots, HTML and parameter sweeps over many runs).
"""

from typing import Any

from htcpool.sim.errors import SimInputError
from htcpool.sim.options import Progress, SimOptions


def __getattr__(name: str) -> Any:
    """``simulate`` and ``Simulation`` load the cores on first use, so a command line that only
    parses options (``htcpool sim --help``) stays quick."""
    if name in ("simulate", "Simulation"):
        from htcpool.sim import run

        return getattr(run, name)
    raise AttributeError(f"module 'htcpool.sim' has no attribute {name!r}")


__all__ = ["Progress", "SimInputError", "SimOptions", "Simulation", "simulate"]
