"""What one simulation run is asked to do: the inputs, the output directory and the knobs.

`SimOptions` is the whole interface between the command line (`htcpool sim`) and the
engine (`htcpool.sim.run.simulate`); `Progress` is what the engine reports now and
then while it runs (see docs/simulator.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running simulation, for a progress bar."""

    simulated_s: float
    until_s: float | None
    events: int
    events_per_s: float
    jobs_done: int
    jobs_total: int


@dataclass(frozen=True)
class SimOptions:
    """Inputs and settings of one simulation run."""

    config: Path  # an ordinary condor_config
    machines: Path  # condor_status -long dump, or the compact machine file
    workload: Path  # SWF trace, condor_history -long output, or a submit file
    out: Path  # output directory (created)
    until: float | None = None  # stop at this simulated time (s from the start); None: all jobs done
    seed: int = 0
    overrides: tuple[tuple[str, str], ...] = ()  # --set KNOB=VALUE, applied after CONFIG
    skip_bad: bool = False  # skip malformed trace lines (counted in summary.json "skipped_lines")
    message_delay: float = 0.0  # modelled delay of every protocol message, seconds
    userprio: Path | None = None  # condor_userprio -long output: the accountant's state at the start
    on_progress: Callable[[Progress], None] | None = field(default=None, compare=False)
