"""Negotiation cycle benchmark: ``python -m benchmarks.bench_negotiator [--quick]``.

A pool of static slots (8 per machine, three memory sizes, five KFlops ratings, two operating
systems) or of 8-core partitionable slots with a consumption policy, against idle jobs from 100
users in a given number of autoclusters (distinct RequestMemory × RequestDisk shapes, each user's
jobs spread over its own share of them). Reports the cycle time, wall clock and CPU, best of three
(building the request lists from job ads is timed separately: it is the schedd's work) and matches
per second, then how the cycle grows when slots, jobs and autoclusters each grow tenfold.
"""

from __future__ import annotations

import sys
import time

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import (
    Accountant,
    AutoclusterTable,
    GroupPolicy,
    GroupSettings,
    NegotiatorPolicy,
    SubmitterAd,
    negotiate,
    resource_requests,
    significant_attributes,
)

NOW = 1_800_000_000.0
USERS = 100


def make_slots(n: int, partitionable: bool = False) -> list[ClassAd]:
    base = ClassAd()
    base["Start"] = True
    base["Rank"] = 0
    base["Arch"] = "X86_64"
    base["State"] = "Unclaimed"
    base["Activity"] = "Idle"
    if partitionable:
        base["PartitionableSlot"] = True
        base["Requirements"] = ExprTree("START && TARGET.RequestCpus <= Cpus && TARGET.RequestMemory <= Memory")
        base["MachineResources"] = "Cpus Memory Disk"
        base["ConsumptionCpus"] = ExprTree("TARGET.RequestCpus")
        base["ConsumptionMemory"] = ExprTree("quantize(TARGET.RequestMemory,{128})")
        base["ConsumptionDisk"] = ExprTree("quantize(TARGET.RequestDisk,{1024})")
    else:
        base["Requirements"] = ExprTree("START")
    slots = []
    for i in range(n):
        ad = base.copy()
        machine = i // 8 if not partitionable else i
        ad["Name"] = f"slot{i % 8 + 1}@m{machine}" if not partitionable else f"slot1@m{machine}"
        ad["OpSys"] = "WINDOWS" if machine % 10 == 9 else "LINUX"
        ad["KFlops"] = 1_000_000 + 100_000 * (machine % 5)
        if partitionable:
            ad["Cpus"] = 8
            ad["Memory"] = 8 * 4096
            ad["Disk"] = 8 * 10_000_000
            ad["SlotID"] = 1
        else:
            ad["Cpus"] = 1
            ad["Memory"] = (2048, 4096, 8192)[machine % 3]
            ad["Disk"] = 10_000_000
            ad["SlotID"] = i % 8 + 1
        slots.append(ad)
    return slots


def make_jobs(njobs: int, nclusters: int) -> dict[str, list[ClassAd]]:
    req = ExprTree('TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus')
    per_user = max(1, nclusters // USERS)
    jobs: dict[str, list[ClassAd]] = {}
    per = njobs // USERS
    for u in range(USERS):
        name = f"user{u}@example.org"
        lst = []
        for k in range(per):
            shape = (u * per_user + k % per_user) % nclusters
            ad = ClassAd()
            ad["ClusterId"] = u * 1000 + k % per_user
            ad["ProcId"] = k
            ad["JobPrio"] = 0
            ad["RequestCpus"] = 1
            ad["RequestMemory"] = 1024 + 10 * (shape % 100)
            ad["RequestDisk"] = 1000 + shape // 100
            ad["Requirements"] = req
            ad["Owner"] = f"user{u}"
            lst.append(ad)
        jobs[name] = lst
    return jobs


def run(nslots: int, njobs: int, nclusters: int, *, partitionable: bool = False, groups: bool = False,
        repeat: int = 3) -> dict[str, float]:
    """Build the pool and the request lists once, then run the cycle ``repeat`` times (each with a
    fresh accountant; the cycle does not change its inputs) and keep the best wall-clock and CPU
    times: on a shared machine the CPU time is the steadier figure."""
    policy = NegotiatorPolicy()
    if groups:
        policy = NegotiatorPolicy(groups=GroupPolicy(tuple(GroupSettings(f"group{g}", dynamic_quota=0.1) for g in range(10))))
    slots = make_slots(nslots, partitionable)
    jobs = make_jobs(njobs, nclusters)
    t0 = time.perf_counter()
    table = AutoclusterTable(significant_attributes(slots, policy))
    subs = []
    for u, (name, js) in enumerate(jobs.items()):
        if groups:
            name = f"group{u % 10}.{name}"
        subs.append(SubmitterAd(name, schedd=f"schedd{u % 5}", requests=resource_requests(js, table, NOW)))
    t1 = time.perf_counter()
    wall = cpu = float("inf")
    matches = 0
    for _ in range(max(1, repeat)):
        acct = Accountant(policy.accountant)
        acct.update_priorities(NOW - 60)
        w0, c0 = time.perf_counter(), time.process_time()
        out = negotiate(NOW, slots, subs, acct, policy, timer=time.perf_counter)
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
        matches = out.stats.matches
    return {
        "requests_s": t1 - t0,
        "cycle_s": wall,
        "cpu_s": cpu,
        "matches": matches,
        "rate": matches / wall,
        "autoclusters": len(table.ids),
    }


def _line(label: str, r: dict[str, float]) -> None:
    print(f"  {label:<58} cycle {r['cycle_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  matches {int(r['matches']):>6}  "
          f"{r['rate']:>7.0f} matches/s  (requests built in {r['requests_s']:.2f} s, "
          f"{int(r['autoclusters'])} autoclusters)")


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    quick = "--quick" in args
    scale = 10 if quick else 1
    print("negotiation cycle, 100 submitters, default policy; best of 3 runs (wall clock and CPU)")
    _line(f"{1000 // scale} static slots x {100_000 // scale} jobs, {1000 // scale} ac",
          run(1000 // scale, 100_000 // scale, 1000 // scale))
    for label, kw in (("static", {}), ("static, 10 groups", {"groups": True}),
                      ("p-slots (8 cores, consumption policy)", {"partitionable": True}),
                      ("p-slots, 10 groups", {"partitionable": True, "groups": True})):
        _line(f"{10_000 // scale} {label} x {100_000 // scale} jobs, {1000 // scale} ac",
              run(10_000 // scale, 100_000 // scale, 1000 // scale, **kw))  # type: ignore[arg-type]
    base = (1000 // scale, 10_000 // scale, 100)
    print(f"growth from {base[0]:,} static slots x {base[1]:,} jobs x {base[2]} autoclusters "
          "(each 10x alone; ratios of CPU time)")
    r0 = run(*base)
    _line("base", r0)
    for label, dims in (("slots x10", (base[0] * 10, base[1], base[2])),
                        ("jobs x10", (base[0], base[1] * 10, base[2])),
                        ("autoclusters x10", (base[0], base[1], base[2] * 10))):
        r = run(*dims)
        _line(f"{label}: {r['cpu_s'] / r0['cpu_s']:.1f}x the base", r)


if __name__ == "__main__":
    main()
