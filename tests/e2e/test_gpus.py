"""GPUs end to end with simulated devices (examples/gpu): ``use feature : GPUs`` discovers two
GeForce GTX 480 (capability 2.0) and two A100 (8.0); jobs with ``require_gpus = Capability >= 8.0``
run only on the A100s and see them in CUDA_VISIBLE_DEVICES, _CONDOR_AssignedGPUs and
GPU_DEVICE_ORDINAL; on a pool of GTX 480s alone they stay idle while a job without the
requirement runs there (docs/startd.md, "GPUs")."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tests.e2e.pool import LivePool

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu" / "condor_config.local"
UUID_TAIL = "-4445-5667-899a-abbccddeeff0"

JOBS = """
executable = /bin/sh
arguments = "-c 'echo CUDA=$CUDA_VISIBLE_DEVICES; echo ASSIGNED=$_CONDOR_AssignedGPUs; echo ORDINAL=$GPU_DEVICE_ORDINAL; sleep 2'"
output = {name}.$(Process).out
request_cpus = 1
request_memory = 64
request_gpus = 1
{require}
queue {count}
"""


def _seen(pool: LivePool, name: str, proc: int) -> dict[str, str]:
    text = (pool.jobs_dir / f"{name}.{proc}.out").read_text()
    return dict(re.findall(r"^(\w+)=(.*)$", text, re.M))


def test_require_gpus_gets_only_capable_devices(make_pool: Callable[[str], LivePool]) -> None:
    pool = make_pool(EXAMPLE.read_text())
    slot = pool.wait_for(lambda: next(iter(pool.slots("TotalGPUs == 4")), None), 30, "a slot with 4 GPUs",
                         show=lambda: [(a.get("Name"), a.get("GPUs")) for a in pool.slots()])
    assert slot["DetectedGPUs"] == "GPU-a0223334, GPU-b1223334, GPU-c2223334, GPU-d3223334"
    cluster = pool.submit(JOBS.format(name="capable", require="require_gpus = Capability >= 8.0", count=3))
    pool.wait_for(lambda: all(pool.status(cluster, p) == 4 for p in range(3)), 60, "the three jobs to complete",
                  show=lambda: [pool.status(cluster, p) for p in range(3)])
    capable = {"GPU-c2223334", "GPU-d3223334"}
    for proc in range(3):
        seen = _seen(pool, "capable", proc)
        assert seen["ASSIGNED"] in capable, seen
        assert seen["CUDA"] == seen["ASSIGNED"] + UUID_TAIL, seen  # HTCondor 25 gives CUDA the full uuid
        assert seen["ORDINAL"] == seen["ASSIGNED"], seen


def test_incapable_pool_leaves_the_jobs_idle(make_pool: Callable[[str], LivePool]) -> None:
    pool = make_pool(EXAMPLE.read_text().replace("-simulate:1,2,4,2", "-simulate:1,2"))
    pool.wait_for(lambda: pool.slots("TotalGPUs == 2"), 30, "a slot with 2 GPUs",
                  show=lambda: [(a.get("Name"), a.get("GPUs")) for a in pool.slots()])
    picky = pool.submit(JOBS.format(name="picky", require="require_gpus = Capability >= 8.0", count=1))
    plain = pool.submit(JOBS.format(name="plain", require="", count=1))
    pool.wait_for(lambda: pool.status(plain) == 4, 60, "the job without require_gpus to complete",
                  show=lambda: (pool.status(plain), pool.status(picky)))
    assert _seen(pool, "plain", 0)["ASSIGNED"] in {"GPU-a0223334", "GPU-b1223334"}
    pool.holds_for(lambda: pool.status(picky) == 1, "the job that wants capability 8.0 stays idle", cycles=2,
                   show=lambda: pool.status(picky))
