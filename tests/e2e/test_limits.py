"""Resource limits on a live pool: the kernel's cgroup limit under the default configuration,
HTCondor's usage policy templates holding or preempting jobs, and the job's processes killed
with it (the HTCondor manual's "Policy Configuration for Execution Points": "Cgroup Based
Process Tracking", "Limiting Resource Usage Using Cgroups" and the POLICY templates).

The starter reports usage every second here (STARTER_UPDATE_INTERVAL and its initial interval
shortened) so the templates fire within seconds. The cgroup test is skipped, with the reason,
on a machine where the startd could not use cgroups (not root, no writable memory controller).
"""

from __future__ import annotations

import os
import re
import sys

import pytest

from htcpool.runtime.cgroups import detect
from tests.e2e.pool import process_state, script

QUICK_USAGE = """
STARTER_UPDATE_INTERVAL = 1
STARTER_INITIAL_UPDATE_INTERVAL = 1
CGROUP_POLLING_INTERVAL = 1
NUM_CPUS = 6
"""
# 300 MB of memory written (a list of 40 million references), on a slot of 128 MB (50 quantized)
HOG = f"""executable = {sys.executable}
arguments = "-c 'import time; x = [0] * (40 << 20); time.sleep(60)'"
request_memory = 50
queue
"""

CGROUPS = detect()
needs_cgroups = pytest.mark.skipif(CGROUPS.version is None,
                                   reason=f"no kernel enforcement here: {CGROUPS.reason}")


def _held(pool, cluster: int) -> dict | None:
    ad = pool.job(cluster)
    return dict(ad) if ad is not None and ad.get("JobStatus") == 5 else None


@needs_cgroups
def test_default_configuration_holds_a_memory_hog_completes_a_job_within_its_request_and_kills_a_detached_child(
        make_pool) -> None:
    pool = make_pool(QUICK_USAGE)
    hog = pool.submit(HOG)
    good = pool.submit(f"executable = {sys.executable}\n"
                       "arguments = \"-c 'import time; x = [0] * (3 << 20); time.sleep(3)'\"\n"
                       "request_memory = 100\nqueue\n")
    family = script(pool.jobs_dir, "family.sh",
                    "setsid sh -c 'echo $$ > \"$0/escaped.pid\"; exec sleep 300' \"$1\" &\nsleep 300\n")
    detached = pool.submit(f"executable = {family}\narguments = {pool.jobs_dir}\nqueue\n")

    held = pool.wait_for(lambda: _held(pool, hog), 40, "the memory hog held")
    assert held["HoldReasonCode"] == 34, held
    assert held["HoldReason"].startswith("Error from slot1_")
    assert "Job has gone over cgroup memory limit of 128 megabytes." in held["HoldReason"]
    assert "Consider resubmitting with a higher request_memory." in held["HoldReason"]
    assert held["NumJobStarts"] == 1  # never requeued to fail again

    pool.wait_for(lambda: pool.status(good) == 4, 40, "the job within its request completed")
    done = pool.history(f"ClusterId == {good}")[0]
    assert done["ExitCode"] == 0 and done["ResidentSetSize"] > 15 * 1024, dict(done)
    assert done["RemoteUserCpu"] + done["RemoteSysCpu"] > 0

    escaped = pool.jobs_dir / "escaped.pid"
    pool.wait_for(lambda: pool.status(detached) == 2 and escaped.exists() and escaped.read_text().strip(),
                  30, "the detached child running")
    child = int(escaped.read_text())
    assert process_state(child) is not None
    pool.act("remove", str(detached))
    pool.wait_for(lambda: process_state(child) in (None, "Z"), 20, "the detached child killed with its job",
                  show=lambda: process_state(child))
    assert "no kernel enforcement" not in pool.log_text("startd")
    pool.wait_for(lambda: not _cgroups_of(pool), 20, "every job's cgroup removed", show=lambda: _cgroups_of(pool))


def _cgroups_of(pool) -> list[str]:
    """The job cgroups still present for this pool (named after its scratch directories)."""
    base = os.path.join("/sys/fs/cgroup", "memory" if CGROUPS.version.value == "v1" else "", "htcondor")
    mark = re.sub(r"[^A-Za-z0-9_.-]", "_", str(pool.layout.root).strip("/"))
    return [name for name in os.listdir(base) if mark in name]


HOLDS = QUICK_USAGE + """
CGROUP_MEMORY_LIMIT_POLICY = none
use POLICY : HOLD_IF_MEMORY_EXCEEDED
use POLICY : HOLD_IF_DISK_EXCEEDED
use POLICY : HOLD_IF_RUNTIME_EXCEEDS(6)
CPU_HUNGRY = (RemoteUserCpu =!= UNDEFINED && RemoteUserCpu > 0.5)
use POLICY : WANT_HOLD_IF(CPU_HUNGRY, 42, this job used more CPU than the site allows)
"""


def _disk_job(pool) -> int:
    """30 MB written in the scratch directory, on a slot of 1 MB of disk."""
    writer = script(pool.jobs_dir, "writer.sh", "dd if=/dev/zero of=big bs=1M count=30 2>/dev/null\nsleep 60\n")
    return pool.submit(f"executable = {writer}\nrequest_disk = 1024\nqueue\n")


def _cpu_job(pool) -> int:
    return pool.submit(f"executable = {sys.executable}\narguments = \"-c 'while True: pass'\"\n"
                       "+Burner = true\nqueue\n")


def test_usage_templates_hold_jobs_with_their_reasons(make_pool) -> None:
    pool = make_pool(HOLDS)
    memory = pool.submit(HOG)
    disk = _disk_job(pool)
    cpu = _cpu_job(pool)
    runtime = pool.submit("executable = /bin/sleep\narguments = 60\nqueue\n")
    expected = {memory: (102, "memory usage exceeded request_memory"),
                disk: (104, "disk usage exceeded allocated disk"),
                cpu: (42, "this job used more CPU than the site allows"),
                runtime: (103, "runtime exceeded maximum (6 seconds)")}
    for cluster, (subcode, reason) in expected.items():
        held = pool.wait_for(lambda c=cluster: _held(pool, c), 45, f"job {cluster} held ({reason})")
        assert (held["HoldReasonCode"], held["HoldReasonSubCode"], held["HoldReason"]) == (21, subcode, reason)
    assert pool.job(memory)["ResidentSetSize"] > 128 * 1024  # MemoryUsage is this in MB
    assert pool.job(disk)["DiskUsage"] > 30 * 1024


PREEMPTS = QUICK_USAGE + """
CGROUP_MEMORY_LIMIT_POLICY = none
use POLICY : PREEMPT_IF_MEMORY_EXCEEDED
use POLICY : PREEMPT_IF_DISK_EXCEEDED
use POLICY : PREEMPT_IF_RUNTIME_EXCEEDS(5)
"""


def test_usage_templates_preempt_jobs_which_run_again(make_pool) -> None:
    pool = make_pool(PREEMPTS)
    jobs = [pool.submit(HOG), _disk_job(pool), pool.submit("executable = /bin/sleep\narguments = 60\nqueue\n")]
    def evicted(cluster: int) -> bool:
        """Back in the queue after a run (Idle), or already running again."""
        ad = pool.job(cluster)
        starts = ad.get("NumJobStarts", 0) if ad is not None else 0
        return starts >= 2 or (starts >= 1 and ad is not None and ad["JobStatus"] == 1)

    for cluster in jobs:
        pool.wait_for(lambda c=cluster: evicted(c), 45, f"job {cluster} preempted, back in the queue")
        ad = pool.job(cluster)
        assert ad is not None and ad["JobStatus"] in (1, 2) and "HoldReasonCode" not in ad, dict(ad or {})
    for cluster in jobs:
        pool.act("remove", str(cluster))


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 4, reason="a job must get more than 1.8 cores on average: "
                    "this needs at least 4 cores (the core's own test, tests/startd/test_job_usage.py, "
                    "covers the template everywhere)")
def test_cpus_templates_hold_a_job_using_more_cores_than_its_slot(make_pool) -> None:
    """CpusUsage is the slot's share of the machine's load, a one-minute average: on an idle
    machine the job using four cores is held after about a minute."""
    pool = make_pool(QUICK_USAGE + "use POLICY : HOLD_IF_CPUS_EXCEEDED\n")
    spin = script(pool.jobs_dir, "spin.sh", "for i in 1 2 3 4; do (while :; do :; done) & done\nwait\n")
    burner = pool.submit(f"executable = {spin}\nqueue\n")
    held = pool.wait_for(lambda: _held(pool, burner), 150, "the job using four cores held")
    assert (held["HoldReasonCode"], held["HoldReasonSubCode"]) == (21, 101)
    assert held["HoldReason"] == "CPU usage exceeded request_cpus"
