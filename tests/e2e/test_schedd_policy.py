"""The access point's policy on a live pool, through ``htcpool submit`` as a user types it: the
seed's SL6ToDocker transform from condor_config, the system periodic hold, release and remove
with their codes and user-log events, MAX_JOBS_PER_SUBMISSION and MAX_JOBS_RUNNING, and a
broken transform reported in the schedd's log while the schedd runs on.

The configuration and the submit files are those of ``examples/transforms``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_tools import tool_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "transforms"
BROKEN = """
JOB_TRANSFORM_NAMES = $(JOB_TRANSFORM_NAMES) Broken
JOB_TRANSFORM_Broken @=end
   FROBNICATE everything
@end
"""


def submit(pool, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcpool", "submit", name], capture_output=True, text=True,
                          timeout=60, cwd=pool.jobs_dir, env=tool_env(pool.layout.root))


def cluster_of(done: subprocess.CompletedProcess[str]) -> int:
    assert done.returncode == 0, done.stderr
    found = re.search(r"submitted to cluster (\d+)", done.stdout)
    assert found, done.stdout
    return int(found.group(1))


def events(log: Path) -> list[str]:
    return re.findall(r"^(\d{3}) \(", log.read_text(), re.M) if log.exists() else []


def test_transforms_periodic_policy_and_limits_on_a_live_pool(make_pool) -> None:
    pool = make_pool((EXAMPLE / "condor_config").read_text() + BROKEN)
    for sub in EXAMPLE.glob("*.sub"):
        shutil.copy(sub, pool.jobs_dir / sub.name)

    # the transform, with $(MY.Requirements) expanded against the job by the schedd
    sl6 = cluster_of(submit(pool, "sl6.sub"))
    ad = pool.job(sl6)
    assert ad is not None and (ad["DockerImage"], ad["WantDocker"]) == ("SL6", True)
    assert str(ad.lookup("Requirements")).startswith("TARGET.HasDocker && (TARGET.Arch == ")
    assert "JOB_TRANSFORM_Broken, line 1: unknown statement" in pool.log_text("schedd")

    # a whole submission past MAX_JOBS_PER_SUBMISSION is refused, naming the limit
    before = len(pool.jobs())
    many = submit(pool, "many.sub")
    assert many.returncode == 1 and "MAX_JOBS_PER_SUBMISSION" in many.stderr, many.stderr
    assert len(pool.jobs()) == before

    # system hold (26, subcode 42, the knob's reason), release once, hold again, remove
    big = cluster_of(submit(pool, "big.sub"))
    log = pool.jobs_dir / "big.log"
    pool.wait_for(lambda: "009" in events(log), 30, "the held job removed by SYSTEM_PERIODIC_REMOVE",
                  show=lambda: events(log))
    seen = events(log)  # the job may run (001) between the policy's events: it is stopped by the hold
    assert seen[0] == "000" and [e for e in seen if e != "001"] == ["000", "012", "013", "012", "009"], seen
    text = log.read_text()
    assert "\tJobs may request at most 4096 MB; this one asked for 8192\n\tCode 26 Subcode 42" in text
    assert "held twice for asking too much memory" in text
    (gone,) = pool.history(f"ClusterId == {big}")
    assert gone["RemoveReason"] == "held twice for asking too much memory"

    # MAX_JOBS_RUNNING = 1: the two sleepers run one after the other
    sleepers = cluster_of(submit(pool, "sleepers.sub"))
    running = f"ClusterId == {sleepers} && JobStatus == 2"
    pool.wait_for(lambda: pool.jobs(running), 30, "the first sleeper running")
    pool.holds_for(lambda: len(pool.jobs(running)) <= 1 and len(pool.history(f"ClusterId == {sleepers}")) < 2,
                   "at most one job running", seconds=2.5, show=lambda: pool.jobs(running))
    pool.wait_for(lambda: len(pool.history(f"ClusterId == {sleepers}")) == 2, 40, "both sleepers done")
    starts = [line for line in (pool.jobs_dir / "sleepers.log").read_text().splitlines() if line.startswith("001 ")]
    ends = [line for line in (pool.jobs_dir / "sleepers.log").read_text().splitlines() if line.startswith("005 ")]
    assert len(starts) == 2 and len(ends) == 2
    first_end = ends[0].split()[2:4]  # date and time of the event
    second_start = starts[1].split()[2:4]
    assert second_start >= first_end  # the second started once the first had ended
