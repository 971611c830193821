"""Startd policy evaluation: time per slot per poll, and how it grows with the slot count.

    python -m benchmarks startd      (or: python -m benchmarks.bench_startd)

Machines: N static slots each running a job under the Desktop policy, and one
partitionable slot with N dynamic slots each running a job. Every poll recomputes
load and idle times and evaluates each slot's whole policy. Each figure is the best of
three runs of 20 polls (each run after a garbage collection), to keep scheduler noise out.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import time

from htcpool.classad import ClassAd
from htcpool.config import Config, fake_machine
from htcpool.startd import ActivateClaim, RequestClaim, SensorReadings, Startd, settings_from_config

POLICY = "use POLICY : Desktop\nRunBenchmarks = false\n"


def _job(i: int) -> ClassAd:
    return ClassAd({"Owner": f"u{i}", "User": f"u{i}@x", "RequestCpus": 1, "RequestMemory": 128,
                    "RequestDisk": 1024, "JobUniverse": 5, "ImageSize": 1000, "ClusterId": i, "ProcId": 0})


def build(n: int, partitionable: bool) -> Startd:
    layout = ("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = true\n" if partitionable
              else "SLOT_TYPE_0_PARTITIONABLE = false\n")
    config = Config.from_text(POLICY + layout, subsystem="STARTD",
                              facts=fake_machine(logical_cpus=n, physical_cpus=n, memory_mib=n * 1024))
    startd = Startd(settings_from_config(config), 0.0)
    startd.handle(SensorReadings(load_avg=0.0, keyboard_idle=5000), 5000.0)
    startd.evaluate(5000.0)
    for i in range(n):
        slot = startd.slots[0] if partitionable else startd.slots[i]
        cid = slot.claim.id
        startd.handle(RequestClaim(cid, _job(i)), 5000.0)
        startd.handle(ActivateClaim(cid, _job(i)), 5000.0)
    return startd


def per_slot_eval(n: int, partitionable: bool, polls: int = 20, repeats: int = 3) -> float:
    """Seconds per slot-evaluation: the best of ``repeats`` runs of ``polls`` polls each."""
    startd = build(n, partitionable)
    slots = len(startd.slots)
    best = float("inf")
    now = 5005.0
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(polls):
            startd.evaluate(now)
            now += 5.0
        best = min(best, (time.perf_counter() - t0) / (polls * slots))
    return best


def calls_per_slot_eval(n: int, partitionable: bool) -> float:
    """Python function calls per slot-evaluation in one poll: flat in N when the poll is linear,
    and, unlike the time, not disturbed by other load on the machine."""
    startd = build(n, partitionable)
    startd.evaluate(5005.0)
    profile = cProfile.Profile()
    profile.runcall(startd.evaluate, 5010.0)
    return pstats.Stats(profile).total_calls / len(startd.slots)  # type: ignore[attr-defined]


def main() -> None:
    for partitionable in (False, True):
        label = "1 pslot + N dslots" if partitionable else "N static slots"
        print(f"{label}: time per slot-evaluation (whole policy, Desktop)")
        for n in (16, 32, 64, 128):
            us = per_slot_eval(n, partitionable) * 1e6
            calls = calls_per_slot_eval(n, partitionable)
            print(f"  N={n:4d}  {us:8.1f} us/slot  {us * n / 1000:8.2f} ms/poll  {calls:7.1f} calls/slot")


if __name__ == "__main__":
    main()
