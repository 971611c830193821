"""Real devices through NVML: none on a machine without an NVIDIA GPU, and, where there is one,
discovery agrees with NVML's own view of every device."""

from __future__ import annotations

from typing import Any

import pytest

from htcpool.gpu import discover, read_inventory
from htcpool.runtime.gpu_nvml import read_devices, sample_usage


def _nvml() -> Any:
    """pynvml, initialised, when this machine has at least one NVIDIA device."""
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception as e:  # the binding or the driver is missing
        pytest.skip(f"no NVIDIA GPU here: NVML is unavailable ({e})")
    if pynvml.nvmlDeviceGetCount() == 0:
        pytest.skip("no NVIDIA GPU here: NVML sees no device")
    return pynvml


def test_without_a_gpu_discovery_reports_none() -> None:
    found = read_devices()
    if found.devices:
        pytest.skip("this machine has an NVIDIA GPU; the comparison test covers it")
    assert found.note
    result = discover(["-properties"], {}, read_devices)
    assert (result.stdout, result.exit_code) == ("DetectedGPUs=0\n", 0)
    assert sample_usage(["GPU-a0223334"]) is None


def test_discovery_agrees_with_nvml() -> None:
    nv = _nvml()
    try:
        expected = {}
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            uuid = nv.nvmlDeviceGetUUID(handle)
            uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
            name = nv.nvmlDeviceGetName(handle)
            major, minor = nv.nvmlDeviceGetCudaComputeCapability(handle)
            expected[uuid[:12]] = (name.decode() if isinstance(name, bytes) else name, float(f"{major}.{minor}"),
                                   round(nv.nvmlDeviceGetMemoryInfo(handle).total / 2**20), uuid[4:])
    finally:
        nv.nvmlShutdown()
    result = discover(["-properties", "-extra"], {}, read_devices)
    assert result.exit_code == 0, result.stderr
    reading = read_inventory("GPUs", result.stdout)
    mig = [d for d in reading.ids if d.startswith("MIG-")]
    assert set(reading.ids) - set(mig) <= set(expected), (reading.ids, expected)
    for device_id in set(reading.ids) - set(mig):
        props = reading.properties[device_id]
        got = (props["DeviceName"], props["Capability"], props["GlobalMemoryMb"], props["DeviceUuid"])
        assert got == expected[device_id], device_id
    usage = sample_usage([expected[d][3] for d in reading.ids if d in expected])
    assert usage is not None and usage["GPUsUsage"] >= 0 and usage["GPUsMemoryUsage"] >= 0
