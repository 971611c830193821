"""ClassAd benchmark: htcpool against HTCondor's own library (``classad2``), same machine, same run.

Measures parse throughput (cold and with the parse cache), evaluation of typical
job Requirements and Rank against machine ads, and symmetricMatch of one job
against 10,000 machine ads. Prints times per operation and the ratio
htcpool / reference (below 1 means htcpool is faster).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

JOB = """[
    MyType = "Job"; Owner = "alice"; ClusterId = 12; ProcId = 3;
    RequestCpus = 2; RequestMemory = 2048; RequestDisk = 100000; ImageSize = 50000;
    Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") &&
        (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) &&
        (TARGET.Cpus >= RequestCpus) && (TARGET.HasFileTransfer);
    Rank = TARGET.Mips + TARGET.Memory / 1024
]"""


def machine_text(i: int, rng: random.Random) -> str:
    return f"""[
    MyType = "Machine"; Name = "slot1@node{i}.example.org"; Arch = "X86_64";
    OpSys = "{rng.choice(["LINUX", "LINUX", "LINUX", "WINDOWS"])}";
    Cpus = {rng.choice([1, 2, 4, 8])}; Memory = {rng.choice([1024, 2048, 4096, 8192])};
    Disk = {rng.randrange(50000, 5000000)}; Mips = {rng.randrange(10000, 30000)};
    HasFileTransfer = true; KeyboardIdle = {rng.randrange(0, 10000)}; LoadAvg = {rng.random():.3f};
    State = "Unclaimed"; Activity = "Idle";
    Requirements = START; START = KeyboardIdle > 15 * 60 && LoadAvg < 0.3 && TARGET.Owner != "mallory";
    Rank = TARGET.Owner == "alice"
]"""


def _time(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _row(name: str, ours: float, ref: float, n: int) -> None:
    print(f"{name:<44} {ours / n * 1e6:>10.2f} µs {ref / n * 1e6:>10.2f} µs {ours / ref:>8.2f}")


def main() -> None:
    import classad2
    import htcondor2  # noqa: F401 - HTCondor's default (old-ClassAd) semantics, as the daemons run

    from htcpool.classad import ClassAd, ExprTree, parseAds
    from htcpool.classad.parser import parse_expression

    rng = random.Random(42)
    machines_text = [machine_text(i, rng) for i in range(10_000)]
    expr_texts = [
        f'(TARGET.Memory >= {i}) && (TARGET.OpSys == "LINUX") && (KeyboardIdle > {i % 900} * 60)'
        for i in range(2000)
    ]
    print(f"{'benchmark':<44} {'htcpool':>13} {'reference':>13} {'ratio':>8}")

    parse_expression.cache_clear()
    ours = _time(lambda: [ExprTree(t) for t in expr_texts], repeat=1)
    ref = _time(lambda: [classad2.ExprTree(t) for t in expr_texts], repeat=1)
    _row("parse expression (cold)", ours, ref, len(expr_texts))
    ours_cached = _time(lambda: [ExprTree(t) for t in expr_texts])
    _row("parse expression (cached)", ours_cached, ref, len(expr_texts))

    sample = machines_text[:2000]
    ours = _time(lambda: [ClassAd(t) for t in sample], repeat=1)
    ref = _time(lambda: [classad2.ClassAd(t) for t in sample], repeat=1)
    _row("parse machine ad (14 attributes)", ours, ref, len(sample))
    # the same ads in the old form, ``Name = expr`` lines as ``condor_status -l`` prints them
    old_text = "\n\n".join(classad2.ClassAd(t).printOld() for t in sample)
    ours = _time(lambda: list(parseAds(old_text)), repeat=1)
    ref = _time(lambda: list(classad2.parseAds(old_text)), repeat=1)
    _row("parseAds machine ads, old form", ours, ref, len(sample))

    our_job, ref_job = ClassAd(JOB), classad2.ClassAd(JOB)
    our_machines = [ClassAd(t) for t in machines_text]
    ref_machines = [classad2.ClassAd(t) for t in machines_text]
    our_req, ref_req = our_job.lookup("Requirements"), ref_job.lookup("Requirements")
    our_rank, ref_rank = our_job.lookup("Rank"), ref_job.lookup("Rank")
    n = 2000

    ours = _time(lambda: [our_req.eval(our_job, m) for m in our_machines[:n]])
    ref = _time(lambda: [ref_req.eval(ref_job, m) for m in ref_machines[:n]])
    _row("eval job Requirements vs machine", ours, ref, n)
    ours = _time(lambda: [our_rank.eval(our_job, m) for m in our_machines[:n]])
    ref = _time(lambda: [ref_rank.eval(ref_job, m) for m in ref_machines[:n]])
    _row("eval job Rank vs machine", ours, ref, n)
    start = ExprTree("KeyboardIdle > 15 * 60 && LoadAvg < 0.3")
    ref_start = classad2.ExprTree("KeyboardIdle > 15 * 60 && LoadAvg < 0.3")
    ours = _time(lambda: [start.eval(m) for m in our_machines[:n]])
    ref = _time(lambda: [ref_start.eval(m) for m in ref_machines[:n]])
    _row("eval machine START (one ad)", ours, ref, n)

    ours = _time(lambda: [our_job.symmetricMatch(m) for m in our_machines], repeat=1)
    ref = _time(lambda: [ref_job.symmetricMatch(m) for m in ref_machines], repeat=1)
    _row("symmetricMatch 1 job x 10,000 machines", ours, ref, len(our_machines))
    got = sum(our_job.symmetricMatch(m) for m in our_machines)
    want = sum(ref_job.symmetricMatch(m) for m in ref_machines)
    print(f"  matches: htcpool {got}, reference {want}")


if __name__ == "__main__":
    main()
