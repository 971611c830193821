"""Job universes on a live pool: local and scheduler jobs run on the access point even where no
slot ever starts a job, hold and remove stop them, a missing executable holds them;
START_LOCAL_UNIVERSE keeps them waiting; a container job waits, explained, where no container
runtime works, and runs in its image where one does."""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from htcpool.config import Config
from htcpool.protocol import QueryAds, QueueQuery
from htcpool.runtime.container_probe import Kind, Runtime, find_runtimes, probe, static_busybox
from tests.e2e.pool import LivePool, script
from tests.e2e.test_tools import ok, run

#: slots that never start anything: whatever runs, the schedd ran it itself
NO_SLOT_STARTS = "START = False\n"
OWNER = getpass.getuser()  # where the schedd runs as root, local jobs run as their owner


def test_local_and_scheduler_jobs_on_an_access_point_whose_slots_start_nothing(make_pool) -> None:
    pool = make_pool(NO_SLOT_STARTS)
    exe = script(pool.jobs_dir, "here.sh", 'echo "ran $1 in $(pwd) scratch=$_CONDOR_SCRATCH_DIR"; exit $2\n')
    local = pool.submit(f"universe = local\nexecutable = {exe}\narguments = local 3\noutput = local.out\n"
                        "log = local.log\nqueue\n", owner=OWNER)
    scheduler = pool.submit(f"universe = scheduler\nexecutable = {exe}\narguments = scheduler 0\n"
                            "output = scheduler.out\nqueue\n", owner=OWNER)
    pool.wait_for(lambda: pool.status(local) == 4 and pool.status(scheduler) == 4, 30,
                  "both jobs completed", show=lambda: (pool.status(local), pool.status(scheduler)))
    out = (pool.jobs_dir / "local.out").read_text()
    assert out.startswith(f"ran local in {pool.jobs_dir} scratch="), out
    done = pool.history(f"ClusterId == {local}")[0]
    assert done["ExitCode"] == 3 and done["JobUniverse"] == 12 and "RemoteHost" not in done
    assert pool.history(f"ClusterId == {scheduler}")[0]["ExitCode"] == 0
    log = (pool.jobs_dir / "local.log").read_text()
    codes = re.findall(r"^(\d{3}) ", log, re.M)
    assert codes[0] == "000" and "001" in codes and codes[-1] == "005", codes
    assert "(1) Normal termination (return value 3)" in log
    assert all(s.get("Activity") != "Busy" for s in pool.slots())
    _hold_release_and_remove(pool)
    _missing_executable(pool)


def _hold_release_and_remove(pool: LivePool) -> None:
    marker = pool.jobs_dir / "started"
    exe = script(pool.jobs_dir, "long.sh", f"echo $$ >> {marker}\nexec sleep 600\n")
    cluster = pool.submit(f"universe = local\nexecutable = {exe}\nlog = long.log\nqueue\n", owner=OWNER)
    pool.wait_for(lambda: pool.status(cluster) == 2 and marker.exists(), 30, "the job running")
    first = int(marker.read_text().split()[0])
    pool.act("hold", f"{cluster}.0", user=OWNER)
    pool.wait_for(lambda: pool.status(cluster) == 5 and not _alive(first), 30, "held, process gone",
                  show=lambda: (pool.status(cluster), _alive(first)))
    pool.act("release", f"{cluster}.0", user=OWNER)
    pool.wait_for(lambda: pool.status(cluster) == 2 and len(marker.read_text().split()) == 2, 30,
                  "running again")
    second = int(marker.read_text().split()[1])
    pool.act("remove", f"{cluster}.0", user=OWNER)
    pool.wait_for(lambda: pool.status(cluster) == 3 and not _alive(second), 30, "removed, process gone",
                  show=lambda: (pool.status(cluster), _alive(second)))
    codes = re.findall(r"^(\d{3}) ", (pool.jobs_dir / "long.log").read_text(), re.M)
    assert codes.count("001") == 2 and "012" in codes and "009" in codes, codes


def _missing_executable(pool: LivePool) -> None:
    exe = script(pool.jobs_dir, "gone.sh", "exit 0\n")
    cluster = pool.submit(f"universe = local\nexecutable = {exe}\nhold = true\nqueue\n", owner=OWNER)
    (pool.jobs_dir / "gone.sh").unlink()
    pool.act("release", f"{cluster}.0", user=OWNER)
    job = pool.wait_for(lambda: pool.status(cluster) == 5 and pool.job(cluster)["NumJobReleases"] == 1
                        and pool.job(cluster), 30, "the hold", show=lambda: pool.job(cluster))
    assert job["HoldReasonCode"] == 6 and job["HoldReasonSubCode"] == 2
    assert "No such file or directory" in job["HoldReason"]


def _working_runtime() -> bool:
    """Whether a container runtime of this machine runs the test container (the startd's probe)."""
    return any(probe(runtime).works for runtime in find_runtimes(Config.from_text("", subsystem="STARTD")))


def test_jobs_that_cannot_start_here_wait_and_say_why(make_pool) -> None:
    if _working_runtime():
        pytest.skip("a container runtime works on this machine: the waiting case does not arise")
    pool = make_pool("START_LOCAL_UNIVERSE = False\n")
    exe = script(pool.jobs_dir, "never.sh", "exit 0\n")
    local = pool.submit(f"universe = local\nexecutable = {exe}\nqueue\n", owner=OWNER)
    boxed = pool.submit(f"universe = container\ncontainer_image = docker://alpine:3\nexecutable = {exe}\n"
                        "queue\n", owner=OWNER)
    slot = pool.wait_for(lambda: pool.slots(), 20, "the slot ad")[0]
    assert "HasContainer" not in slot and slot.get("HasDocker") is not True
    pool.holds_for(lambda: pool.status(local) == 1 and pool.status(boxed) == 1, "both jobs stay idle",
                   seconds=3, cycles=1, show=lambda: (pool.job(local), pool.job(boxed)))
    scheduler = pool.c.send("collector", QueryAds("Scheduler")).ads[0]
    assert scheduler["TotalLocalJobsIdle"] == 1 and scheduler["TotalLocalJobsRunning"] == 0
    ad = pool.job(boxed)
    assert ad["WantContainer"] is True and ad["ContainerImage"] == "docker://alpine:3"
    analysis = ok(pool, "q", "-better-analyze", f"{boxed}.0")
    assert "TARGET.HasContainer" in analysis, analysis
    # a universe htcpool never runs is refused at submit, naming it and those that run; none queued
    (pool.jobs_dir / "mpi.sub").write_text(f"universe = parallel\nexecutable = {exe}\nqueue\n")
    refused = run(pool, "submit", "mpi.sub")
    assert refused.returncode == 1 and "'Parallel' is not a supported universe" in refused.stderr, refused
    assert "vanilla" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    assert len(pool.c.send("schedd", QueueQuery("true")).ads) == 2


def test_a_container_job_runs_in_its_image(make_pool, tmp_path) -> None:
    runtimes = [r for r in find_runtimes(Config.from_text("", subsystem="STARTD")) if probe(r).works]
    if not runtimes:
        reasons = [probe(r).reason for r in find_runtimes(Config.from_text("", subsystem="STARTD"))]
        pytest.skip(f"no container runtime runs a test container here: {reasons or 'none installed'}")
    image = _busybox_image(runtimes[0], tmp_path)
    pool = make_pool()
    exe = script(pool.jobs_dir, "inside.sh", 'echo "pwd=$(pwd) scratch=$_CONDOR_SCRATCH_DIR"\n')
    boxed = pool.submit(f"universe = container\ncontainer_image = {image}\nexecutable = {exe}\n"
                        "output = inside.out\nqueue\n", owner=OWNER)
    pool.wait_for(lambda: pool.status(boxed) == 4, 60, "the container job completed",
                  show=lambda: pool.job(boxed))
    out = (pool.jobs_dir / "inside.out").read_text()
    found = re.search(r"pwd=(\S+) scratch=(\S+)", out)
    want = "/srv" if runtimes[0].kind is Kind.SINGULARITY else None
    assert found is not None and found.group(1) == found.group(2), out
    assert want is None or found.group(1) == want, out


def _busybox_image(runtime: Runtime, where: Path) -> str:
    """A local image whose root file system is the host's static busybox with /bin/sh: a sandbox
    directory for apptainer, an imported image for docker and podman (no registry is needed)."""
    busybox = static_busybox()
    assert busybox is not None  # the probe passed, so it found one
    rootfs = where / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    shutil.copy2(busybox, rootfs / "bin" / "busybox")
    for name in ("sh", "echo", "pwd"):
        (rootfs / "bin" / name).symlink_to("busybox")
    if runtime.kind is Kind.SINGULARITY:
        return str(rootfs)
    tarball = where / "rootfs.tar"
    subprocess.run(["tar", "-C", str(rootfs), "-cf", str(tarball), "."], check=True)
    subprocess.run([runtime.path, "import", str(tarball), "htcpool-test-busybox:latest"], check=True,
                   capture_output=True)
    return "htcpool-test-busybox:latest"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False
