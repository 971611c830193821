"""``htcpool demo``: a job ad, three machine ads, which machines match and how they rank.

A short tour of the ClassAd language until the live pool takes its place.
"""

from __future__ import annotations

from htcpool.classad import ClassAd, EvalContext, fixed_clock
from htcpool.classad.match import rank, requirements_hold

JOB = """
    MyType = "Job"
    Owner = "alice"
    RequestCpus = 4
    RequestMemory = 8192
    Requirements = TARGET.OpSys == "LINUX" && TARGET.Cpus >= RequestCpus && TARGET.Memory >= RequestMemory
    Rank = TARGET.Memory / 1024 + TARGET.Mips / 1000
"""

MACHINES = {
    "slot1@big.example.org": """
        MyType = "Machine"
        Name = "slot1@big.example.org"
        OpSys = "LINUX"
        Cpus = 16
        Memory = 65536
        Mips = 22000
        KeyboardIdle = 3600
        Requirements = TARGET.Owner != "mallory"
        Rank = TARGET.Owner == "alice"
    """,
    "slot1@small.example.org": """
        MyType = "Machine"
        Name = "slot1@small.example.org"
        OpSys = "LINUX"
        Cpus = 2
        Memory = 4096
        Mips = 18000
        KeyboardIdle = 30
        Requirements = KeyboardIdle > 15 * 60
        Rank = 0
    """,
    "slot1@desk.example.org": """
        MyType = "Machine"
        Name = "slot1@desk.example.org"
        OpSys = "LINUX"
        Cpus = 8
        Memory = 16384
        Mips = 25000
        KeyboardIdle = 7200
        Requirements = KeyboardIdle > 15 * 60 && TARGET.RequestMemory <= 8192
        Rank = TARGET.RequestCpus
    """,
}


def main(argv: list[str]) -> int:
    ctx = EvalContext(clock=fixed_clock(1_800_000_000))
    job = ClassAd(JOB)
    print("Job ad:")
    print(job.printOld())
    results = []
    for name, text in MACHINES.items():
        machine = ClassAd(text)
        job_ok = requirements_hold(job, machine, ctx)
        machine_ok = requirements_hold(machine, job, ctx)
        results.append((name, job_ok and machine_ok, rank(job, machine, ctx), rank(machine, job, ctx), job_ok, machine_ok))
    print(f"{'Machine':<26} {'Match':<6} {'Job rank':>9} {'Machine rank':>13}")
    for name, ok, jr, mr, _job_ok, _machine_ok in results:
        print(f"{name:<26} {'yes' if ok else 'no':<6} {jr:>9.2f} {mr:>13.2f}")
    matched = sorted((r for r in results if r[1]), key=lambda r: r[2], reverse=True)
    print()
    if matched:
        print("Preferred by the job (highest rank first): " + ", ".join(r[0] for r in matched))
    for name, ok, _, _, job_ok, _machine_ok in results:
        if not ok:
            side = "the job's Requirements" if not job_ok else "the machine's Requirements"
            print(f"{name} does not match: {side} are not satisfied")
    return 0
