"""The startd's confinement settings (``runtime.confinement``), the usage sampler
(``runtime.usage``) and what the startd makes of the starter's readings and OOM exits
(``runtime.starters``)."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.protocol import JobEvent, JobUpdate
from htcpool.runtime.cgroups import CgroupVersion, Detected, MemoryLimits, MemoryPolicy
from htcpool.runtime.confinement import (
    STARTER_UPDATE_INTERVAL,
    Enforcement,
    cgroup_spec,
    enforcement_from_config,
)
from htcpool.runtime.starters import RunningStarter, Starters, job_attributes, out_of_memory
from htcpool.runtime.usage import JobUsageSampler, UpdateSchedule, directory_size_kb


def found(version: CgroupVersion | None, reason: str = ""):  # a detector that finds ``version``
    seen: list[tuple[str, str]] = []

    def detector(root: str, base: str) -> Detected:
        seen.append((root, base))
        return Detected(version, reason)

    detector.seen = seen  # type: ignore[attr-defined]
    return detector


def test_defaults_are_htcondors() -> None:
    enf = enforcement_from_config(Config.from_text("", subsystem="STARTD"), detector=found(CgroupVersion.V1))
    assert (enf.version, enf.base, enf.policy, enf.disable_swap, enf.ignore_cache) == \
        (CgroupVersion.V1, "htcondor", MemoryPolicy.HARD, True, True)
    assert (enf.polling_interval, enf.update_interval, enf.initial_update_interval) == \
        (5.0, STARTER_UPDATE_INTERVAL, 8.0)
    assert "cgroup v1" in enf.describe() and enf.problems == ()


def test_knobs_are_read_and_a_bad_policy_is_named() -> None:
    text = ("BASE_CGROUP = /pool/jobs\nCGROUP_MEMORY_LIMIT_POLICY = strict\nDISABLE_SWAP_FOR_JOB = false\n"
            "CGROUP_IGNORE_CACHE_MEMORY = false\nCGROUP_POLLING_INTERVAL = 2\nSTARTER_UPDATE_INTERVAL = 30\n"
            "STARTER_INITIAL_UPDATE_INTERVAL = 60\n")
    detector = found(None, "the startd does not run as root")
    enf = enforcement_from_config(Config.from_text(text, subsystem="STARTD"), detector=detector)
    assert detector.seen == [("/sys/fs/cgroup", "pool/jobs")]  # type: ignore[attr-defined]
    assert enf.policy is MemoryPolicy.HARD and len(enf.problems) == 1
    assert "CGROUP_MEMORY_LIMIT_POLICY = strict" in enf.problems[0]
    assert (enf.disable_swap, enf.ignore_cache, enf.polling_interval) == (False, False, 2.0)
    assert (enf.update_interval, enf.initial_update_interval) == (30.0, 30.0)
    assert enf.describe().startswith("no kernel enforcement of job limits: the startd does not run as root")
    off = enforcement_from_config(Config.from_text("BASE_CGROUP =\n", subsystem="STARTD"), detector=detector)
    assert off.version is None and "BASE_CGROUP is empty" in off.reason


SLOT = ClassAd({"Memory": 128, "TotalMemory": 4096, "Cpus": 2})


def test_a_jobs_cgroup_comes_from_its_slot() -> None:
    enf = Enforcement(version=CgroupVersion.V2, base="htcondor")
    spec, problems = cgroup_spec(enf, ClassAd({}), SLOT, "/var/lib/pool/execute/dir_17_3", "slot1_2@host", 0)
    assert spec is not None and problems == []
    assert spec.limits == MemoryLimits(hard_mb=128, soft_mb=115)
    assert spec.cpu_weight == 200 and spec.version is CgroupVersion.V2
    assert spec.name == "var_lib_pool_execute_dir_17_3_slot1_2_host"
    assert cgroup_spec(Enforcement(), ClassAd({}), SLOT, "/x", "slot1", 0) == (None, [])


def test_custom_limits_are_expressions_and_bad_ones_are_named() -> None:
    enf = Enforcement(version=CgroupVersion.V1, policy=MemoryPolicy.CUSTOM,
                      hard_expr="MY.Memory * 2 + TARGET.Extra", low_expr="Memory / 0 > 1 ? 1 : \"x\"")
    spec, problems = cgroup_spec(enf, ClassAd({"Extra": 6}), SLOT, "/e/dir_1", "slot1", 0)
    assert spec is not None and spec.limits == MemoryLimits(hard_mb=262)
    assert len(problems) == 1 and problems[0].startswith("CGROUP_LOW_MEMORY_LIMIT_EXPR = ")


def test_update_schedule_first_after_the_initial_interval_then_every_interval() -> None:
    class Spec:
        usage_interval, update_interval, initial_update_interval = 5.0, 300.0, 8.0

    schedule = UpdateSchedule(Spec(), start=0.0)
    assert schedule.step == 5.0
    assert [t for t in (5.0, 10.0, 15.0, 305.0, 310.0) if schedule.due(t)] == [10.0, 310.0]


def test_directory_size_counts_nested_files(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 3000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"x" * 2000)
    assert directory_size_kb(str(tmp_path)) == 5
    assert directory_size_kb(str(tmp_path / "gone")) == 0


def test_sampler_without_a_cgroup_walks_the_process_tree(tmp_path: Path) -> None:
    sampler = JobUsageSampler(str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", "x = [0] * (2 << 20)\nwhile True: pass"])
    try:
        deadline = time.monotonic() + 10
        reading = sampler.sample()
        while (reading["rss_kb"] < 15 * 1024 or reading["user_cpu"] < 0.2) and time.monotonic() < deadline:
            time.sleep(0.1)
            reading = sampler.sample(with_disk=True)
        assert reading["rss_kb"] >= 15 * 1024 and reading["rss_peak_kb"] >= reading["rss_kb"]
        assert reading["image_size_kb"] >= reading["rss_kb"] and reading["cpus_usage"] > 0
        assert reading["disk_usage_kb"] == 0 and reading["oom_kills"] == 0
    finally:
        child.kill()
        child.wait()
    # gone: no error, and its memory is no longer counted (the test process may have other children,
    # left by the tests before this one in the same worker, whose memory stays)
    assert sampler.sample()["rss_kb"] <= reading["rss_kb"] - 15 * 1024 and sampler.rss_peak_kb >= 15 * 1024


def test_out_of_memory_exit_is_a_hold_with_htcondors_message() -> None:
    fields = out_of_memory("slot1_1@host", {"limit_mb": 128, "usage_mb": 129})
    assert fields == {"hold_code": 34, "hold_subcode": 0, "message": (
        "Error from slot1_1@host: Job has gone over cgroup memory limit of 128 megabytes. "
        "Last measured usage: 129 megabytes.  Consider resubmitting with a higher request_memory.")}
    assert out_of_memory("slot1", {"limit_mb": -1})["message"] == \
        "Error from slot1: Job has encountered an out-of-memory event."


def test_usage_update_as_job_attributes() -> None:
    starter = RunningStarter("slot1", "c1", "schedd", "/x", started_at=1000.5, suspended=True)
    attrs = job_attributes(JobUpdate("c1", "slot1", JobEvent.USAGE, user_cpu=2.0, sys_cpu=0.5, rss_kb=3000,
                                     image_size_kb=9000, disk_usage_kb=40, cpus_usage=1.5), starter)
    memory = attrs.pop("MemoryUsage")
    assert ClassAd({"ResidentSetSize": 3000, "MemoryUsage": memory}).evaluate("MemoryUsage") == 3
    assert attrs == {"JobState": "Suspended", "RemoteUserCpu": 2.0, "RemoteSysCpu": 0.5, "CpusUsage": 1.5,
                     "DiskUsage": 40, "JobCurrentStartDate": 1000, "ResidentSetSize": 3000, "ImageSize": 9000}


def test_the_startd_says_once_why_there_is_no_kernel_enforcement(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    enf = enforcement_from_config(Config.from_text("CGROUP_MEMORY_LIMIT_POLICY = loose\n", subsystem="STARTD"),
                                  detector=found(None, "the startd does not run as root"))

    async def exited(slot: str, claim_id: str) -> None:
        return None

    with caplog.at_level(logging.INFO, logger="htcpool.startd"):
        Starters(tmp_path, tmp_path / "StarterLog", lambda update, schedd: None, exited, enforcement=enf)
    lines = [r.getMessage() for r in caplog.records]
    assert sum("no kernel enforcement of job limits: the startd does not run as root" in line for line in lines) == 1
    assert sum("CGROUP_MEMORY_LIMIT_POLICY = loose" in line for line in lines) == 1
