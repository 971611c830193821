"""One starter's own latency, as the startd starts it: forked by a fork server, one job at a time.

For ROUNDS jobs of ``/bin/true``, each after a pause of GAP seconds (so that, as in a pool
where a slot's jobs are a second apart, the kernel's cgroup moves find it idle), it measures
from the startd's request to the ``started`` event (the job has exec'd), from ``started`` to
``exited``, and from ``exited`` to the starter's end, and prints the medians. With cgroups
usable here (root, a memory controller) each job gets a cgroup under ``BASE`` and the startd's
move is prepared where the startd prepares it (``cgroup_moves.prepare_move``, where the tree has
it: for whole-process moves, since the v1 thread moves need none);
``--no-cgroup`` runs the jobs without, ``--no-prepare`` without the prepared move. Run:
``.venv/bin/python -m benchmarks.bench_starter [--no-cgroup] [--no-prepare] [ROUNDS]``;
``PYTHONPATH=<other tree>/src`` measures another source tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd
from htcpool.runtime.cgroups import CgroupSpec, MemoryLimits, detect
from htcpool.runtime.forkserver import ForkServer
from htcpool.runtime.launch import launch_spec
from htcpool.runtime.starter_client import StarterHandle, child_environment

try:  # absent from trees before it, which this benchmark also measures (PYTHONPATH=<tree>/src)
    from htcpool.runtime.cgroup_moves import prepare_move
except ImportError:
    prepare_move = None  # type: ignore[assignment]
try:  # trees before it prepared every move
    from htcpool.runtime.cgroup_moves import needs_prepared_move
except ImportError:
    def needs_prepared_move(spec: CgroupSpec) -> bool:
        return True

ROUNDS = 30
GAP = 0.1
BASE = "htcpool_bench_starter"


async def rounds(count: int, confined: bool, prepare: bool) -> list[tuple[float, float, float]]:
    """(request to started, started to exited, exited to the starter's end) for each job, seconds."""
    found = detect(base=BASE) if confined else None
    tmp = Path(tempfile.mkdtemp(prefix="htcpool-bench-starter-"))
    server = ForkServer(child_environment())
    loop = asyncio.get_running_loop()
    out = []
    try:
        for i in range(count):
            await asyncio.sleep(GAP)
            spec = launch_spec(ClassAd({"Cmd": "/bin/true", "Iwd": str(tmp)}), str(tmp / f"s{i}"), "slot1_1", {},
                               now=time.time())
            if found is not None and found.version is not None:
                spec = dataclasses.replace(spec, cgroup=CgroupSpec("/sys/fs/cgroup", found.version, BASE,
                                                                   f"job_{os.getpid()}_{i}", MemoryLimits(hard_mb=64)))
            marks: dict[str, float] = {}

            def seen(event: dict[str, Any], marks: dict[str, float] = marks) -> None:
                marks.setdefault(str(event.get("event")), time.perf_counter())

            began = time.perf_counter()
            if spec.cgroup is not None and prepare and prepare_move is not None and needs_prepared_move(spec.cgroup):
                loop.run_in_executor(None, prepare_move, spec.cgroup)
            handle = await StarterHandle.spawn(spec, seen, stderr_path=str(tmp / "StarterLog"), forkserver=server)
            await handle.wait()
            ended = time.perf_counter()
            if "started" not in marks or "exited" not in marks:
                raise RuntimeError(f"job {i} did not run: {(tmp / 'StarterLog').read_text()[-2000:]}")
            out.append((marks["started"] - began, marks["exited"] - marks["started"], ended - marks["exited"]))
    finally:
        await server.close()
        shutil.rmtree(tmp, ignore_errors=True)
        for base in ("", "memory", "cpu", "cpuacct", "freezer"):  # the base ``detect`` made, now empty
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join("/sys/fs/cgroup", base, BASE))
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = sys.argv[1:] if argv is None else argv
    confined, prepare = "--no-cgroup" not in args, "--no-prepare" not in args
    count = next((int(a) for a in args if a.isdigit()), ROUNDS)
    found = detect(base=BASE) if confined else None
    label = f"cgroup {found.version}{'' if prepare else ', no prepared move'}" if found is not None and found.version is not None else (
        f"no cgroup ({found.reason})" if found is not None else "no cgroup")
    columns = list(zip(*asyncio.run(rounds(count, confined, prepare)), strict=True))
    figures = {name: statistics.median(values) for name, values in
               zip(("to_started_s", "started_to_exited_s", "exited_to_end_s"), columns, strict=True)}
    print(f"  {count} starters of /bin/true, {label}, load {os.getloadavg()[0]:.1f}: request to started "
          f"{figures['to_started_s'] * 1e3:.1f} ms, started to exited {figures['started_to_exited_s'] * 1e3:.1f} ms, "
          f"exited to the starter's end {figures['exited_to_end_s'] * 1e3:.1f} ms (medians)", flush=True)
    return figures


if __name__ == "__main__":
    main()
