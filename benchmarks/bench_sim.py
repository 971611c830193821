"""The policy simulator: simulated seconds per wall-clock second on a large pool, and memory.

    python -m benchmarks sim                      (or: python -m benchmarks.bench_sim)
    python -m benchmarks.bench_sim --machines 625 --cpus 16 --hours 24 --load 0.9 [--profile]

A synthetic trace: ``--machines`` machines of ``--cpus`` cpus each (one partitionable slot per
machine; the issue's size is 625 × 16 = 10,000 cpus for 24 hours, which runs for hours: the
default is 40 × 16 cpus for one hour, docs/performance.md "Simulator"), 100 users submitting one-cpu jobs with runtimes
drawn from an exponential distribution (mean ``--runtime`` seconds) at a rate that keeps about
``--load`` of the pool busy, from a fixed seed. The trace is written as SWF and replayed through
``htcpool.sim.simulate`` for ``--hours`` of virtual time. Printed: wall time, speedup (simulated /
wall), events, jobs, negotiation cycles, peak resident memory; with ``--profile``, the functions
that took the time. The CPU time is printed beside the wall time: on a shared machine it is the
steadier figure. ``--events`` also times the event heap against SimPy's (when installed).
"""

from __future__ import annotations

import argparse
import cProfile
import heapq
import itertools
import pstats
import random
import resource
import tempfile
import time
from pathlib import Path

from htcpool.sim.events import EventLoop, Priority
from htcpool.sim.options import SimOptions
from htcpool.sim.run import Simulation

#: MAX_JOBS_RUNNING: HTCondor's default is MIN({$(DETECTED_MEMORY), 10000}), 8,192 on the
#: simulator's fixed machine facts, which would cap the 10,000-cpu day below its load; an access
#: point for such a pool is a larger host
CONFIG = """use FEATURE : PartitionableSlot
NEGOTIATOR_INTERVAL = 60
MAX_JOBS_RUNNING = 20000
"""


def write_inputs(where: Path, machines: int, cpus: int, hours: float, load: float, runtime: float,
                 seed: int = 1) -> tuple[Path, Path, Path, int]:
    rng = random.Random(seed)
    (where / "condor_config").write_text(CONFIG)
    (where / "machines.txt").write_text(f"{machines} NUM_CPUS={cpus} MEMORY={cpus * 4096}\n")
    rate = machines * cpus * load / runtime  # jobs per second that keep ``load`` of the cpus busy
    t, n = 0.0, 0
    lines = ["; UnixStartTime: 1767225600", f"; MaxProcs: {machines * cpus}"]
    while t < hours * 3600:
        n += 1
        run = max(1, int(rng.expovariate(1 / runtime)))
        lines.append(f"{n} {int(t)} -1 {run} 1 -1 -1 1 -1 1048576 1 {rng.randrange(1, 101)} -1 -1 -1 -1 -1 -1")
        t += rng.expovariate(rate)
    (where / "trace.swf").write_text("\n".join(lines) + "\n")
    return where / "condor_config", where / "machines.txt", where / "trace.swf", n


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        config, machines, trace, jobs = write_inputs(where, args.machines, args.cpus, args.hours, args.load,
                                                     args.runtime)
        options = SimOptions(config, machines, trace, where / "out", until=args.hours * 3600)
        started = time.perf_counter()
        cpu_started = time.process_time()
        simulation = Simulation(options)
        built = time.perf_counter() - started
        profile = cProfile.Profile() if args.profile else None
        if profile is not None:
            profile.enable()
        summary = simulation.run()
        if profile is not None:
            profile.disable()
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        simulated = summary["simulated_s"]
        print(f"pool: {args.machines} machines x {args.cpus} cpus; trace: {jobs} jobs over {args.hours} h")
        print(f"building the pool: {built:.1f} s; whole run: {wall:.1f} s wall for {simulated:.0f} s simulated "
              f"= {simulated / wall:.0f}x real time; {cpu:.1f} s of CPU = {simulated / cpu:.0f}x per CPU second")
        print(f"events: {simulation.loop.events} ({simulation.loop.events / wall:.0f}/s); jobs completed: "
              f"{summary['jobs_completed']}; cycles: {summary['negotiation_cycles']}; "
              f"utilization: {summary['utilization']}; peak memory: {rss:.0f} MiB")
        per_event = empty_loop_cost(simulation.loop.pending)
        print(f"the event loop alone: {per_event * 1e6:.2f} us per event with no work in it, so this run's "
              f"{simulation.loop.events / simulated:.1f} events per simulated second cap it at "
              f"{simulated / (simulation.loop.events * per_event):.0f}x real time on this machine")
        if profile is not None:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


def events(n: int = 200_000) -> None:
    """The event heap against SimPy, scheduling and running ``n`` timed callbacks."""
    rng = random.Random(1)
    delays = [rng.random() * 100 for _ in range(n)]

    def own() -> None:
        heap: list[tuple[float, int, int, object]] = []
        seq = itertools.count()
        for d in delays:
            heapq.heappush(heap, (d, 0, next(seq), None))
        while heap:
            heapq.heappop(heap)

    timings = {"heap": own}
    try:
        import simpy  # type: ignore[import-not-found]

        def with_simpy() -> None:
            env = simpy.Environment()
            for d in delays:
                env.timeout(d).callbacks.append(lambda event: None)
            env.run()

        timings["simpy"] = with_simpy
    except ImportError:
        print("SimPy is not installed: timing the heap only")
    for name, fn in timings.items():
        best = min(_timed(fn) for _ in range(3))
        print(f"{name}: {best / n * 1e6:.2f} us per event")


def empty_loop_cost(backlog: int, n: int = 100_000) -> float:
    """Seconds per event of ``sim.events.EventLoop`` running ``n`` callbacks that do nothing, each
    scheduling the next, beside ``backlog`` waiting events (a run's heap at its end): the cost
    of the loop's mechanics alone, the floor under every event of a run (docs/performance.md,
    "The event count is the floor")."""
    rng = random.Random(1)
    loop = EventLoop()
    for _ in range(backlog):
        loop.at(1e12 + rng.random(), Priority.TIMER, _nothing)
    left = [n]

    def tick() -> None:
        left[0] -= 1
        if left[0] > 0:
            loop.at(loop.now + rng.random(), Priority.TIMER, tick)

    loop.at(0.0, Priority.TIMER, tick)
    started = time.perf_counter()
    loop.run(until=1e11)
    return (time.perf_counter() - started) / n


def _nothing() -> None:
    pass


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machines", type=int, default=40)
    p.add_argument("--cpus", type=int, default=16)
    p.add_argument("--hours", type=float, default=1.0)
    p.add_argument("--load", type=float, default=0.9)
    p.add_argument("--runtime", type=float, default=3600.0, help="mean job runtime, seconds")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--events", action="store_true", help="only compare the event heap with SimPy")
    args = p.parse_args(argv if argv is not None else [])
    if args.events:
        events()
    else:
        run(args)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
