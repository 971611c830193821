"""The job's device variables (admin manual, ENVIRONMENT_FOR_Assigned<name>; HTCondor 25's starter)."""

from __future__ import annotations

from htcpool.classad import parseOne
from htcpool.gpu import apply_environment_knob, assigned_environment

DEFAULT = "GPU_DEVICE_ORDINAL=/(CUDA|OCL)//  CUDA_VISIBLE_DEVICES=/CUDA//"

SLOT = parseOne('''MachineResources = "Cpus Memory Disk Swap GPUs"
GPUs = 2
AssignedGPUs = "GPU-c2223334,GPU-d3223334"
AvailableGPUs = { GPUs_GPU_c2223334, GPUs_GPU_d3223334 }
GPUs_GPU_c2223334 = [ Id = "GPU-c2223334"; DeviceUuid = "c2223334-4445-5667-899a-abbccddeeff0" ]
GPUs_GPU_d3223334 = [ Id = "GPU-d3223334"; DeviceUuid = "d3223334-4445-5667-899a-abbccddeeff0" ]
''')


def test_uuid_devices() -> None:
    env, problems = assigned_environment(SLOT, {"GPUs": DEFAULT}, {"GPUs": "10000"})
    assert problems == []
    assert env["_CONDOR_AssignedGPUs"] == "GPU-c2223334,GPU-d3223334"
    assert env["GPU_DEVICE_ORDINAL"] == "GPU-c2223334,GPU-d3223334"
    full = "GPU-c2223334-4445-5667-899a-abbccddeeff0,GPU-d3223334-4445-5667-899a-abbccddeeff0"
    assert env["CUDA_VISIBLE_DEVICES"] == env["NVIDIA_VISIBLE_DEVICES"] == full


def test_index_devices_and_no_devices() -> None:
    by_index = parseOne('MachineResources = "Cpus GPUs"\nGPUs = 2\nAssignedGPUs = "CUDA0, CUDA1"\n')
    env, _ = assigned_environment(by_index, {"GPUs": DEFAULT}, {})
    assert (env["CUDA_VISIBLE_DEVICES"], env["GPU_DEVICE_ORDINAL"]) == ("0,1", "0,1")
    assert env["NVIDIA_VISIBLE_DEVICES"] == "none"
    none = parseOne('MachineResources = "Cpus GPUs"\nGPUs = 0\n')
    env, _ = assigned_environment(none, {"GPUs": DEFAULT}, {"GPUs": "10000"})
    assert (env["CUDA_VISIBLE_DEVICES"], env["_CONDOR_AssignedGPUs"]) == ("10000", "10000")
    assert assigned_environment(parseOne('MachineResources = "Cpus"\n'), {"GPUs": DEFAULT}, {})[0] == {}


def test_knob_forms() -> None:
    """The manual's example: VISIBLE_GPUS=/^/gpuid:/ with AssignedGPUs = "CUDA1, CUDA2"."""
    assert apply_environment_knob("VISIBLE_GPUS=/^/gpuid:/", "CUDA1, CUDA2")[0] == {
        "VISIBLE_GPUS": "gpuid:CUDA1,gpuid:CUDA2"}
    assert apply_environment_knob("X=/CUDA([0-9])/dev$1/", "CUDA3")[0] == {"X": "dev3"}
    assert apply_environment_knob("CUDA_VISIBLE_DEVICES", "CUDA1, CUDA2")[0] == {"CUDA_VISIBLE_DEVICES": "1,2"}
    env, problems = apply_environment_knob("BAD=/(/x/ GOOD", "CUDA1")
    assert env == {} and "does not compile" in problems[0]
    assert "no closing" in apply_environment_knob("HALF=/CUDA", "CUDA1")[1][0]
