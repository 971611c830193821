#!/usr/bin/env python3
"""Write day.swf, the example trace of docs/simulator.md: one day of four users' jobs.

The trace is made from a fixed seed, so running this again gives the same file. Users and
their SWF ids (the simulator names them u<id>, and their accounting group group_g<id>):

- user 1 (group 1): a steady stream of single-core jobs (10 to 30 minutes) all day;
- user 2 (group 1): three bursts of 24 jobs of 4 cores, 20 to 35 minutes each;
- user 3 (group 2): a morning batch of 150 single-core jobs of about half an hour, submitted
  within ten minutes of user 2's second burst;
- user 4 (group 2): an afternoon batch of 60 jobs of 2 cores, 15 to 35 minutes each, submitted
  while user 2's last burst runs.

    python3 examples/sim/make_trace.py            # writes examples/sim/day.swf
"""

from __future__ import annotations

import random
from pathlib import Path

DAY = 86400
HEADER = """; htcpool example trace: one day, four users in two groups (examples/sim/make_trace.py)
; Version: 2.2
; UnixStartTime: 1767254400
; MaxProcs: 80
; Note: made by a seeded generator, not taken from a real system
"""


def jobs(rng: random.Random) -> list[tuple[int, int, int, int, int]]:
    """(submit time, run time, cpus, user, group) of every job."""
    found: list[tuple[int, int, int, int, int]] = []
    t = 0.0
    while t < DAY - 3600:  # user 1: every ~4 minutes, 10-30 minutes of one core
        found.append((int(t), rng.randint(600, 1800), 1, 1, 1))
        t += rng.expovariate(1 / 240)
    for start in (2 * 3600, 9 * 3600, 15 * 3600):  # user 2: three bursts of 4-core jobs
        for _ in range(24):
            found.append((start + rng.randint(0, 300), rng.randint(1200, 2100), 4, 2, 1))
    for _ in range(150):  # user 3: the morning batch, as user 2's second burst arrives
        found.append((9 * 3600 + rng.randint(0, 600), rng.randint(1500, 2100), 1, 3, 2))
    for _ in range(60):  # user 4: the afternoon batch
        found.append((int(14.5 * 3600) + rng.randint(0, 1800), rng.randint(900, 2100), 2, 4, 2))
    return sorted(found)


def line(number: int, submit: int, run: int, cpus: int, user: int, group: int) -> str:
    memory_kb = 2048 * 1024  # 2 GiB per processor
    fields = (number, submit, -1, run, cpus, -1, -1, cpus, run * 2, memory_kb, 1, user, group, 1, 1, 1, -1, -1)
    return " ".join(str(f) for f in fields)


def main() -> None:
    rng = random.Random(18)
    body = [line(i, *job) for i, job in enumerate(jobs(rng), start=1)]
    path = Path(__file__).with_name("day.swf")
    path.write_text(HEADER + "\n".join(body) + "\n")
    print(f"{path.name}: {len(body)} jobs")


if __name__ == "__main__":
    main()
