"""GPUs in the startd core: inventory from discovery, slot layouts with device constraints, the
slot ads HTCondor 25 publishes, and dynamic slots that get only devices satisfying RequireGPUs
(admin manual, "Configuring GPUs"; discovery through -simulate, so any machine runs these)."""

from __future__ import annotations

from htcpool.classad import EvalContext, ExprTree
from htcpool.classad.match import requirements_hold
from htcpool.config import Config, fake_machine
from htcpool.gpu import Enumeration, discover, read_inventory
from htcpool.protocol.startd import PolicyProblem, RequestClaim
from htcpool.startd import Startd, settings_from_config
from htcpool.startd.layout import with_inventory
from tests.startd.helpers import job

#: two GeForce GTX 480 (capability 2.0) and two A100 (8.0)
MIXED = "-simulate:1,2,4,2"
PSLOT = "RunBenchmarks = false\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\n"
STATIC = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"


def gpu_startd(text: str, simulate: str = MIXED, cpus: int = 4, ok: bool = True) -> Startd:
    """A startd configured with ``use feature : GPUs``, its discovery run as the driver runs it."""
    config = Config.from_text(f"use feature : GPUs\nGPU_DISCOVERY_EXTRA = {simulate}\n" + text, subsystem="STARTD",
                              facts=fake_machine(logical_cpus=cpus, physical_cpus=cpus, memory_mib=4096))
    settings = settings_from_config(config)
    assert list(settings.resource_inventory) == ["GPUs"]
    readings = []
    result = discover(settings.resource_inventory["GPUs"].split()[1:], {}, lambda _: Enumeration())
    if ok:
        readings.append(read_inventory("GPUs", result.stdout))
    settings, inventory = with_inventory(settings, readings)
    return Startd(settings, 0.0, inventory=inventory)


def test_feature_gpus_runs_discovery_with_the_extra_options() -> None:
    settings = settings_from_config(Config.from_text("use feature : GPUs\nGPU_DISCOVERY_EXTRA = -simulate:1,2\n",
                                                     subsystem="STARTD"))
    command = settings.resource_inventory["GPUs"]
    assert command.split()[0].endswith("/condor_gpu_discovery") and command.split()[1:] == [
        "-properties", "-simulate:1,2"]


def test_slot_ads_carry_htcondor_25_gpu_attributes() -> None:
    s = gpu_startd(PSLOT)
    ad = s.slot("slot1").ad
    assert (ad["GPUs"], ad["TotalGPUs"], ad["TotalSlotGPUs"]) == (4, 4, 4)
    assert ad["DetectedGPUs"] == "GPU-a0223334, GPU-b1223334, GPU-c2223334, GPU-d3223334"
    assert ad["AssignedGPUs"] == "GPU-a0223334,GPU-b1223334,GPU-c2223334,GPU-d3223334"
    dev = ad["GPUs_GPU_c2223334"]
    assert (dev["Id"], dev["Capability"], dev["DeviceName"], dev["GlobalMemoryMb"]) == (
        "GPU-c2223334", 8.0, "A100-SXM4-40GB", 47661)
    assert ExprTree("size(AvailableGPUs)").evaluate(ad) == 4
    assert "GPUs_Capability" not in ad  # mixed devices: no common capability


def test_require_gpus_matches_and_carves_only_capable_devices() -> None:
    s = gpu_startd(PSLOT)
    p = s.slot("slot1")
    request = job(RequestGPUs=1, RequireGPUs=ExprTree("Capability >= 8.0"),
                  Requirements=ExprTree("countMatches(MY.RequireGPUs, TARGET.AvailableGPUs) >= RequestGPUs"))
    assert requirements_hold(request, p.ad, EvalContext())
    for n in (1, 2):
        s.handle(RequestClaim(p.claim.id, request), n)
    got = [s.slot(f"slot1_{n}").ad for n in (1, 2)]
    assert [d["AssignedGPUs"] for d in got] == ["GPU-c2223334", "GPU-d3223334"]
    assert got[0]["GPUs_Capability"] == 8.0 and got[0]["GPUs_DeviceName"] == "A100-SXM4-40GB"
    assert p.ad["AssignedGPUs"] == "GPU-a0223334,GPU-b1223334"
    assert not requirements_hold(request, p.ad, EvalContext())  # only GTX 480s are left


def test_incapable_devices_never_match() -> None:
    s = gpu_startd(PSLOT, simulate="-simulate:1,2")
    request = job(RequestGPUs=1, RequireGPUs=ExprTree("Capability >= 8.0"),
                  Requirements=ExprTree("countMatches(MY.RequireGPUs, TARGET.AvailableGPUs) >= RequestGPUs"))
    assert not requirements_hold(request, s.slot("slot1").ad, EvalContext())


def test_layout_constraint_binds_matching_devices() -> None:
    """The manual's layout: a partitionable slot with the 2 powerful GPUs, a static slot with one GPU
    named by id, and the rest split over two static slots."""
    text = ("RunBenchmarks = false\nSLOT_TYPE_1 @=slot\n   GPUs = 2 : Capability >= 8.0\n   50%\n@slot\n"
            "SLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n"
            'SLOT_TYPE_2 @=slot\n   GPUs = 1 : "GPU-b1223334"\n   CPUs = 1\n   Memory = 10\n@slot\n'
            "SLOT_TYPE_2_PARTITIONABLE = FALSE\nNUM_SLOTS_TYPE_2 = 1\n"
            "SLOT_TYPE_3 = auto\nSLOT_TYPE_3_PARTITIONABLE = FALSE\nNUM_SLOTS_TYPE_3 = 1\n")
    s = gpu_startd(text)
    assert s.slot("slot1").ad["AssignedGPUs"] == "GPU-c2223334,GPU-d3223334"
    assert s.slot("slot2").ad["AssignedGPUs"] == "GPU-b1223334"
    assert s.slot("slot3").ad["AssignedGPUs"] == "GPU-a0223334"


def test_single_line_constraint() -> None:
    s = gpu_startd("RunBenchmarks = false\nSLOT_TYPE_1 = GPUs = 2 : Capability >= 8.0\n"
                   "SLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n")
    assert s.slot("slot1").ad["AssignedGPUs"] == "GPU-c2223334,GPU-d3223334"


def test_bad_constraints_leave_the_machine_without_gpus() -> None:
    """Bad input: an unparsable constraint, or one too few devices meet, is a StartdLog message."""
    for constraint, problem in (("Capability >=", "does not parse"), ("Capability >= 9.0", "only 0 of 2 GPUs")):
        s = gpu_startd(f"RunBenchmarks = false\nSLOT_TYPE_1 = GPUs = 2 : {constraint}\n"
                       "SLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n")
        ad = s.slot("slot1").ad
        assert "GPUs" not in ad and "AssignedGPUs" not in ad and ad["Cpus"] == 4
        said = [a for a in s.initial_actions if isinstance(a, PolicyProblem)]
        assert len(said) == 1 and problem in said[0].problem and said[0].knob == "SLOT_TYPE_1"


def test_failed_discovery_leaves_the_machine_without_gpus() -> None:
    s = gpu_startd("RunBenchmarks = false\nSLOT_TYPE_1 = GPUs = 2 : Capability >= 8.0\n"
                   "SLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n", ok=False)
    assert "GPUs" not in s.slot("slot1").ad and s.slot("slot1").ad["Cpus"] == 4


def test_static_slots_share_devices_with_common_properties() -> None:
    s = gpu_startd(STATIC + "NUM_SLOTS = 2\n", simulate="-simulate:1,2,4,2")
    one, two = s.slot("slot1").ad, s.slot("slot2").ad
    assert one["AssignedGPUs"] == "GPU-a0223334,GPU-b1223334" and one["GPUs_Capability"] == 2.0
    assert two["AssignedGPUs"] == "GPU-c2223334,GPU-d3223334" and two["GPUs_ECCEnabled"] is True
