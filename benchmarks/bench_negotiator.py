"""Negotiation cycle benchmark: ``python -m benchmarks.bench_negotiator [--quick]``.

A pool of static slots (8 per machine, three memory sizes, five KFlops ratings, two operating
systems) or of 8-core partitionable slots with a consumption policy, against idle jobs from 100
users in a given number of autoclusters (distinct RequestMemory × RequestDisk shapes, each user's
jobs spread over its own share of them). Reports the cycle time, wall clock and CPU, best of three
(building the request lists from job ads is timed separately: it is the schedd's work) and matches
per second, then how the cycle grows when slots, jobs and autoclusters each grow tenfold.

``--large`` (opt-in: it takes minutes to build) adds the central-manager row: 100,000 partitionable
slots (8 cores, HTCondor's default of no consumption policy: one match per slot per cycle, charged
as the dynamic slot it carves) against 1,000,000 idle jobs in 10,000 autoclusters from 1,000
submitters in 20 groups with dynamic quotas, one cycle, and the same at a tenth of the size, to show
how the cost grows. Its request lists are built as a schedd would send them, one representative
job ad per autocluster run (the jobs of a run are ids), so building a million ads is not timed.
"""

from __future__ import annotations

import dataclasses
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


def make_pslots(n: int) -> list[ClassAd]:
    """``n`` 8-core partitionable slots without a consumption policy (HTCondor's default)."""
    base = ClassAd()
    for k, v in (("Start", True), ("Rank", 0), ("Arch", "X86_64"), ("State", "Unclaimed"), ("Activity", "Idle"),
                 ("PartitionableSlot", True), ("Cpus", 8), ("Memory", 8 * 4096), ("Disk", 8 * 10_000_000),
                 ("SlotID", 1)):
        base[k] = v
    base["Requirements"] = ExprTree("START && TARGET.RequestCpus <= Cpus && TARGET.RequestMemory <= Memory")
    slots = []
    for i in range(n):
        ad = base.copy()
        ad["Name"] = f"slot1@m{i}"
        ad["Machine"] = f"m{i}"
        ad["OpSys"] = "WINDOWS" if i % 10 == 9 else "LINUX"
        ad["KFlops"] = 1_000_000 + 100_000 * (i % 5)
        slots.append(ad)
    return slots


def run_large(nslots: int, njobs: int, nclusters: int, users: int, ngroups: int) -> dict[str, float]:
    """One cycle of the central-manager row (see the module docstring)."""
    groups = GroupPolicy(tuple(GroupSettings(f"group{g}", dynamic_quota=1.0 / ngroups) for g in range(ngroups)))
    policy = NegotiatorPolicy(groups=groups)
    slots = make_pslots(nslots)
    req = ExprTree('TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus')
    t0 = time.perf_counter()
    table = AutoclusterTable(significant_attributes(slots, policy))
    per_user, per_run = nclusters // users, njobs // nclusters
    subs = []
    for u in range(users):
        reps = []
        for k in range(per_user):
            shape = u * per_user + k
            ad = ClassAd()
            for attr, value in (("ClusterId", u * 1000 + k), ("ProcId", 0), ("JobPrio", 0), ("RequestCpus", 1),
                                ("RequestMemory", 1024 + shape % 1000), ("RequestDisk", 1000 + shape // 1000),
                                ("Owner", f"user{u}")):
                ad[attr] = value
            ad["Requirements"] = req
            reps.append(ad)
        runs = [dataclasses.replace(r, jobs=tuple((r.jobs[0][0], p) for p in range(per_run)),
                                    job_prios=(0,) * per_run)
                for r in resource_requests(reps, table, NOW)]
        subs.append(SubmitterAd(f"group{u % ngroups}.user{u}@example.org", schedd=f"schedd{u % 20}", requests=runs))
    t1 = time.perf_counter()
    acct = Accountant(policy.accountant)
    acct.update_priorities(NOW - 60)
    w0, c0 = time.perf_counter(), time.process_time()
    out = negotiate(NOW, slots, subs, acct, policy, timer=time.perf_counter)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"requests_s": t1 - t0, "cycle_s": wall, "cpu_s": cpu, "matches": out.stats.matches,
            "rate": out.stats.matches / wall, "autoclusters": len(table.ids)}


def large(scale: int = 1) -> None:
    """The central-manager row and its tenth, to show the growth."""
    print("central manager: p-slots (8 cores, no consumption policy) x idle jobs, 20 groups with dynamic "
          "quotas; one cycle")
    rows = []
    for div in (10 * scale, scale):
        dims = (100_000 // div, 1_000_000 // div, 10_000 // div, max(1, 1000 // div), 20)
        r = run_large(*dims)
        rows.append(r)
        _line(f"{dims[0]:,} p-slots x {dims[1]:,} jobs, {dims[3]:,} submitters", r)
    print(f"  growth for 10x everything: {rows[1]['cpu_s'] / rows[0]['cpu_s']:.1f}x the CPU time")


def _line(label: str, r: dict[str, float]) -> None:
    print(f"  {label:<58} cycle {r['cycle_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  matches {int(r['matches']):>6}  "
          f"{r['rate']:>7.0f} matches/s  (requests built in {r['requests_s']:.2f} s, "
          f"{int(r['autoclusters'])} autoclusters)")


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    quick = "--quick" in args
    scale = 10 if quick else 1
    if "--large" in args:
        large(scale)
        if "--only-large" in args:
            return
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
