"""How fast the master's supervision acts: ``python -m benchmarks.bench_supervision [ROUNDS]``.

Each round starts a personal pool in a temporary directory (``NEGOTIATOR_NOT_RESPONDING_TIMEOUT =
3``) and measures, in wall-clock seconds:

* a second ``htcpool up`` on the same directory: how long until it refuses (exit status 1);
* a SIGSTOPped negotiator: from the stop to the master's log line naming it hung, and to its
  replacement's address being written (dump grace and back-off included);
* SIGKILL of the master: how long until every daemon it started has ended.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pidfile import ProcessIdentity, is_live, read_pid_file
from htcpool.runtime.pool import PERSONAL_CONFIG, start_pool, stop_pool

EXTRA = "NEGOTIATOR_NOT_RESPONDING_TIMEOUT = 3\nMASTER_BACKOFF_CONSTANT = 1\n"


def _until(test: Callable[[], object], timeout: float = 60.0) -> float:
    """Seconds until ``test`` gives something true (polling every 10 ms)."""
    started = time.monotonic()
    while not test():
        if time.monotonic() - started > timeout:
            raise TimeoutError("the pool did not get there in time")
        time.sleep(0.01)
    return time.monotonic() - started


def _daemons(layout: PoolLayout) -> list[ProcessIdentity]:
    found = (read_pid_file(p) for p in layout.run.glob("*.pid") if p != layout.master_pid)
    return [i for i in found if i is not None]


def one_round(root: Path) -> dict[str, float]:
    layout = PoolLayout(root)
    layout.make()
    layout.config.write_text(PERSONAL_CONFIG.format(local_dir=root) + EXTRA)
    master = start_pool(layout, timeout=60)
    figures: dict[str, float] = {}
    try:
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "htcpool", "up", "--local-dir", str(root)],
                                capture_output=True, text=True, check=False)
        assert second.returncode == 1, second
        figures["second up refused"] = time.monotonic() - started
        negotiator = read_pid_file(root / "run" / "negotiator.pid")
        assert negotiator is not None
        time.sleep(1.5)  # its first keep-alives
        master_log = layout.log_file("master")
        os.kill(negotiator.pid, signal.SIGSTOP)
        hung_line = f"negotiator (pid {negotiator.pid}) has sent no keep-alive"
        figures["hung negotiator named"] = _until(lambda: hung_line in master_log.read_text())
        replaced = _until(lambda: (new := read_pid_file(root / "run" / "negotiator.pid")) is not None
                          and new.pid != negotiator.pid and layout.read_address("negotiator"))
        figures["hung negotiator replaced"] = figures["hung negotiator named"] + replaced
        daemons = _daemons(layout)
        os.kill(master, signal.SIGKILL)
        figures["daemons gone after master SIGKILL"] = _until(lambda: not any(is_live(i) for i in daemons))
    finally:
        stop_pool(layout, timeout=30)
    return figures


def main(argv: list[str] | None = None) -> None:
    rounds = int((argv if argv is not None else sys.argv[1:] or ["3"])[0])
    runs = [one_round(Path(tempfile.mkdtemp(prefix="htcpool-supervision-")) / "pool") for _ in range(rounds)]
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} rounds (median, min, max seconds)")
    for name in runs[0]:
        values = [r[name] for r in runs]
        print(f"  {name:36s} {statistics.median(values):6.2f} {min(values):6.2f} {max(values):6.2f}")


if __name__ == "__main__":
    main()
