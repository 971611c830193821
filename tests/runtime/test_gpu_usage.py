"""GPUsUsage and GPUsMemoryUsage of a running job, read through a fake NVML binding.

No GPU is needed: a stand-in ``pynvml`` module answers for two devices. The unit tests put it in
``sys.modules``; the starter test writes it as ``pynvml.py`` on the starter's PYTHONPATH, so a real
starter process samples it and its usage events carry the readings to the startd's JobUpdate."""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import JobEvent, JobUpdate
from htcpool.protocol import startd as m
from htcpool.runtime import usage
from htcpool.runtime.confinement import Enforcement
from htcpool.runtime.starter_client import StarterHandle
from htcpool.runtime.starters import RunningStarter, Starters, job_attributes
from htcpool.runtime.usage import GpuUsage, JobUsageSampler, assigned_devices
from htcpool.schedd.shadow import record_usage

FAKE_NVML = '''
class NVMLError(Exception):
    pass

class _Rates:
    def __init__(self, gpu): self.gpu = gpu

class _Memory:
    def __init__(self, used): self.used = used; self.total = 8 << 30

DEVICES = {"GPU-aaaa": (50, 300 << 20), "GPU-bbbb": (100, 700 << 20)}
calls = []

def nvmlInit(): calls.append("init")
def nvmlShutdown(): calls.append("shutdown")

def nvmlDeviceGetHandleByUUID(uuid):
    if uuid not in DEVICES:
        raise NVMLError("no such device")
    return uuid

def nvmlDeviceGetUtilizationRates(handle): return _Rates(DEVICES[handle][0])
def nvmlDeviceGetMemoryInfo(handle): return _Memory(DEVICES[handle][1])
'''


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("pynvml")
    exec(FAKE_NVML, module.__dict__)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    monkeypatch.setattr(GpuUsage, "binding_missing", False)
    return module


def test_the_jobs_devices_come_from_its_environment() -> None:
    assert assigned_devices({"NVIDIA_VISIBLE_DEVICES": "GPU-aaaa,GPU-bbbb", "CUDA_VISIBLE_DEVICES": "0,1"}) == (
        "GPU-aaaa", "GPU-bbbb")
    assert assigned_devices({"CUDA_VISIBLE_DEVICES": "MIG-1234"}) == ("MIG-1234",)
    assert assigned_devices({"NVIDIA_VISIBLE_DEVICES": "none", "CUDA_VISIBLE_DEVICES": "10000"}) == ()
    assert assigned_devices({}) == ()


def test_usage_is_averaged_over_the_jobs_life_and_memory_is_the_peak(fake_nvml: types.ModuleType) -> None:
    gpus = GpuUsage(("GPU-aaaa", "GPU-bbbb"), started=100.0)
    assert gpus.sample(102.0) == {"gpus_usage": 1.5, "gpus_memory_mb": 1000.0}
    fake_nvml.DEVICES.update({"GPU-aaaa": (0, 100 << 20), "GPU-bbbb": (0, 100 << 20)})
    # two busy seconds at 1.5 devices, then two idle ones: 0.75 on average; memory keeps its peak
    assert gpus.sample(104.0) == {"gpus_usage": 0.75, "gpus_memory_mb": 1000.0}
    assert gpus.report() == {"gpus_usage": 0.75, "gpus_memory_mb": 1000.0}


def test_a_sampler_without_devices_never_asks_nvml(fake_nvml: types.ModuleType, tmp_path: Path) -> None:
    reading = JobUsageSampler(str(tmp_path)).sample()
    assert "gpus_usage" not in reading and fake_nvml.calls == []
    with_devices = JobUsageSampler(str(tmp_path), devices=("GPU-bbbb",)).sample()
    assert with_devices["gpus_memory_mb"] == 700.0 and fake_nvml.calls == ["init", "shutdown"]


def test_devices_nvml_cannot_read_are_not_asked_again(fake_nvml: types.ModuleType) -> None:
    gpus = GpuUsage(("GPU-gone",), started=0.0)
    assert gpus.sample(1.0) == {} and fake_nvml.calls == ["init", "shutdown"]
    assert gpus.sample(2.0) == {} and fake_nvml.calls == ["init", "shutdown"]


def test_a_missing_binding_costs_one_failed_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    monkeypatch.setattr(GpuUsage, "binding_missing", False)
    tries: list[str] = []
    monkeypatch.setattr(usage.gpu_nvml, "sample_usage", lambda devices: tries.append("sampled"))
    assert GpuUsage(("GPU-aaaa",), 0.0).sample(1.0) == {}
    assert GpuUsage.binding_missing is True
    monkeypatch.delitem(sys.modules, "pynvml")  # even were it importable now, it is not tried again
    assert GpuUsage(("GPU-aaaa",), 0.0).sample(1.0) == {} and tries == []


def test_the_readings_reach_the_schedds_job_ad_and_the_startds_copy() -> None:
    update = JobUpdate("c1", "slot1_1", JobEvent.USAGE, user_cpu=1.0, gpus_usage=0.75, gpus_memory_mb=1000.4)
    ad = ClassAd()
    record_usage(ad, update)
    assert ad["GPUsUsage"] == 0.75 and ad["GPUsMemoryUsage"] == 1000
    attrs = job_attributes(update, RunningStarter("slot1_1", "c1", "schedd", "/scratch"))
    assert attrs["GPUsUsage"] == 0.75 and attrs["GPUsMemoryUsage"] == 1000
    plain = job_attributes(JobUpdate("c1", "slot1_1", JobEvent.USAGE), RunningStarter("slot1_1", "c1", "s", "/x"))
    assert "GPUsUsage" not in plain and "GPUsMemoryUsage" not in plain


def test_a_real_starter_reports_its_jobs_gpu_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A starter process with the fake binding on its path: its usage updates become JobUpdates
    with GPUsUsage and GPUsMemoryUsage, and the startd core hears them as the job's attributes."""
    binding = tmp_path / "binding"
    binding.mkdir()
    (binding / "pynvml.py").write_text(FAKE_NVML)
    monkeypatch.setenv("PYTHONPATH", str(binding))
    reports: list[JobUpdate] = []
    told: list[Any] = []
    done = asyncio.Event()

    async def exited(slot: str, claim_id: str) -> None:
        done.set()

    async def tell_core(message: Any) -> None:
        told.append(message)

    handles: list[StarterHandle] = []

    async def spawn(spec: Any, on_event: Any, stderr_path: str) -> StarterHandle:
        handles.append(await StarterHandle.spawn(spec, on_event, stderr_path=stderr_path))
        return handles[-1]

    async def scenario() -> None:
        starters = Starters(tmp_path / "execute", tmp_path / "StarterLog", lambda u, s: reports.append(u), exited,
                            enforcement=Enforcement(update_interval=0.2, initial_update_interval=0.2,
                                                    polling_interval=0.2),
                            tell_core=tell_core, spawn=spawn)
        job = ClassAd({"Cmd": "/bin/sleep", "Arguments": "1.5", "Iwd": str(tmp_path), "Owner": "u"})
        starters.start(m.StartJob("slot1_1", "c1", job), "schedd",
                       extra_env={"NVIDIA_VISIBLE_DEVICES": "GPU-aaaa,GPU-bbbb"})
        await asyncio.wait_for(done.wait(), 15)
        await asyncio.wait_for(handles[0].wait(), 5)  # its pipes closed before the loop ends

    asyncio.run(scenario())
    usage_reports = [u for u in reports if u.event is JobEvent.USAGE]
    assert usage_reports and usage_reports[-1].gpus_usage == pytest.approx(1.5, abs=0.2), reports
    assert usage_reports[-1].gpus_memory_mb == 1000.0
    final = [u for u in reports if u.event is JobEvent.EXITED]
    assert final and final[0].gpus_memory_mb == 1000.0, reports
    assert told and told[-1].attributes["GPUsMemoryUsage"] == 1000
