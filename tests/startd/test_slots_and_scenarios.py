"""Slot layouts, partitionable slots and the example policies of the HTCondor manual's
"Policy Configuration for Execution Points" run as scenarios, with those of the HTCondor HOWTO
"How to allow some jobs to claim the whole machine instead of one slot" (the whole-machine
HOWTO)."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.match import requirements_hold
from htcpool.startd import (
    Inventory,
    LayoutError,
    PolicyProblem,
    ReleaseClaim,
    RequestClaim,
    SlotTypeSettings,
    SoftKill,
    StartdSettings,
    build_layout,
    parse_slot_type,
)
from htcpool.startd.layout import satisfies
from tests.startd.helpers import finish, job, make_startd, numbers, pair, run_job, tick

STATIC = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"
AT_START = EvalContext(clock=fixed_clock(0.0))  # the layout is built when the startd starts


@pytest.mark.parametrize("text", ["cpus=2, ram=128, swap=25%, disk=1/2", "cpus=1/2, memory=128, virt=25%, disk=50%",
                                  "c=1/2, m=50%, v=1/4, disk=1/2"])
def test_slot_type_syntaxes_are_equivalent(text: str) -> None:
    """Dividing System Resources: types 1-3 of the 4-core, 256 MB example are equal."""
    s = StartdSettings(num_cpus=4, memory=256, swap=4000, slot_types={1: SlotTypeSettings(1, text, 1)})
    spec = build_layout(s, 4096, Inventory(), AT_START)[0].resources
    assert (spec.cpus, spec.memory, spec.swap, spec.disk) == (2, 128, 1000, 2048)


def test_bare_share_and_auto() -> None:
    """Dividing System Resources: a bare 25% / 1/4 is a default share; auto divides the rest."""
    s = StartdSettings(num_cpus=4, memory=256, slot_types={1: SlotTypeSettings(1, "25%", 1),
                                                           2: SlotTypeSettings(2, "cpus=1, 1/4", 1),
                                                           3: SlotTypeSettings(3, "", 2)})
    specs = build_layout(s, 4096, Inventory(), AT_START)
    assert [x.resources.memory for x in specs] == [64, 64, 64, 64]
    assert [x.resources.cpus for x in specs] == [1, 1, 1, 1]


def test_impossible_layout_is_refused() -> None:
    """Dividing System Resources: an impossible configuration fails with a message."""
    s = StartdSettings(num_cpus=2, memory=256, slot_types={1: SlotTypeSettings(1, "mem=200", 2)})
    with pytest.raises(LayoutError, match="SLOT_TYPE_1: not enough memory"):
        build_layout(s, 4096, Inventory(), AT_START)
    with pytest.raises(LayoutError, match="bare value"):
        parse_slot_type("4", [])
    with pytest.raises(LayoutError, match="less than one cpu"):
        build_layout(StartdSettings(num_cpus=2, num_slots=3, slot_type_0_partitionable=False), 4096, Inventory(),
                     AT_START)


def test_custom_resources_and_gpu_constraints() -> None:
    """Configuring GPUs: ``GPUs = 2 : Capability >= 8.0`` and ``GPUs = 1 : "GPU-…"`` (@= form)."""
    inv = Inventory(ids={"GPUs": ("GPU-a", "GPU-b", "GPU-c", "GPU-6a96bd13")},
                    properties={"GPU-a": ClassAd({"Capability": 7.0}), "GPU-b": ClassAd({"Capability": 8.6}),
                                "GPU-c": ClassAd({"Capability": 8.0}),
                                "GPU-6a96bd13": ClassAd({"Capability": 6.0})})
    s = StartdSettings(num_cpus=40, memory=8192, slot_types={
        1: SlotTypeSettings(1, "\n   GPUs = 2 : Capability >= 8.0\n   90%\n", 1, partitionable=True),
        2: SlotTypeSettings(2, 'GPUs = 1 : "GPU-6a96bd13"\nCPUs = 1\nMemory = 10', 1),
        3: SlotTypeSettings(3, "auto", 2)})
    specs = build_layout(s, 10**6, inv, AT_START)
    assert specs[0].resources.ids["GPUs"] == ["GPU-b", "GPU-c"]
    assert specs[1].resources.ids["GPUs"] == ["GPU-6a96bd13"]
    assert specs[2].resources.ids["GPUs"] == ["GPU-a"] and specs[3].resources.ids["GPUs"] == []


def test_device_constraints_that_read_the_time() -> None:
    """A slot type's device constraint and a job's ``Require<Res>`` may read the time: the layout's
    at the startd's start, the job's when its slot is carved."""
    inv = Inventory(ids={"GPUs": ("GPU-a", "GPU-b")},
                    properties={"GPU-a": ClassAd({"Capability": 7.0}), "GPU-b": ClassAd({"Capability": 8.6})})
    s = StartdSettings(num_cpus=4, memory=4096, slot_types={
        1: SlotTypeSettings(1, "GPUs = 1 : Capability > 8 && time() >= 0\nCPUs = 1\nMemory = 10", 1)})
    assert build_layout(s, 10**6, inv, AT_START)[0].resources.ids["GPUs"] == ["GPU-b"]
    request = ClassAd({"RequestGPUs": 1})
    request["RequireGPUs"] = ExprTree("Capability < 8 && CurrentTime == 100")
    at_100 = EvalContext(clock=fixed_clock(100.0))
    chosen = [d for d in ("GPU-a", "GPU-b") if satisfies(repr(request.lookup("RequireGPUs")), d,
                                                         inv.properties[d], at_100, request)]
    assert chosen == ["GPU-a"]
    assert not satisfies("Capability < 8 && CurrentTime == 100", "GPU-a", inv.properties["GPU-a"],
                         EvalContext(clock=fixed_clock(101.0)), request)


def test_machine_resource_cogs_from_config() -> None:
    """MACHINE_RESOURCE_<name>: Total, Detected, TotalSlot and the slot's own count."""
    s = make_startd(STATIC + "MACHINE_RESOURCE_Cogs = 16\nMACHINE_RESOURCE_actuator = 8\n"
                    "SLOT_TYPE_1 = cogs=50%,actuator=6,50%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n"
                    "SLOT_TYPE_2 = cogs=25%,actuator=1,25%\nNUM_SLOTS_TYPE_2 = 2\n", cpus=4, memory=4096)
    ads = [x.ad for x in s.slots]
    assert [a["Cogs"] for a in ads] == [8, 4, 4] and [a["actuator"] for a in ads] == [6, 1, 1]
    assert ads[0]["TotalCogs"] == 16 and ads[0]["TotalSlotCogs"] == 8 and ads[0]["PartitionableSlot"] is True


def test_partitionable_slot1_example() -> None:
    """Dynamic Provisioning: Slot1 with 10 cpus, 10240 MB; JobA (3 cpus, 1024 MB) -> Slot1_1, 7 cpus left."""
    s = make_startd("RunBenchmarks = false\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                    "SLOT_TYPE_1_PARTITIONABLE = TRUE\n", cpus=10, memory=10240)
    p = s.slot("slot1")
    actions = s.handle(RequestClaim(p.claim.id, job(RequestCpus=3, RequestMemory=1024, RequestDisk=10240)), 5)
    d = s.slot("slot1_1")
    assert d.name == "slot1_1@test.example.org" and d.ad["DynamicSlot"] is True and d.ad["SlotType"] == "Dynamic"
    assert (d.ad["Cpus"], d.ad["Memory"], d.ad["Disk"]) == (3, 1024, 10240)
    assert (p.ad["Cpus"], p.ad["Memory"], p.ad["TotalSlotCpus"]) == (7, 9216, 10)
    assert pair(s, "slot1_1") == ("Claimed", "Idle") and any(getattr(a, "leftovers", None) for a in actions)
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=2, RequestMemory=1000, RequestDisk=1)), 6)
    assert s.slot("slot1_2").ad["Memory"] == 1024  # quantize(RequestMemory, {128})
    s.handle(RequestClaim(s.slot("slot1_1").claim.id, job()), 7)
    s.slot("slot1_1")
    from htcpool.startd import ReleaseClaim
    s.handle(ReleaseClaim(s.slot("slot1_1").claim.id), 8)
    assert [x.id_str for x in s.slots] == ["slot1", "slot1_2"] and p.ad["Cpus"] == 8


def test_consumption_policy_example() -> None:
    """Consumption Policies: SLOT_TYPE_1_CONSUMPTION_CPUS = TARGET.RequestCpus on an 8-core pslot."""
    s = make_startd("RunBenchmarks = false\nSLOT_TYPE_1 = cpus=8\nSLOT_TYPE_1_PARTITIONABLE = True\n"
                    "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1_CONSUMPTION_POLICY = True\n"
                    "SLOT_TYPE_1_CONSUMPTION_CPUS = TARGET.RequestCpus\nSLOT_WEIGHT = Cpus\n", cpus=8)
    p = s.slot("slot1")
    assert "ConsumptionCpus" in p.ad
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=3, RequestMemory=100)), 1)
    assert s.slot("slot1_1").ad["Cpus"] == 3 and s.slot("slot1_1").ad["Memory"] == 128
    assert p.ad["Cpus"] == 5 and p.ad.eval("SlotWeight") == 5


def test_startd_attrs_per_slot() -> None:
    """Configuring STARTD_ATTRS on a per-slot basis: SLOT2_favorite_color wins for slot2."""
    s = make_startd(STATIC + 'favorite_color = "blue"\nfavorite_season = "spring"\n'
                    "STARTD_ATTRS = favorite_color, favorite_season\nSLOT2_favorite_color = \"green\"\n"
                    'SLOT3_favorite_season = "summer"\nSLOT1_STARTD_ATTRS = favorite_movie\n'
                    'favorite_movie = "Vertigo"\n', cpus=3)
    got = [(x.ad.get("favorite_color"), x.ad.get("favorite_season"), x.ad.get("favorite_movie")) for x in s.slots]
    assert got == [("blue", "spring", "Vertigo"), ("green", "spring", None), ("blue", "summer", None)]


def test_malformed_policy_is_safe_and_reported() -> None:
    """Malformed START: the slot stays Owner (START false, IsOwner true) and a PolicyProblem is reported."""
    s = make_startd(STATIC + "START = KeyboardIdle >\nPREEMPT = 1/0 > 1\n")
    assert pair(s) == ("Owner", "Idle")
    from htcpool.startd import RequestClaim as RC
    actions = s.handle(RC(s.slot("slot1").claim.id, job()), 1)
    assert not actions[0].accepted  # type: ignore[union-attr]
    s2 = make_startd(STATIC + "PREEMPT = 1/0 > 1\n")
    run_job(s2, "slot1", job(), 0)
    actions = tick(s2, 10)
    assert any(isinstance(a, PolicyProblem) and a.knob == "PREEMPT" for a in actions)
    assert pair(s2) == ("Claimed", "Busy")


def test_scenario_default_policy() -> None:
    """Examples: Default Policy - always start, never suspend or preempt."""
    s = make_startd(STATIC)
    run_job(s, "slot1", job(), 0)
    for t in range(10, 5000, 300):
        tick(s, t, load_avg=5.0, keyboard_idle=0)
    assert pair(s) == ("Claimed", "Busy")


def test_scenario_test_job_policy_and_desktop() -> None:
    """Examples: Test-job Policy - coltrane's jobs start and are never suspended on a busy desktop."""
    text = (STATIC + "use POLICY : Desktop\nSTART = ($(START)) || Owner == \"coltrane\"\n"
            "SUSPEND = ($(SUSPEND)) && Owner != \"coltrane\"\nPREEMPT = ($(PREEMPT)) && Owner != \"coltrane\"\n"
            "IS_OWNER = False\n")
    s = make_startd(text)
    tick(s, 0, keyboard_idle=0)
    run_job(s, "slot1", job(Owner="coltrane"), 1)
    assert pair(s) == ("Claimed", "Busy")
    tick(s, 100, keyboard_idle=0)
    assert pair(s) == ("Claimed", "Busy")
    s2 = make_startd(text)
    tick(s2, 2000, keyboard_idle=2000)
    run_job(s2, "slot1", job(Owner="bob"), 2000)
    tick(s2, 2010, keyboard_idle=0)
    assert pair(s2) == ("Claimed", "Suspended")  # Desktop: vanilla jobs suspend on keyboard activity
    tick(s2, 2700, keyboard_idle=0)  # suspended longer than MaxSuspendTime -> PREEMPT
    assert pair(s2)[0] == "Preempting"


def test_scenario_time_of_day_policy() -> None:
    """Examples: Time of Day Policy - START = $(AfterHours) with ClockMin / ClockDay."""
    text = (STATIC + "WorkHours = ( (ClockMin >= 480 && ClockMin < 1020) && (ClockDay > 0 && ClockDay < 6) )\n"
            "AfterHours = ( (ClockMin < 480 || ClockMin >= 1020) || (ClockDay == 0 || ClockDay == 6) )\n"
            "START = $(AfterHours)\nIS_OWNER = (START =?= False)\n")
    monday_9am = 4 * 86400 + 9 * 3600  # 1970-01-05 was a Monday
    s = make_startd(text, now=monday_9am)
    assert pair(s) == ("Owner", "Idle") and s.slot("slot1").ad["ClockDay"] == 1
    tick(s, monday_9am + 9 * 3600)  # 18:00
    assert pair(s) == ("Unclaimed", "Idle")


def test_scenario_rank_preemption_story() -> None:
    """The RANK Expression: on bass, jones (rank 1) preempts an outsider, garrison (10) preempts jones."""
    s = make_startd(STATIC + "RANK = (Owner == \"coltrane\") + (Owner == \"tyner\") "
                    "+ ((Owner == \"garrison\") * 10) + (Owner == \"jones\")\n")
    run_job(s, "slot1", job(Owner="miles"), 0)
    slot = s.slot("slot1")
    assert slot.ad["CurrentRank"] == 0
    s.handle(RequestClaim(slot.preempting_id, job(Owner="jones")), 10)
    finish(s, "slot1", 20)
    assert slot.claim.rank == 1 and numbers(s)[-1] == 23
    s.handle(RequestClaim(slot.preempting_id, job(Owner="garrison")), 30)
    assert slot.claim.rank == 10 and pair(s) == ("Claimed", "Idle")
    refused = s.handle(RequestClaim(slot.preempting_id, job(Owner="jones")), 40)
    assert refused[0].accepted is False  # type: ignore[union-attr]


def test_scenario_large_memory_rank() -> None:
    """The RANK Expression: RANK = ImageSize prefers the bigger job."""
    s = make_startd(STATIC + "RANK = ImageSize\n")
    run_job(s, "slot1", job(ImageSize=100), 0)
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(ImageSize=50)), 5)
    assert s.slot("slot1").preempting is None
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(ImageSize=5000)), 6)
    assert pair(s)[0] == "Preempting"


def test_scenario_interactive_slot() -> None:
    """Configuration for Interactive Jobs: slot 1 reserved for InteractiveJob."""
    s = make_startd(STATIC + "START = ( (MY.SlotID == 1) && (TARGET.InteractiveJob =?= True) )\n", cpus=2)
    assert not s.handle(RequestClaim(s.slot("slot1").claim.id, job()), 1)[0].accepted  # type: ignore[union-attr]
    assert s.handle(RequestClaim(s.slot("slot1").claim.id, job(InteractiveJob=True)), 2)[0].accepted  # type: ignore


def test_scenario_job_suspension_slots() -> None:
    """Job Suspension: the suspendable slot suspends while its nonsuspendable twin is busy."""
    text = (STATIC + "NUM_CPUS = 2\nIsSuspendableSlot = SlotID > 1\n"
            'NonSuspendableSlotState = eval(strcat("slot",SlotID-1,"_State"))\n'
            "STARTD_SLOT_ATTRS = State\nSTARTD_ATTRS = IsSuspendableSlot NonSuspendableSlotState\n"
            'MyNonSuspendableSlotIsIdle = (NonSuspendableSlotState =!= "Claimed" && '
            'NonSuspendableSlotState =!= "Preempting")\n'
            "START = IsSuspendableSlot!=True && IsSuspendableJob=!=True || "
            "IsSuspendableSlot && IsSuspendableJob==True && $(MyNonSuspendableSlotIsIdle)\n"
            "SUSPEND = IsSuspendableSlot && $(MyNonSuspendableSlotIsIdle)!=True\n"
            "WANT_SUSPEND = $(SUSPEND)\nCONTINUE = ($(SUSPEND)) != True\n")
    s = make_startd(text, cpus=1)
    run_job(s, "slot2", job(IsSuspendableJob=True), 0)
    assert pair(s, "slot2") == ("Claimed", "Busy")
    run_job(s, "slot1", job(), 10)
    tick(s, 15)
    assert pair(s, "slot2") == ("Claimed", "Suspended")
    finish(s, "slot1", 20)
    s.handle(__import__("htcpool.startd", fromlist=["ReleaseClaim"]).ReleaseClaim(s.slot("slot1").claim.id), 21)
    tick(s, 30)
    assert pair(s, "slot2") == ("Claimed", "Busy")


WHOLE = (STATIC + "NUM_CPUS = $(DETECTED_CORES)*2\nMEMORY = $(DETECTED_MEMORY)*2\n"
         "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = $(DETECTED_CORES)\n"
         "SLOT_TYPE_2 = cpus=$(DETECTED_CORES), memory=$(DETECTED_MEMORY)\nNUM_SLOTS_TYPE_2 = 1\n"
         "WHOLE_MACHINE_SLOT = ($(DETECTED_CORES)+1)\nCAN_RUN_WHOLE_MACHINE = SlotID == $(WHOLE_MACHINE_SLOT)\n"
         "STARTD_ATTRS = $(STARTD_ATTRS) CAN_RUN_WHOLE_MACHINE\nSTARTD_SLOT_ATTRS = State\n"
         'WHOLE_MACHINE_SLOT_STATE = eval(strcat("Slot",$(WHOLE_MACHINE_SLOT),"_State"))\n'
         'SINGLE_CORE_SLOTS_CLAIMED = ($(WHOLE_MACHINE_SLOT_STATE) =?= "Claimed") < '
         '(Slot1_State =?= "Claimed") + (Slot2_State =?= "Claimed") + (Slot3_State =?= "Claimed")\n'
         'START = ($(START)) && ( (TARGET.RequiresWholeMachine =!= True && MY.CAN_RUN_WHOLE_MACHINE == False && '
         '$(WHOLE_MACHINE_SLOT_STATE) =!= "Claimed") || '
         "(TARGET.RequiresWholeMachine =?= True && MY.CAN_RUN_WHOLE_MACHINE) )\n"
         "SUSPEND = ($(SUSPEND)) || ( MY.CAN_RUN_WHOLE_MACHINE && $(SINGLE_CORE_SLOTS_CLAIMED) )\n"
         "CONTINUE = ($(SUSPEND)) =!= True\nWANT_SUSPEND = $(SUSPEND)\nIS_OWNER = (START =?= False)\n")


def test_scenario_whole_machine_slots() -> None:
    """The whole-machine HOWTO: the whole-machine slot suspends until single-core jobs finish;
    single-core slots are Owner while the whole-machine slot is Claimed."""
    s = make_startd(WHOLE, cpus=2, memory=2048)
    assert [x.id_str for x in s.slots] == ["slot1", "slot2", "slot3"]
    assert pair(s, "slot3") == ("Owner", "Idle") and pair(s, "slot1") == ("Unclaimed", "Idle")
    run_job(s, "slot1", job(), 0)
    run_job(s, "slot3", job(RequiresWholeMachine=True), 5)
    tick(s, 10)
    assert pair(s, "slot3") == ("Claimed", "Suspended")
    assert pair(s, "slot2") == ("Owner", "Idle")  # no new single-core work while whole machine is claimed
    finish(s, "slot1", 20)
    tick(s, 25)
    assert pair(s, "slot3") == ("Claimed", "Busy")


def test_scenario_sticky_claim_worklife() -> None:
    """The whole-machine HOWTO, sticky slots: CLAIM_WORKLIFE keeps a claim for new jobs until it
    expires."""
    s = make_startd(STATIC + "CLAIM_WORKLIFE = 600\n")
    run_job(s, "slot1", job(), 0)
    finish(s, "slot1", 100)
    assert pair(s) == ("Claimed", "Idle")
    tick(s, 700)
    assert 10 in numbers(s) and pair(s) == ("Unclaimed", "Idle")


def test_retirement_ignores_suspension_and_job_may_only_shorten() -> None:
    """MAXJOBRETIREMENTTIME: time suspended does not count; the job's value may only lower it."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 300\nMachineMaxVacateTime = 0\n")
    run_job(s, "slot1", job(MaxJobRetirementTime=1000), 0)
    from htcpool.startd import ContinueClaim, SuspendClaim, Vacate
    s.handle(SuspendClaim(s.slot("slot1").name), 100)
    s.handle(ContinueClaim(s.slot("slot1").name), 200)
    s.handle(Vacate(), 210)
    assert s.retirement_left(s.slot("slot1"), 210) == 190
    tick(s, 395)
    assert pair(s) == ("Claimed", "Retiring")
    tick(s, 400)
    assert pair(s)[0] == "Preempting"


def test_job_max_vacate_time_borrows_retirement() -> None:
    """MachineMaxVacateTime: a larger JobMaxVacateTime converts remaining retirement to vacate time."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 1000\nMachineMaxVacateTime = 60\n")
    run_job(s, "slot1", job(JobMaxVacateTime=300), 0)
    from htcpool.startd import Vacate
    s.handle(Vacate(), 10)
    actions = tick(s, 700)
    soft = [a for a in actions if isinstance(a, SoftKill)]
    assert soft and soft[0].max_vacate_time == 300


def test_drain_accounting_quick() -> None:
    """Draining: quick drain vacates at once; badput and unclaimed time are accounted."""
    from htcpool.startd import Drain
    s = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\n", cpus=2)
    run_job(s, "slot1", job(), 0)
    s.handle(Drain(how_fast="quick"), 100)
    assert pair(s) == ("Preempting", "Vacating")
    finish(s, "slot1", 110)
    tick(s, 120)
    ad = s.slot("slot1").ad
    assert ad["TotalMachineDrainingBadput"] == 100
    assert ad["TotalMachineDrainingUnclaimedTime"] >= 20
    assert pair(s) == ("Drained", "Idle")


def test_drain_start_expr_defrag_false() -> None:
    """DEFRAG_DRAINING_START_EXPR = FALSE: the drained slot advertises START false."""
    from htcpool.startd import Drain
    s = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\n", cpus=2)
    run_job(s, "slot2", job(), 0)
    s.handle(Drain(start_expr="FALSE"), 1)
    assert repr(s.slot("slot1").ad.lookup("START")) == "false"
    assert s.slot("slot1").ad.eval("Requirements") is False


# -------------------------------------------------------------------- more of the manual's layouts
@pytest.mark.parametrize("text", ["c=25%, m=64, v=1/4, d=25%", "25%", "1/4"])
def test_slot_types_4_to_6_are_equivalent(text: str) -> None:
    """Dividing System Resources: types 4-6 of the 4-core, 256 MB example are equal."""
    s = StartdSettings(num_cpus=4, memory=256, swap=4000, slot_types={1: SlotTypeSettings(1, text, 1)})
    spec = build_layout(s, 4096, Inventory(), AT_START)[0].resources
    assert (spec.cpus, spec.memory, spec.swap, spec.disk) == (1, 64, 1000, 1024)


@pytest.mark.parametrize("text", ["mem=64", "mem=1/2", "mem=50%", "mem=auto"])
def test_memory_share_forms_on_128_mb(text: str) -> None:
    """Dividing System Resources: on a machine with 128 MB, mem=64, 1/2, 50% and auto give each of two
    slots the same memory."""
    s = StartdSettings(num_cpus=2, memory=128, slot_types={1: SlotTypeSettings(1, text, 2)})
    assert [x.resources.memory for x in build_layout(s, 4096, Inventory(), AT_START)] == [64, 64]


def test_blanket_default_with_explicit_auto_disk_and_units() -> None:
    """Dividing System Resources: ``cpus=1, ram=1/2, swap=50%`` equals ``cpus=1, disk=auto, 50%``; absolute
    amounts take units (memory in MiB, disk and swap in KiB: ``4G``, ``2M``)."""
    def one(text: str, memory: int = 256) -> tuple[float, int, int, int]:
        s = StartdSettings(num_cpus=4, memory=memory, swap=4000, slot_types={1: SlotTypeSettings(1, text, 1)})
        r = build_layout(s, 4096, Inventory(), AT_START)[0].resources
        return (r.cpus, r.memory, r.swap, r.disk)
    assert one("cpus=1, ram=1/2, swap=50%") == one("cpus=1, disk=auto, 50%") == (1, 128, 2000, 4096)
    assert one("memory=4G, disk=2M, swap=1K", memory=8192) == (4, 4096, 1, 2048)


def test_even_division_by_num_slots() -> None:
    """Dividing System Resources, evenly: NUM_SLOTS slots share the cores and divide memory, disk and swap
    evenly; by default there is one slot per core (NUM_CPUS)."""
    s = StartdSettings(num_cpus=4, memory=1000, swap=4000, num_slots=2, slot_type_0_partitionable=False)
    assert [(x.resources.cpus, x.resources.memory, x.resources.disk, x.resources.swap)
            for x in build_layout(s, 4000, Inventory(), AT_START)] == [(2, 500, 2000, 2000)] * 2
    s = StartdSettings(num_cpus=4, memory=1000, slot_type_0_partitionable=False)
    assert [x.resources.memory for x in build_layout(s, 4000, Inventory(), AT_START)] == [250] * 4
    started = make_startd("RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n", cpus=3, memory=3072)
    assert [(x.ad["Cpus"], x.ad["Memory"], x.ad["TotalSlots"]) for x in started.slots] == [(1, 1024, 3)] * 3


def test_consumption_policy_with_a_custom_resource() -> None:
    """Consumption Policies: ``SLOT_TYPE_2_CONSUMPTION_gpus = TARGET.RequestGpu`` on an 8-core pslot with
    4 gpus - a dynamic slot takes the job's RequestGpu; a request for more than is left is refused."""
    s = make_startd("RunBenchmarks = false\nMACHINE_RESOURCE_NAMES = gpus\nMACHINE_RESOURCE_gpus = 4\n"
                    "SLOT_TYPE_2 = cpus=8, gpus=4\nSLOT_TYPE_2_PARTITIONABLE = True\nNUM_SLOTS_TYPE_2 = 1\n"
                    "SLOT_TYPE_2_CONSUMPTION_POLICY = True\nSLOT_TYPE_2_CONSUMPTION_gpus = TARGET.RequestGpu\n"
                    "SLOT_WEIGHT = Cpus\n", cpus=8)
    p = s.slot("slot1")
    assert (p.ad["SlotType"], p.ad["PartitionableSlot"], p.ad["gpus"]) == ("Partitionable", True, 4)
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=2, RequestGpu=3)), 1)
    d = s.slot("slot1_1").ad
    assert (d["gpus"], d["Cpus"], p.ad["gpus"], p.ad["Cpus"], p.ad.eval("SlotWeight")) == (3, 2, 1, 6, 6)
    assert not s.handle(RequestClaim(p.claim.id, job(RequestGpu=2)), 2)[0].accepted  # type: ignore[union-attr]


# -------------------------------------------------------------------- more of the manual's examples
@pytest.mark.parametrize("op,state", [("&&", "Owner"), ("||", "Unclaimed")])
def test_owner_state_start_examples(op: str, state: str) -> None:
    """Owner State: with POLICY : Desktop (IS_OWNER = START =?= FALSE) and KeyboardIdle 34 s,
    ``KeyboardIdle > 15 * $(MINUTE) && Owner == "coltrane"`` is FALSE locally - Owner; with ``||`` it is
    UNDEFINED - Unclaimed, willing to run coltrane's jobs only."""
    s = make_startd(STATIC + "use POLICY : Desktop\n"
                    f'START = KeyboardIdle > 15 * $(MINUTE) {op} Owner == "coltrane"\n')
    tick(s, 100, keyboard_idle=34, load_avg=0.0)
    assert pair(s) == (state, "Idle")
    coltrane = s.handle(RequestClaim(s.slot("slot1").claim.id, job(Owner="coltrane")), 101)
    assert coltrane[0].accepted is (op == "||")  # type: ignore[union-attr]


def test_interactive_slot_rank_and_coltranes_machine() -> None:
    """Configuration for Interactive Jobs: ``RANK = ( (MY.SlotID == 1) && (TARGET.InteractiveJob =?= True) )``
    - an interactive job outranks (and preempts) a batch job on slot 1 only. The RANK Expression, Coltrane's
    machine: ``(Owner == "coltrane" * 1000000000000) + Imagesize`` as printed multiplies a string, which is
    ERROR for every job - reported, and counted as rank 0; the intended ``(Owner == "coltrane") *
    1000000000000 + ImageSize`` prefers coltrane, then bigger jobs."""
    s = make_startd(STATIC + "RANK = ( (MY.SlotID == 1) && (TARGET.InteractiveJob =?= True) )\n"
                    "MaxJobRetirementTime = 0\n", cpus=2)
    run_job(s, "slot1", job(), 0)
    interactive = job(ProcId=1, InteractiveJob=True)
    assert (s.rank_of(s.slot("slot1"), interactive), s.rank_of(s.slot("slot2"), interactive)) == (1, 0)
    s.handle(RequestClaim(s.slot("slot1").preempting_id, interactive), 5)
    finish(s, "slot1", 6)
    assert pair(s, "slot1") == ("Claimed", "Idle") and s.slot("slot1").ad["CurrentRank"] == 1
    printed = make_startd(STATIC + 'RANK = (Owner == "coltrane" * 1000000000000) + Imagesize\n')
    assert printed.rank_of(printed.slot("slot1"), job(Owner="coltrane", ImageSize=10)) == 0
    assert any(isinstance(a, PolicyProblem) and a.knob == "Rank" for a in printed.evaluate(1))
    meant = make_startd(STATIC + 'RANK = (Owner == "coltrane") * 1000000000000 + Imagesize\n')
    ranks = [meant.rank_of(meant.slot("slot1"), job(Owner=o, ImageSize=n)) for o, n in
             (("coltrane", 10), ("bob", 2000), ("bob", 10))]
    assert ranks == [1000000000010, 2000, 10]


def test_scenario_whole_machine_suspends_single_core_jobs_instead() -> None:
    """The whole-machine HOWTO, alternative: suspend the single-core jobs while the whole-machine
    job runs (``SUSPEND = ($(SUSPEND)) || (MY.CAN_RUN_WHOLE_MACHINE =!= TRUE && <whole slot> =?=
    "Claimed")``)."""
    text = WHOLE.replace("SUSPEND = ($(SUSPEND)) || ( MY.CAN_RUN_WHOLE_MACHINE && $(SINGLE_CORE_SLOTS_CLAIMED) )\n",
                         'SUSPEND = ($(SUSPEND)) || ( MY.CAN_RUN_WHOLE_MACHINE =!= TRUE && '
                         '$(WHOLE_MACHINE_SLOT_STATE) =?= "Claimed" )\n')
    assert text != WHOLE
    s = make_startd(text, cpus=2, memory=2048)
    run_job(s, "slot1", job(), 0)
    run_job(s, "slot3", job(RequiresWholeMachine=True), 5)
    tick(s, 10)
    assert pair(s, "slot1") == ("Claimed", "Suspended") and pair(s, "slot3") == ("Claimed", "Busy")
    finish(s, "slot3", 20)
    s.handle(ReleaseClaim(s.slot("slot3").claim.id), 21)
    tick(s, 30)
    assert pair(s, "slot1") == ("Claimed", "Busy") and pair(s, "slot3") == ("Owner", "Idle")


def test_scenario_whole_machine_preempts_slow_single_core_jobs() -> None:
    """The whole-machine HOWTO, alternative: the whole-machine job is suspended while single-core
    jobs finish, but they are preempted after a day of retirement (``PREEMPT = ($(PREEMPT)) || ...``
    with ``MaxJobRetirementTime = 24*3600``); then the whole-machine job continues."""
    s = make_startd(WHOLE + 'PREEMPT = ($(PREEMPT)) || ( MY.CAN_RUN_WHOLE_MACHINE =!= TRUE && '
                    '$(WHOLE_MACHINE_SLOT_STATE) =?= "Claimed" )\nMaxJobRetirementTime = 24*3600\n',
                    cpus=2, memory=2048)
    run_job(s, "slot1", job(), 0)
    run_job(s, "slot3", job(RequiresWholeMachine=True), 5)
    tick(s, 10)
    tick(s, 15)
    assert pair(s, "slot1") == ("Claimed", "Retiring") and pair(s, "slot3") == ("Claimed", "Suspended")
    tick(s, 24 * 3600 - 601)
    assert pair(s, "slot1") == ("Claimed", "Retiring")
    tick(s, 24 * 3600 - 600)  # retirement less the 600 s MachineMaxVacateTime
    assert pair(s, "slot1") == ("Preempting", "Vacating")
    finish(s, "slot1", 24 * 3600 - 590)
    tick(s, 24 * 3600 - 585)
    assert pair(s, "slot1") == ("Owner", "Idle") and pair(s, "slot3") == ("Claimed", "Busy")


def test_scenario_sticky_whole_machine_slot_across_users() -> None:
    """The whole-machine HOWTO, sticky slots across users: single-core jobs may not start for 10
    minutes after the whole-machine slot changes state (``SlotX_EnteredCurrentState``
    cross-advertised, compared with the collector's ``LastHeardFrom``; undefined at the startd
    itself, so it does not block there)."""
    text = WHOLE.replace("STARTD_SLOT_ATTRS = State\n", "STARTD_SLOT_ATTRS = State, EnteredCurrentState\n") + (
        'WHOLE_MACHINE_SLOT_ENTERED_CURRENT_STATE = eval(strcat("Slot",$(WHOLE_MACHINE_SLOT),'
        '"_EnteredCurrentState"))\n'
        "START = ($(START)) && ( TARGET.RequiresWholeMachine =?= True || isUndefined(MY.LastHeardFrom) || "
        "MY.LastHeardFrom - $(WHOLE_MACHINE_SLOT_ENTERED_CURRENT_STATE) > 600 )\n")
    s = make_startd(text, cpus=2, memory=2048)
    run_job(s, "slot3", job(RequiresWholeMachine=True), 0)
    finish(s, "slot3", 100)
    s.handle(ReleaseClaim(s.slot("slot3").claim.id), 100)
    tick(s, 105)
    one = s.slot("slot1").ad
    assert pair(s, "slot1") == ("Unclaimed", "Idle") and one["slot3_EnteredCurrentState"] == 100
    as_collected = one.copy()
    as_collected["LastHeardFrom"] = 300
    assert not requirements_hold(as_collected, job(), s.ctx)
    whole = s.slot("slot3").ad.copy()
    whole["LastHeardFrom"] = 300
    assert requirements_hold(whole, job(RequiresWholeMachine=True), s.ctx)
    as_collected["LastHeardFrom"] = 800
    assert requirements_hold(as_collected, job(), s.ctx)


@pytest.mark.parametrize("cpus,mem,disk,swap", [
    ("Cpus", "ram", "disk", "swap"), ("C", "RAM", "Disk", "SWAP"), ("c", "MEMORY", "D", "S"),
    ("cpu", "memory", "d", "s"), ("cpus", "Mem", "disk", "VirtualMemory"), ("c", "R", "d", "V"),
    ("c", "r", "d", "v"), ("c", "M", "d", "v"), ("c", "m", "d", "v")])
def test_every_resource_name_alias(cpus: str, mem: str, disk: str, swap: str) -> None:
    """Dividing System Resources: the four predefined names are case insensitive and known by their
    aliases - Cpus, C, c, cpu; ram, RAM, MEMORY, memory, Mem, R, r, M, m; disk, Disk, D, d; swap, SWAP,
    S, s, VirtualMemory, V, v."""
    text = f"{cpus}=2, {mem}=100, {disk}=25%, {swap}=1/2"
    s = StartdSettings(num_cpus=4, memory=256, swap=4000, slot_types={1: SlotTypeSettings(1, text, 1)})
    r = build_layout(s, 4096, Inventory(), AT_START)[0].resources
    assert (r.cpus, r.memory, r.disk, r.swap) == (2, 100, 1024, 2000)


@pytest.mark.parametrize("knob,safe,pair_after", [
    ("PREEMPT", "false", ("Claimed", "Busy")), ("SUSPEND", "false", ("Claimed", "Busy")),
    ("WANT_SUSPEND", "false", ("Claimed", "Busy")), ("KILL", "false", ("Claimed", "Busy")),
    ("IS_OWNER", "true", ("Owner", "Idle"))])
def test_malformed_knob_takes_its_safe_value(knob: str, safe: str, pair_after: tuple[str, str]) -> None:
    """Malformed policies: a knob whose text does not parse is replaced by the startd's fallback (a
    broken IS_OWNER by true: the slot stays Owner and takes no work) and reported, never crashing."""
    s = make_startd(STATIC + f"{knob} = (TotalLoadAvg >\n")
    attr = "IsOwner" if knob == "IS_OWNER" else knob
    problems = [a for a in s.initial_actions if isinstance(a, PolicyProblem)]
    assert [p.knob for p in problems] == [attr] and "does not parse" in problems[0].problem
    assert repr(s.slot("slot1").ad.lookup(attr)) == safe
    if knob != "IS_OWNER":
        run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=5.0)
    assert pair(s) == pair_after
