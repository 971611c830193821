"""Benchmark: read a generated 2,000-line configuration with 200 metaknob uses, expand every name.

htcpool's reader runs in this process; HTCondor's (``htcondor2``) runs in a child process
and times only its own read and lookups (``reload_config()`` plus ``param[name]`` for every
name), so interpreter start-up and imports are not counted on either side. Each side takes
the best of several rounds. Prints both times and the ratio (goal: at most 2x).

Run with ``.venv/bin/python -m benchmarks.bench_config`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 10
METAKNOBS = [
    "POLICY : Desktop", "POLICY : Always_Run_Jobs", "FEATURE : PartitionableSlot({n})",
    "FEATURE : StaticSlots({n}, 2)", "POLICY : Limit_Job_Runtimes({n}00)", "ROLE : Execute",
    "POLICY : Preempt_If_Runtime_Exceeds({n}000)", "POLICY : UWCS_Desktop",
    "POLICY : Hold_If_Memory_Exceeded", "FEATURE : GPUs",
]

_CHILD = r"""
import json, sys, time
import htcondor2
names = json.loads(sys.stdin.read())
best = None
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    htcondor2.reload_config()
    for name in names:
        try:
            htcondor2.param[name]
        except Exception:
            pass
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
print(best)
"""


def generate(lines: int = 2000, uses: int = 200, seed: int = 7) -> tuple[str, list[str]]:
    """A configuration text of ``lines`` lines, ``uses`` of them ``use`` statements."""
    rng = random.Random(seed)
    out: list[str] = []
    names: list[str] = []
    use_every = lines // uses
    used = 0
    while len(out) < lines:
        if used < uses and len(out) >= used * use_every:
            template = rng.choice(METAKNOBS).format(n=rng.randint(1, 9))
            out.append(f"use {template}")
            used += 1
            continue
        name = f"KNOB_{len(names)}"
        kind = rng.randint(0, 9)
        if kind < 4 or not names:
            value = f"{rng.randint(0, 1000)} * $(MINUTE)"
        elif kind < 7:
            value = f"$({rng.choice(names)}) + $({rng.choice(names)}:1)"
        elif kind < 8:
            value = f"($(START)) && (Memory > {rng.randint(1, 64)})"
            name = "START"
        elif kind < 9:
            value = f"ifThenElse($({rng.choice(names)}), 1, 2)"
        else:
            out.append(f"if defined {rng.choice(names)}")
            out.append(f"{name} = yes")
            out.append("endif")
            names.append(name)
            continue
        out.append(f"{name} = {value}")
        if name != "START":
            names.append(name)
    return "\n".join(out[:lines]) + "\n", sorted(set(names) | {"START", "PREEMPT", "SUSPEND",
                                                                "WANT_SUSPEND", "DAEMON_LIST"})


def time_htcpool(text: str, names: list[str]) -> float:
    from htcpool.config import Config, fake_machine

    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        config = Config.from_text(text, facts=fake_machine())
        for name in names:
            config.get_str(name)
        best = min(best, time.perf_counter() - start)
    return best


def time_reference(text: str, names: list[str]) -> float | None:
    try:
        import importlib.util

        if importlib.util.find_spec("htcondor2") is None:
            return None
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "condor_config"
        path.write_text(text)
        env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
        env["CONDOR_CONFIG"] = str(path)
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(ROUNDS)], input=json.dumps(names), env=env,
            capture_output=True, text=True, check=True, cwd=tmp,
        )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    text, names = generate()
    mine = time_htcpool(text, names)
    print(f"configuration: {text.count(chr(10))} lines, {text.count('use ')} metaknob uses, "
          f"{len(names)} names expanded")
    print(f"htcpool   : {mine * 1000:8.1f} ms (best of {ROUNDS})")
    theirs = time_reference(text, names)
    if theirs is None:
        print("reference : htcondor2 not installed, no ratio")
        return
    print(f"HTCondor  : {theirs * 1000:8.1f} ms (best of {ROUNDS}, htcondor2 {ROUNDS} reloads)")
    print(f"ratio     : {mine / theirs:8.2f}x  (goal <= 2x)")


if __name__ == "__main__":
    main()
