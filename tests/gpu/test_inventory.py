"""Reading an inventory command's output (admin manual, MACHINE_RESOURCE_INVENTORY_<name>)."""

from __future__ import annotations

import pytest

from htcpool.gpu import InventoryError, discover, discovery_arguments, read_inventory


def simulated(*args: str) -> str:
    return discover(list(args), {}, lambda _: pytest.fail("reader called")).stdout


def test_discovery_output_becomes_ids_and_property_ads() -> None:
    reading = read_inventory("GPUs", simulated("-simulate:1,1,4,1", "-properties"))
    assert reading.ids == ("GPU-a0223334", "GPU-b1223334") and reading.total == 2
    a, b = reading.properties["GPU-a0223334"], reading.properties["GPU-b1223334"]
    assert (a["Capability"], a["DeviceName"], a["ECCEnabled"]) == (2.0, "GeForce GTX 480", False)
    assert (b["Capability"], b["GlobalMemoryMb"]) == (8.0, 47661)
    assert "id" not in a and reading.attrs["DetectedGPUs"] == "GPU-a0223334, GPU-b1223334"


def test_common_properties_reach_every_device() -> None:
    reading = read_inventory("GPUs", simulated("-simulate:1,2", "-properties"))
    assert all(p["DeviceName"] == "GeForce GTX 480" for p in reading.properties.values())
    assert reading.properties["GPU-b1223334"]["DevicePciBusId"] == "0000:41:00.0"


def test_offline_ids_and_counts() -> None:
    reading = read_inventory("GPUs", 'DetectedGPUs="CUDA0, CUDA1, CUDA2"\nOfflineGPUs="CUDA1"\n')
    assert (reading.ids, reading.offline) == (("CUDA0", "CUDA2"), ("CUDA1",))
    configured = read_inventory("GPUs", 'DetectedGPUs="CUDA0, CUDA1"\n', offline=("CUDA0",))
    assert configured.ids == ("CUDA1",)
    assert read_inventory("GPUs", "DetectedGPUs=0\n").total == 0
    assert read_inventory("Bandwidth", "DetectedBandwidth=100\n").count == 100


@pytest.mark.parametrize(("text", "problem"), [
    ("", "has no DetectedGPUs"),
    ("something = \n", "is not a ClassAd"),
    ("DetectedGPUs = true\n", "neither a quantity nor a list"),
])
def test_bad_output(text: str, problem: str) -> None:
    with pytest.raises(InventoryError, match=problem):
        read_inventory("GPUs", text)


def test_discovery_commands_are_recognised() -> None:
    assert discovery_arguments("/usr/libexec/condor/condor_gpu_discovery -properties -extra") == [
        "-properties", "-extra"]
    assert discovery_arguments("htcpool gpu_discovery -simulate:1,2") == ["-simulate:1,2"]
    assert discovery_arguments("/opt/site/list_fpgas --json") is None
