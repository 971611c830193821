"""Job cgroups (``runtime.cgroups``) against fake cgroup trees of both layouts, and, where the
machine allows it, against the real one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from htcpool.runtime.cgroups import (
    MB,
    CgroupSpec,
    CgroupVersion,
    JobCgroup,
    MemoryLimits,
    MemoryPolicy,
    detect,
    memory_limits,
)
from htcpool.runtime.confined import JobConfinement, open_job_cgroup


def v1_tree(root: Path) -> Path:
    for controller in ("memory", "cpu", "cpuacct", "freezer"):
        (root / controller).mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    return root


def v2_tree(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    return root


def spec(root: Path, version: CgroupVersion, **kw: object) -> CgroupSpec:
    return CgroupSpec(str(root), version, "htcondor", "dir_1_slot1_1", **kw)  # type: ignore[arg-type]


def test_memory_limits_follow_the_policy() -> None:
    assert memory_limits(MemoryPolicy.HARD, 1000, 8000) == MemoryLimits(hard_mb=1000, soft_mb=900)
    assert memory_limits(MemoryPolicy.SOFT, 1000, 8000) == MemoryLimits(hard_mb=8000, soft_mb=1000, high_mb=1000)
    assert memory_limits(MemoryPolicy.CUSTOM, 1000, 8000, 1500, 500) == MemoryLimits(hard_mb=1500, low_mb=500)
    assert memory_limits(MemoryPolicy.NONE, 1000, 8000) == MemoryLimits()


def test_detect_finds_each_layout_and_says_why_not(tmp_path: Path) -> None:
    v1 = detect(str(v1_tree(tmp_path / "v1")), "htcondor", euid=0)
    assert v1.version is CgroupVersion.V1 and (tmp_path / "v1" / "memory" / "htcondor").is_dir()
    v2 = detect(str(v2_tree(tmp_path / "v2")), "htcondor", euid=0)
    assert v2.version is CgroupVersion.V2
    assert (tmp_path / "v2" / "cgroup.subtree_control").read_text() == "+memory +cpu"
    assert detect(str(tmp_path / "v1"), "htcondor", euid=1000).reason == "the startd does not run as root"
    none = detect(str(tmp_path / "empty"), "htcondor", euid=0)
    assert none.version is None and "no cgroup v2 memory controller" in none.reason
    assert detect(str(tmp_path / "v1"), "", euid=0).version is None


def test_v1_limits_cpu_shares_and_swap(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    memory = root / "memory" / "htcondor" / "dir_1_slot1_1"
    memory.mkdir(parents=True)
    (memory / "memory.memsw.limit_in_bytes").write_text("0")  # swap accounting present
    cgroup, problems = open_job_cgroup(spec(root, CgroupVersion.V1, limits=MemoryLimits(hard_mb=128, soft_mb=115),
                                            cpu_weight=200))
    assert cgroup is not None and problems == []
    assert (memory / "memory.limit_in_bytes").read_text() == str(128 * MB)
    assert (memory / "memory.memsw.limit_in_bytes").read_text() == str(128 * MB)
    assert (memory / "memory.soft_limit_in_bytes").read_text() == str(115 * MB)
    assert (root / "cpu" / "htcondor" / "dir_1_slot1_1" / "cpu.shares").read_text() == "200"
    assert sorted(cgroup.procs_files()) == sorted(
        str(root / c / "htcondor" / "dir_1_slot1_1" / "cgroup.procs") for c in ("memory", "cpu", "cpuacct", "freezer"))


def test_v2_limits_weight_and_no_swap(tmp_path: Path) -> None:
    root = v2_tree(tmp_path)
    cgroup, _ = open_job_cgroup(spec(root, CgroupVersion.V2, limits=MemoryLimits(hard_mb=8000, high_mb=1000, low_mb=10),
                                     cpu_weight=50))
    assert cgroup is not None
    d = root / "htcondor" / "dir_1_slot1_1"
    assert (d / "memory.max").read_text() == str(8000 * MB)
    assert (d / "memory.high").read_text() == str(1000 * MB)
    assert (d / "memory.low").read_text() == str(10 * MB)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "cpu.weight").read_text() == "50"


def test_usage_leaves_out_the_page_cache_as_configured(tmp_path: Path) -> None:
    root = v2_tree(tmp_path)
    d = root / "htcondor" / "dir_1_slot1_1"
    d.mkdir(parents=True)
    (d / "memory.current").write_text(str(300 * MB))
    (d / "memory.stat").write_text(f"anon {200 * MB}\nfile {100 * MB}\n")
    (d / "cpu.stat").write_text("usage_usec 3500000\nuser_usec 3000000\nsystem_usec 500000\n")
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    (d / "cgroup.procs").write_text("11\n12\n")
    (d / "memory.peak").write_text(str(310 * MB))
    usage = JobCgroup(spec(root, CgroupVersion.V2)).usage()
    assert (usage.memory_bytes, usage.user_cpu, usage.sys_cpu, usage.oom_kills, usage.processes) == \
        (200 * MB, 3.0, 0.5, 1, 2)
    assert JobCgroup(spec(root, CgroupVersion.V2, ignore_cache=False)).usage().memory_bytes == 300 * MB
    assert JobCgroup(spec(root, CgroupVersion.V2)).peak_bytes() == 310 * MB

    v1 = v1_tree(tmp_path / "one")
    m = v1 / "memory" / "htcondor" / "dir_1_slot1_1"
    a = v1 / "cpuacct" / "htcondor" / "dir_1_slot1_1"
    m.mkdir(parents=True)
    a.mkdir(parents=True)
    (m / "memory.usage_in_bytes").write_text(str(60 * MB))
    (m / "memory.stat").write_text(f"cache {1 * MB}\ntotal_cache {10 * MB}\ntotal_rss {50 * MB}\n")
    (m / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    ticks = os.sysconf("SC_CLK_TCK")
    (a / "cpuacct.stat").write_text(f"user {2 * ticks}\nsystem {ticks}\n")
    usage = JobCgroup(spec(v1, CgroupVersion.V1)).usage()
    assert (usage.memory_bytes, usage.user_cpu, usage.sys_cpu, usage.oom_kills) == (50 * MB, 2.0, 1.0, 2)


def test_a_cgroup_that_cannot_be_made_leaves_the_job_unconfined(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    (root / "memory" / "htcondor").write_text("a file where the base should be")
    cgroup, problems = open_job_cgroup(spec(root, CgroupVersion.V1))
    assert cgroup is None and len(problems) == 1
    assert "cannot create the cgroup" in problems[0] and "without kernel enforcement" in problems[0]


def test_a_refused_limit_is_reported_and_the_rest_applies(tmp_path: Path) -> None:
    root = v2_tree(tmp_path)
    d = root / "htcondor" / "dir_1_slot1_1"
    (d / "memory.max").mkdir(parents=True)  # writing it fails, as a kernel refusing the value
    cgroup, problems = open_job_cgroup(spec(root, CgroupVersion.V2, limits=MemoryLimits(hard_mb=64)))
    assert cgroup is not None and len(problems) == 1 and "memory.max" in problems[0]
    assert (d / "cpu.weight").read_text() == "100"


def test_kill_all_kills_every_listed_process(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    cgroup, _ = open_job_cgroup(spec(root, CgroupVersion.V1))
    assert cgroup is not None
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        Path(cgroup.dirs["memory"], "cgroup.procs").write_text(f"{sleeper.pid}\n")
        assert cgroup.kill_all(patience=0.2) is False  # the fake file never empties
        assert sleeper.wait(5) == -signal.SIGKILL
        assert Path(cgroup.dirs["freezer"], "freezer.state").read_text() == "THAWED"
    finally:
        if sleeper.poll() is None:
            sleeper.kill()

    v2 = v2_tree(tmp_path / "two")
    cgroup2, _ = open_job_cgroup(spec(v2, CgroupVersion.V2))
    assert cgroup2 is not None
    d = Path(cgroup2.dirs["unified"])
    (d / "cgroup.kill").write_text("0")
    (d / "cgroup.procs").write_text("999999\n")
    cgroup2.kill_all(patience=0)
    assert (d / "cgroup.kill").read_text() == "1"


REAL = detect()


@pytest.mark.skipif(REAL.version is None, reason=f"no usable cgroups here: {REAL.reason}")
def test_on_the_real_cgroups_a_process_is_confined_measured_killed_and_removed() -> None:
    real = CgroupSpec("/sys/fs/cgroup", REAL.version, "htcondor",  # type: ignore[arg-type]
                      f"htcpool_test_{os.getpid()}", MemoryLimits(hard_mb=64))
    cgroup, problems = open_job_cgroup(real)
    assert cgroup is not None and problems == []
    try:
        child = subprocess.Popen([sys.executable, "-c", "import time; x = [0] * (2 << 20); time.sleep(60)"],
                                 preexec_fn=lambda: cgroup.join(os.getpid()))
        deadline = time.monotonic() + 10
        while cgroup.usage().memory_bytes < 10 * MB and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cgroup.pids() == [child.pid] and cgroup.usage().memory_bytes >= 10 * MB
        assert cgroup.kill_all() is True
        assert child.wait(5) == -signal.SIGKILL
    finally:
        cgroup.kill_all()
        cgroup.remove()
    assert not any(os.path.exists(d) for d in cgroup.dirs.values())


def test_confinement_reports_an_oom_kill_once_with_the_limit_and_peak(tmp_path: Path) -> None:
    confinement = JobConfinement(spec(v1_tree(tmp_path), CgroupVersion.V1, limits=MemoryLimits(hard_mb=128)))
    assert confinement.report(1000) is None
    assert not confinement.oom_killed(1, killing=True)  # the starter was killing the job itself
    assert confinement.oom_killed(1, killing=False) and not confinement.oom_killed(2, killing=False)
    assert confinement.report(200 * 1024) == {"limit_mb": 128, "usage_mb": 200}
    assert JobConfinement(None).oom_killed(5, killing=False) is False


def test_confinement_drops_a_cgroup_the_job_did_not_enter(tmp_path: Path) -> None:
    confinement = JobConfinement(spec(v1_tree(tmp_path), CgroupVersion.V1))
    sleeper = subprocess.Popen(["sleep", "30"])  # running, and not listed in the fake cgroup
    try:
        confinement.check_entered(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert confinement.cgroup is None
    assert confinement.problems == ["the job could not be moved into its cgroup; it runs without kernel enforcement"]
