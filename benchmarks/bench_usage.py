"""Measuring running jobs: what reading 100 jobs' usage costs, as a share of one core.

    python -m benchmarks usage      (or: python -m benchmarks.bench_usage)

Each job's starter reads its job every ``CGROUP_POLLING_INTERVAL`` (5 s); every
``STARTER_UPDATE_INTERVAL`` the reading also goes to the startd core (``JobUsage``). The
starters are separate processes, so the cost of 100 jobs is 100 times one starter's cost.

* **starter, process tree** (no cgroups): a stand-in starter process with a two-process job
  reads it with ``JobUsageSampler`` (psutil walks the process table, so the table is filled
  with 200 more processes, as 100 starters and their jobs would); CPU seconds per reading.
* **starter, cgroup** (where the machine allows it): the same job in its own cgroup.
* **scratch walk**: ``DiskUsage`` of a scratch directory of 200 files (once per update).
* **startd core**: ``JobUsage`` handled for one job (a copy of its ad and the attributes).

Share of one core = 100 × CPU seconds per reading / 5 s (the polling interval), plus the
startd's share at one update per job every 5 s (``htcpool up``'s STARTER_UPDATE_INTERVAL; HTCondor's
default, 300 s, costs 60 times less).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from htcpool.classad import ClassAd, ExprTree
from htcpool.config import Config, fake_machine
from htcpool.runtime.cgroups import detect
from htcpool.runtime.usage import directory_size_kb
from htcpool.startd import ActivateClaim, JobUsage, RequestClaim, Startd, settings_from_config

JOBS = 100
POLLING = 5.0
READINGS = 200

STARTER = r"""
import json, os, subprocess, sys, time
from htcpool.runtime.cgroups import CgroupSpec, CgroupVersion
from htcpool.runtime.confined import open_job_cgroup
from htcpool.runtime.usage import JobUsageSampler
version = sys.argv[1]
cgroup = None
if version != "none":
    cgroup, problems = open_job_cgroup(CgroupSpec("/sys/fs/cgroup", CgroupVersion(version), "htcondor",
                                                  f"bench_usage_{os.getpid()}"))
job = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60"],
                       preexec_fn=(lambda: cgroup.join(os.getpid())) if cgroup else None)
time.sleep(0.3)
sampler = JobUsageSampler("/nonexistent", cgroup)
start = time.process_time()
for _ in range(int(sys.argv[2])):
    sampler.sample()
used = time.process_time() - start
job.kill(); job.wait()
if cgroup:
    cgroup.kill_all(); cgroup.remove()
print(json.dumps({"per_reading": used / int(sys.argv[2])}))
"""


def starter_cost(version: str) -> float:
    out = subprocess.run([sys.executable, "-c", STARTER, version, str(READINGS)], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return float(json.loads(out.stdout.strip().splitlines()[-1])["per_reading"])


def walk_cost() -> float:
    with tempfile.TemporaryDirectory() as d:
        for i in range(200):
            with open(os.path.join(d, f"f{i}"), "wb") as f:
                f.write(b"x" * 1000)
        start = time.process_time()
        for _ in range(50):
            directory_size_kb(d)
        return (time.process_time() - start) / 50


def core_cost() -> float:
    config = Config.from_text("RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n", subsystem="STARTD",
                              facts=fake_machine(logical_cpus=JOBS, physical_cpus=JOBS, memory_mib=JOBS * 1024))
    startd = Startd(settings_from_config(config), 0.0)
    claims = []
    for i, slot in enumerate(startd.slots):
        job = ClassAd({"Owner": f"u{i}", "User": f"u{i}@x", "RequestCpus": 1, "RequestMemory": 128,
                       "RequestDisk": 1024, "JobUniverse": 5, "ImageSize": 1000, "ClusterId": i, "ProcId": 0})
        cid = slot.claim.id
        startd.handle(RequestClaim(cid, job), 1.0)
        startd.handle(ActivateClaim(cid, job), 1.0)
        claims.append((slot.name, cid))
    memory = ExprTree("((ResidentSetSize + 1023) / 1024)")
    start = time.process_time()
    for round_ in range(5):
        for name, cid in claims:
            startd.handle(JobUsage(name, cid, {"ResidentSetSize": 1000 + round_, "MemoryUsage": memory,
                                               "DiskUsage": 10, "CpusUsage": 0.5, "RemoteUserCpu": 1.0,
                                               "RemoteSysCpu": 0.1, "ImageSize": 5000, "JobState": "Running"}), 2.0)
    return (time.process_time() - start) / (5 * len(claims))


def main() -> None:
    crowd = [subprocess.Popen(["sleep", "120"]) for _ in range(2 * JOBS)]  # 100 starters and their jobs
    try:
        rows = [("starter, process tree", starter_cost("none"))]
        found = detect()
        if found.version is not None:
            rows.append((f"starter, cgroup {found.version.value}", starter_cost(found.version.value)))
        else:
            print(f"(no cgroup run: {found.reason})")
    finally:
        for p in crowd:
            p.kill()
            p.wait()
    walk, core = walk_cost(), core_cost()
    print(f"{'what':28} {'µs per reading':>15} {'% of one core, 100 jobs':>24}")
    for what, per in rows:
        share = 100 * JOBS * per / POLLING
        print(f"{what:28} {per * 1e6:15.0f} {share:24.2f}")
    print(f"{'scratch walk (200 files)':28} {walk * 1e6:15.0f} {100 * JOBS * walk / POLLING:24.2f}")
    print(f"{'startd core, JobUsage':28} {core * 1e6:15.0f} {100 * JOBS * core / POLLING:24.2f}")


if __name__ == "__main__":
    main()
