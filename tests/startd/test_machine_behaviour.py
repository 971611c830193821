"""Machine-wide behaviour from the HTCondor manual's "Policy Configuration for Execution Points":
shutdown, draining, partitionable-slot preemption, GPUs, load averages, keyboard/console,
MACHINE_RESOURCE_NAMES, STARTD_SLOT_ATTRS and the Desktop/Non-Desktop policy example."""

from __future__ import annotations

from htcpool.classad import ClassAd, ExprTree
from htcpool.startd import (
    ActivateClaim,
    ActivateReply,
    BenchmarksFinished,
    CancelDrain,
    ClaimReply,
    DaemonAction,
    Drain,
    DrainReply,
    HardKill,
    Inventory,
    MatchNotification,
    NotifySchedd,
    ReleaseClaim,
    RequestClaim,
    SendAd,
    Shutdown,
)
from tests.startd.helpers import claim, finish, job, make_startd, numbers, pair, run_job, tick

STATIC = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"
PSLOT = "RunBenchmarks = false\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\n"


def _expr(ad: ClassAd, text: str) -> object:
    return ExprTree(text).evaluate(ad)


# ---------------------------------------------------------------------- shutdown
def test_peaceful_shutdown_never_kills() -> None:
    """Claimed State, Claimed/Retiring: a peaceful shutdown makes MaxJobRetirementTime effectively infinite."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 0\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Shutdown("peaceful"), 10)
    assert pair(s) == ("Claimed", "Retiring")
    assert s.slot("slot1").ad.eval("Requirements") is False
    tick(s, 10**6)
    assert pair(s) == ("Claimed", "Retiring")
    refused = s.handle(RequestClaim(s.slot("slot1").preempting_id, job()), 10**6)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted
    actions = finish(s, "slot1", 10**6 + 1)
    assert pair(s)[1] == "Idle" and DaemonAction("exit") in actions


def test_peaceful_shutdown_honours_minus_one() -> None:
    """POLICY : PREEMPT_IF: a MaxJobRetirementTime of -1 means no retirement even when shutting down peacefully."""
    s = make_startd(STATIC + "MaxJobRetirementTime = -1\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Shutdown("peaceful"), 10)
    assert pair(s) == ("Preempting", "Vacating")


def test_graceful_and_fast_shutdown() -> None:
    """Claimed/Retiring: shutdown retires (graceful, with the normal retirement); a fast shutdown bypasses it."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 100\nMachineMaxVacateTime = 0\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Shutdown("graceful"), 10)
    tick(s, 99)
    assert pair(s) == ("Claimed", "Retiring")
    tick(s, 100)
    assert pair(s) == ("Preempting", "Vacating")
    s = make_startd(STATIC + "MaxJobRetirementTime = 100\n")
    run_job(s, "slot1", job(), 0)
    actions = s.handle(Shutdown("fast"), 10)
    assert pair(s) == ("Preempting", "Killing") and any(isinstance(a, HardKill) for a in actions)
    assert not any(isinstance(a, DaemonAction) for a in actions)
    assert DaemonAction("exit") in finish(s, "slot1", 12)


# ---------------------------------------------------------------------- draining
def test_drained_slot_takes_a_claim_the_draining_start_accepts() -> None:
    """Drained State / DEFRAG_DRAINING_START_EXPR (HTCondor command.cpp ``request_claim``, ResMgr.cpp
    ``startDraining``): a graceful drain retires every claim - an idle one is preempted at once - and a
    Drained slot may then be claimed by a job the draining START accepts; the claim is activated within
    MAX_DRAINING_ACTIVATION_DELAY, its job runs as long as the original job retires, then is vacated."""
    s = make_startd(STATIC + "NUM_SLOTS = 3\nMaxJobRetirementTime = 1000\nMachineMaxVacateTime = 0\n", cpus=3)
    run_job(s, "slot1", job(), 0)  # the original job: 1000 s of retirement
    claim(s, "slot2", job(), 100)
    s.handle(Drain(start_expr="TARGET.Interruptible =?= true"), 105)
    assert pair(s, "slot1") == ("Claimed", "Retiring") and pair(s, "slot3") == ("Drained", "Retiring")
    assert numbers(s, "slot2")[-3:] == [10, 22, 36]  # the idle claim is preempted at once
    drained = s.slot("slot3")
    assert repr(drained.ad.lookup("Requirements")) == "START && WithinResourceLimits"  # START: the drain's
    refused = s.handle(RequestClaim(drained.claim.id, job(ProcId=1)), 110)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted and pair(s, "slot3")[0] == "Drained"
    s.handle(MatchNotification(drained.claim.id), 110)  # MATCH_INFO is ignored in Drained
    assert pair(s, "slot3") == ("Drained", "Retiring")
    taken = s.handle(RequestClaim(drained.claim.id, job(ProcId=2, Interruptible=True)), 111)
    assert isinstance(taken[0], ClaimReply) and taken[0].accepted
    assert pair(s, "slot3") == ("Claimed", "Idle") and s.history[-1][1:] == (0, "Drained/Retiring", "Claimed/Idle")
    late = drained.claim.id
    no = s.handle(ActivateClaim(late, job(ProcId=3)), 112)
    assert isinstance(no[0], ActivateReply) and not no[0].accepted
    yes = [a for a in s.handle(ActivateClaim(late, job(ProcId=2, Interruptible=True)), 113)
           if isinstance(a, ActivateReply)]
    assert yes[0].accepted and drained.claim.accepted_while_draining
    near_end = s.handle(RequestClaim(s.slot("slot2").claim.id, job(Interruptible=True)), 990)
    assert isinstance(near_end[0], ClaimReply) and not near_end[0].accepted  # under 20 s of drain time left
    tick(s, 999)
    assert pair(s, "slot1") == ("Claimed", "Retiring") and pair(s, "slot3") == ("Claimed", "Busy")
    assert s.retirement_left(drained, 999) == 1
    tick(s, 1000)
    assert pair(s, "slot1")[0] == "Preempting"
    finish(s, "slot1", 1001)
    tick(s, 1002)
    assert pair(s, "slot1") == ("Drained", "Retiring") and pair(s, "slot3") == ("Preempting", "Vacating")
    refused = s.handle(RequestClaim(s.slot("slot2").claim.id, job(Interruptible=True)), 1003)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted  # the draining START is gone
    finish(s, "slot3", 1004)
    tick(s, 1005)
    assert [pair(s, f"slot{i}") for i in (1, 2, 3)] == [("Drained", "Idle")] * 3


def test_drained_claim_not_activated_in_time_is_preempted() -> None:
    """Drained State: a claim on a Drained slot that is not activated within MAX_DRAINING_ACTIVATION_DELAY
    is preempted (10) and the slot returns to Drained; a drain without a start expression refuses claims."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\nMAX_DRAINING_ACTIVATION_DELAY = 30\n",
                    cpus=2)
    run_job(s, "slot1", job(), 0)
    s.handle(Drain(start_expr="true"), 10)
    s.handle(RequestClaim(s.slot("slot2").claim.id, job()), 20)
    assert pair(s, "slot2") == ("Claimed", "Idle")
    tick(s, 49)
    assert pair(s, "slot2") == ("Claimed", "Idle")
    tick(s, 50)
    assert numbers(s, "slot2")[-3:] == [10, 22, 36] and pair(s, "slot2") == ("Drained", "Retiring")
    s = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\n", cpus=2)
    run_job(s, "slot1", job(), 0)
    s.handle(Drain(), 10)  # no start expression: Requirements are False
    refused = s.handle(RequestClaim(s.slot("slot2").claim.id, job()), 20)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted and pair(s, "slot2")[0] == "Drained"


def test_drained_partitionable_slot_carves_for_the_draining_start() -> None:
    """Drained State with a partitionable slot: while an original dynamic slot retires, the Drained pslot
    carves a dynamic slot for a job the draining START accepts; the drain completes (33) only when no
    dynamic slot is left."""
    s = make_startd(PSLOT + "MaxJobRetirementTime = 1000\nMachineMaxVacateTime = 0\n", cpus=4, memory=4096)
    p = s.slot("slot1")
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=2, RequestMemory=1024)), 0)
    s.handle(ActivateClaim(s.slot("slot1_1").claim.id, job(RequestCpus=2, RequestMemory=1024)), 1)
    s.handle(Drain(start_expr="TARGET.Interruptible =?= true", on_completion="resume"), 10)
    tick(s, 20)
    assert pair(s, "slot1") == ("Drained", "Retiring") and pair(s, "slot1_1") == ("Claimed", "Retiring")
    assert not s.handle(RequestClaim(p.claim.id, job(ProcId=1)), 30)[0].accepted  # type: ignore[union-attr]
    reply = [a for a in s.handle(RequestClaim(p.claim.id, job(ProcId=2, Interruptible=True)), 31)
             if isinstance(a, ClaimReply)][0]
    assert reply.accepted and reply.slot == "slot1_2@test.example.org" and pair(s, "slot1_2") == ("Claimed", "Idle")
    s.handle(ActivateClaim(s.slot("slot1_2").claim.id, job(ProcId=2, Interruptible=True)), 32)
    assert pair(s, "slot1") == ("Drained", "Retiring") and 33 not in numbers(s)
    tick(s, 1001)  # the original job's retirement is over: both dynamic slots are vacated
    finish(s, "slot1_1", 1002)
    finish(s, "slot1_2", 1003)
    tick(s, 1004)
    assert [x.id_str for x in s.slots] == ["slot1"] and 33 in numbers(s) and numbers(s)[-2:] == [34, 1]


def test_graceful_drain_ends_matched_and_backfill_slots() -> None:
    """Drained State: a drain releases every claim (ResMgr::releaseAllClaimsReversibly) - a Matched slot
    goes to Owner (8), a Backfill slot toward Owner (30) - and both then enter Drained (36)."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\nENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\n"
                    "START_BACKFILL = SlotID == 2\n", cpus=2)
    s.handle(MatchNotification(s.slot("slot1").claim.id), 5)
    assert pair(s, "slot1") == ("Matched", "Idle") and pair(s, "slot2") == ("Backfill", "Idle")
    s.handle(Drain(), 10)
    assert numbers(s, "slot1")[-3:] == [8, 36, 33] and numbers(s, "slot2")[-3:] == [30, 36, 33]


# ---------------------------------------------------------------------- partitionable slots
def test_negotiator_preempts_dynamic_slots() -> None:
    """Dynamic Provisioning: a claim on the pslot that preempts its dslots - they are released, the
    pslot regains their resources and carves the new dslot; their schedd is told."""
    s = make_startd(PSLOT + "MaxJobRetirementTime = 0\n", cpus=4, memory=4096)
    p = s.slot("slot1")
    for i in range(2):
        s.handle(RequestClaim(p.claim.id, job(ProcId=i, RequestCpus=2, RequestMemory=1024), schedd="ap-a"), 0)
        d = s.slot(f"slot1_{i + 1}")
        s.handle(ActivateClaim(d.claim.id, d.claim.request), 1)  # type: ignore[arg-type]
    assert p.ad["Cpus"] == 0
    victims = (s.slot("slot1_1").claim.id, s.slot("slot1_2").claim.id)
    actions = s.handle(RequestClaim(p.claim.id, job(Owner="bob", RequestCpus=3, RequestMemory=2048),
                                    schedd="ap-b", preempt_claim_ids=victims), 10)
    assert sum(isinstance(a, HardKill) for a in actions) == 2
    told = [a for a in actions if isinstance(a, NotifySchedd)]
    assert [(a.schedd, a.claim_id, a.reason) for a in told] == [
        ("ap-a", v, "Preempted for a Priority user") for v in victims]
    assert sum(isinstance(a, SendAd) and a.invalidate for a in actions) == 2
    reply = [a for a in actions if isinstance(a, ClaimReply)][0]
    assert reply.accepted and reply.slot == "slot1_1@test.example.org"
    assert [x.id_str for x in s.slots] == ["slot1", "slot1_1"]
    assert s.slot("slot1_1").ad["Cpus"] == 3 and s.slot("slot1_1").ad["RemoteUser"] == "alice@example.org"
    assert (p.ad["Cpus"], p.ad["Memory"], p.ad["NumDynamicSlots"]) == (1, 2048, 1)


def test_dynamic_slots_in_retirement_cannot_be_preempted() -> None:
    """Dynamic Provisioning: a listed dslot whose retirement has not expired refuses the whole request."""
    s = make_startd(PSLOT + "MaxJobRetirementTime = 1000\n", cpus=2, memory=2048)
    p = s.slot("slot1")
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=2, RequestMemory=1024)), 0)
    d = s.slot("slot1_1")
    s.handle(ActivateClaim(d.claim.id, job(RequestCpus=2, RequestMemory=1024)), 1)
    actions = s.handle(RequestClaim(p.claim.id, job(Owner="bob"), preempt_claim_ids=(d.claim.id,)), 10)
    assert not actions[0].accepted  # type: ignore[union-attr]
    assert pair(s, "slot1_1") == ("Claimed", "Busy") and p.ad["Cpus"] == 0


# ---------------------------------------------------------------------- GPUs
GPUS = Inventory(ids={"GPUs": ("GPU-aa", "GPU-bb")}, properties={
    "GPU-aa": ClassAd({"Id": "GPU-aa", "Capability": 7.5, "GlobalMemoryMb": 16000}),
    "GPU-bb": ClassAd({"Id": "GPU-bb", "Capability": 8.6, "GlobalMemoryMb": 40000})})


def test_gpu_property_ads_in_static_slots() -> None:
    """Configuring GPUs: the nested per-GPU property ads, AssignedGPUs and the totals in each slot ad."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\n", cpus=2, inventory=GPUS)
    one, two = s.slot("slot1").ad, s.slot("slot2").ad
    assert (one["GPUs"], one["AssignedGPUs"], one["TotalGPUs"], one["DetectedGPUs"]) == (1, "GPU-aa", 2,
                                                                                      "GPU-aa, GPU-bb")
    assert _expr(one, "GPUs_GPU_aa.Capability") == 7.5 and "GPUs_GPU_bb" not in one
    assert _expr(two, "AvailableGPUs[0].GlobalMemoryMb") == 40000 and two["AssignedGPUs"] == "GPU-bb"
    assert "GPUs" in one["MachineResources"].split()


def test_gpu_property_ads_follow_dynamic_slots() -> None:
    """Configuring GPUs / require_gpus: a dslot gets the GPU satisfying RequireGPUs with its property ad;
    the pslot no longer advertises it, and gets it back when the dslot goes."""
    s = make_startd(PSLOT, cpus=4, inventory=GPUS)
    p = s.slot("slot1")
    assert p.ad["AssignedGPUs"] == "GPU-aa,GPU-bb" and _expr(p.ad, "size(AvailableGPUs)") == 2
    s.handle(RequestClaim(p.claim.id, job(RequestGPUs=1, RequireGPUs=ExprTree("Capability >= 8.0"))), 5)
    d = s.slot("slot1_1").ad
    assert d["AssignedGPUs"] == "GPU-bb" and _expr(d, "GPUs_GPU_bb.Capability") == 8.6 and d["GPUs"] == 1
    assert p.ad["AssignedGPUs"] == "GPU-aa" and "GPUs_GPU_bb" not in p.ad and p.ad["GPUs"] == 1
    assert _expr(p.ad, "size(AvailableGPUs)") == 1
    s.handle(ReleaseClaim(s.slot("slot1_1").claim.id), 6)  # not activated: deleted at once
    assert p.ad["AssignedGPUs"] == "GPU-aa,GPU-bb" and _expr(p.ad, "GPUs_GPU_bb.Capability") == 8.6


# ---------------------------------------------------------------------- load and idle
def test_condor_load_is_a_one_minute_average_and_owner_load_goes_to_owner_slots() -> None:
    """Load Average for Multi-core Machines: the second log example - slot1 Owner with the owner load
    0.254, slot2 running a job with CondorLoad 0.996; CondorLoadAvg averages the last 60 seconds."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\nIS_OWNER = SlotID == 1\n", cpus=2)
    run_job(s, "slot2", job(), 0)
    seen = {}
    for t in range(5, 65, 5):
        tick(s, t, load_avg=1.25, condor_load={"slot2": 0.996})
        seen[t] = s.slot("slot2").ad["CondorLoadAvg"]
    assert (seen[5], seen[30], seen[60]) == (0.08, 0.5, 1.0)
    one, two = s.slot("slot1").ad, s.slot("slot2").ad
    assert (one["LoadAvg"], one["CondorLoadAvg"], two["LoadAvg"]) == (0.25, 0.0, 1.0)
    assert (two["TotalLoadAvg"], two["TotalCondorLoadAvg"]) == (1.25, 1.0)


def test_owner_load_handed_out_in_state_order_rest_to_the_last() -> None:
    """Load Average for Multi-core Machines: Owner slots first, at most one core each; when slots run
    out the rest lands on one slot, giving it a load above 1.0."""
    s = make_startd(STATIC + "NUM_SLOTS = 3\nIS_OWNER = SlotID == 3\n", cpus=3)
    tick(s, 5, load_avg=1.5)
    assert [s.slot(f"slot{i}").ad["LoadAvg"] for i in (1, 2, 3)] == [0.5, 0.0, 1.0]
    tick(s, 10, load_avg=5.0)
    assert [s.slot(f"slot{i}").ad["LoadAvg"] for i in (1, 2, 3)] == [1.0, 3.0, 1.0]
    tick(s, 15, load_avg=0.34)  # first log example: all load on the first slot in order
    assert [s.slot(f"slot{i}").ad["LoadAvg"] for i in (1, 2, 3)] == [0.0, 0.0, 0.34]


def test_dynamic_slots_share_the_partitionable_slots_excess_load() -> None:
    """Load Average for Multi-core Machines, dynamic slots: the pslot keeps up to its free cores, its
    dslots take the excess up to their own cores."""
    s = make_startd(PSLOT, cpus=4)
    p = s.slot("slot1")
    for _ in range(2):
        s.handle(RequestClaim(p.claim.id, job()), 0)
    tick(s, 5, load_avg=3.5)
    assert [x.ad["LoadAvg"] for x in s.slots] == [2.0, 1.0, 0.5]


def test_keyboard_and_console_connection() -> None:
    """Configuration Specific to Multi-core Machines: unconnected slots report idle time since the
    startd began plus DISCONNECTED_KEYBOARD_IDLE_BOOST."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\nSLOTS_CONNECTED_TO_KEYBOARD = 1\nSLOTS_CONNECTED_TO_CONSOLE = 2\n"
                    "DISCONNECTED_KEYBOARD_IDLE_BOOST = 600\n", cpus=2)
    tick(s, 100, keyboard_idle=5, console_idle=7)
    one, two = s.slot("slot1").ad, s.slot("slot2").ad
    assert (one["KeyboardIdle"], one["ConsoleIdle"]) == (5, 7)
    assert (two["KeyboardIdle"], two["ConsoleIdle"]) == (700, 7)
    s = make_startd(STATIC + "NUM_SLOTS = 2\n", cpus=2)  # defaults: nothing connected, boost 1200
    tick(s, 100, keyboard_idle=5)
    assert [x.ad["KeyboardIdle"] for x in s.slots] == [1300, 1300]


def test_only_the_keyboard_slot_reacts_to_the_owner() -> None:
    """Configuration Specific to Multi-core Machines: with the keyboard connected to one slot, only
    that slot suspends its job when the owner starts typing."""
    s = make_startd(STATIC + "use POLICY : Desktop\nNUM_SLOTS = 2\nSLOTS_CONNECTED_TO_KEYBOARD = 1\n"
                    "SLOTS_CONNECTED_TO_CONSOLE = 1\n", cpus=2)
    tick(s, 2000, keyboard_idle=2000, console_idle=2000)
    run_job(s, "slot1", job(), 2000)
    run_job(s, "slot2", job(ProcId=1), 2000)
    tick(s, 2010, keyboard_idle=0, console_idle=2010)
    assert pair(s, "slot1") == ("Claimed", "Suspended") and pair(s, "slot2") == ("Claimed", "Busy")


# ---------------------------------------------------------------------- configuration
def test_machine_resource_names_selects_resources() -> None:
    """Dividing System Resources: MACHINE_RESOURCE_NAMES enables and disables local machine resources."""
    base = STATIC + "MACHINE_RESOURCE_Cogs = 16\nMACHINE_RESOURCE_actuator = 8\n"
    s = make_startd(base + "MACHINE_RESOURCE_NAMES = Cogs\n")
    ad = s.slot("slot1").ad
    assert ad["TotalCogs"] == 16 and "actuator" not in ad and "TotalActuator" not in ad
    assert ad["MachineResources"] == "Cpus Memory Disk Swap Cogs"
    s = make_startd(base + "MACHINE_RESOURCE_NAMES = Cogs\nif defined MACHINE_RESOURCE_NAMES\n"
                    "  MACHINE_RESOURCE_NAMES = $(MACHINE_RESOURCE_NAMES) actuator\nendif\n")
    ad = s.slot("slot1").ad
    assert (ad["Cogs"], ad["actuator"], ad["Totalactuator"], ad["Detectedactuator"]) == (16, 8, 8, 8)


def test_startd_slot_attrs_cross_advertising() -> None:
    """Job Suspension example / whole-machine howto: STARTD_SLOT_ATTRS copies each slot's attribute into
    every slot as <slot>_<attr>; expressions are copied, not evaluated; gone slots disappear."""
    s = make_startd(PSLOT + "STARTD_SLOT_ATTRS = State, Activity, IsFirst\nIsFirst = DSlotId == 1\n"
                    "STARTD_ATTRS = IsFirst\n", cpus=2)
    p = s.slot("slot1")
    s.handle(RequestClaim(p.claim.id, job()), 0)
    s.handle(RequestClaim(p.claim.id, job()), 0)
    tick(s, 5)
    first, second = s.slot("slot1_1").ad, s.slot("slot1_2").ad
    assert (second["slot1_1_State"], second["slot1_1_Activity"], second["slot1_State"]) == (
        "Claimed", "Idle", "Unclaimed")
    assert first["slot1_1_State"] == "Claimed" and "slot1_2_Activity" in p.ad
    assert repr(second.lookup("slot1_1_IsFirst")) == "DSlotId == 1"
    assert second.eval("slot1_1_IsFirst") is False  # evaluated where it lands, in slot1_2
    s.handle(ReleaseClaim(s.slot("slot1_1").claim.id), 6)
    tick(s, 10)
    assert "slot1_1_State" not in p.ad and "slot1_1_State" not in s.slot("slot1_2").ad


NON_DESKTOP = (STATIC + "use FEATURE : POLICY_EXPR_FRAGMENTS\nSLOTS_CONNECTED_TO_KEYBOARD = 1\n"
               "STARTD_ATTRS = IsDesktop\n"
               "START = ( ($(CPUIdle) || (State != \"Unclaimed\" && State != \"Owner\")) "
               "&& (IsDesktop =!= True || (KeyboardIdle > $(StartIdleTime))) )\n"
               "WANT_SUSPEND = ( $(SmallJob) || $(JustCpu) || $(IsVanilla) )\n"
               "WANT_VACATE  = ( $(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla) )\n"
               "SUSPEND = ( ((CpuBusyTime > 2 * $(MINUTE)) && ($(ActivationTimer) > 90)) "
               "|| ( IsDesktop =?= True && $(KeyboardBusy) ) )\n"
               "CONTINUE = ( $(CPUIdle) && ($(ActivityTimer) > 300) "
               "&& (IsDesktop =!= True || (KeyboardIdle > $(ContinueIdleTime))) )\n"
               "PREEMPT = ( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) "
               "|| (SUSPEND && (WANT_SUSPEND == False)) )\n"
               "MAXJOBRETIREMENTTIME = (IsDesktop =!= True) * 0\n"
               "MachineMaxVacateTime = 10 * $(MINUTE)\nKILL = False\n")


def test_non_desktop_policy_ignores_the_keyboard() -> None:
    """Examples, Desktop/Non-Desktop Policy: a dedicated machine keeps running jobs while someone types."""
    s = make_startd(NON_DESKTOP)
    run_job(s, "slot1", job(), 0)
    for t in (10, 100, 1000):
        tick(s, t, keyboard_idle=0)
    assert pair(s) == ("Claimed", "Busy")


def test_desktop_toggle_suspends_then_preempts() -> None:
    """Examples, Desktop/Non-Desktop Policy: with IsDesktop = True, typing suspends the vanilla job; after
    MaxSuspendTime it is preempted (no retirement on desktops) and vacated."""
    s = make_startd(NON_DESKTOP + "IsDesktop = True\n")
    tick(s, 100, keyboard_idle=100)
    assert not claim(s, "slot1", job(), 100)[0].accepted  # type: ignore[union-attr]
    tick(s, 2000, keyboard_idle=2000)
    run_job(s, "slot1", job(), 2000)
    tick(s, 2010, keyboard_idle=0)
    assert pair(s) == ("Claimed", "Suspended")
    tick(s, 2300, keyboard_idle=0)
    assert pair(s) == ("Claimed", "Suspended")
    tick(s, 2615, keyboard_idle=0)
    assert pair(s) == ("Preempting", "Vacating")


# ---------------------------------------------------------------------- slot ads
def test_slot_ad_has_every_attribute_the_policies_use() -> None:
    """Machine ClassAd attributes used by the manual's policies: state and activity with their entry
    times, JobStart, the load averages, keyboard and console idle, ClockMin/ClockDay,
    CpuBusyTime/CpuIsBusy, LastBenchmark/Mips/KFlops, SlotID, CurrentRank, RemoteOwner/RemoteUser
    and TotalTime<State><Activity>."""
    s = make_startd(STATIC + "CpuBusy = TotalLoadAvg > 0.5\nSLOTS_CONNECTED_TO_KEYBOARD = 1\n"
                    "SLOTS_CONNECTED_TO_CONSOLE = 1\nRANK = 7\n")
    s.handle(BenchmarksFinished(s.slot("slot1").name, mips=3000, kflops=800), 1)
    run_job(s, "slot1", job(), 10)
    tick(s, 20, load_avg=1.0, keyboard_idle=5, console_idle=7)
    tick(s, 30, load_avg=1.0, keyboard_idle=15, console_idle=17)
    ad = s.slot("slot1").ad
    assert (ad["State"], ad["Activity"], ad["EnteredCurrentState"], ad["EnteredCurrentActivity"]) == (
        "Claimed", "Busy", 10, 10)
    assert ad["JobStart"] == 10 and (ad["KeyboardIdle"], ad["ConsoleIdle"]) == (15, 17)
    assert (ad["LoadAvg"], ad["CondorLoadAvg"], ad["TotalLoadAvg"], ad["TotalCondorLoadAvg"]) == (1.0, 0.0, 1.0, 0.0)
    assert (ad["ClockMin"], ad["ClockDay"]) == (0, 4)  # 1970-01-01 00:00 UTC was a Thursday
    assert (ad["CpuIsBusy"], ad["CpuBusyTime"]) == (True, 10)  # busy since the poll at 20
    assert (ad["LastBenchmark"], ad["Mips"], ad["KFlops"], ad["SlotID"]) == (1, 3000, 800, 1)
    assert (ad["CurrentRank"], ad["RemoteOwner"], ad["RemoteUser"]) == (7, "alice@example.org", "alice@example.org")
    assert (ad["TotalTimeUnclaimedIdle"], ad["TotalTimeClaimedBusy"]) == (10, 20)
    tick(s, 40, load_avg=0.0)
    assert (ad["CpuIsBusy"], ad["CpuBusyTime"]) == (False, 0)


def _requirements(s: object, slot: str = "slot1") -> str:
    return repr(s.slot(slot).ad.lookup("Requirements"))  # type: ignore[attr-defined]


def test_requirements_as_advertised_in_each_state() -> None:
    """The START Expression / Matched and Preempting States (Reqexp.cpp): Owner, Unclaimed, Claimed and
    Backfill advertise ``START && WithinResourceLimits``; Matched, Preempting, a Claimed slot holding a
    preempting claim and Drained advertise False (or the draining START ``&& WithinResourceLimits``)."""
    normal, unavailable = "START && WithinResourceLimits", "false"
    s = make_startd(STATIC + "IS_OWNER = TotalLoadAvg > 1\nRANK = Owner == \"bob\"\nMaxJobRetirementTime = 100\n"
                    "MachineMaxVacateTime = 5\n")
    tick(s, 1, load_avg=2.0)
    assert pair(s) == ("Owner", "Idle") and _requirements(s) == normal
    tick(s, 2, load_avg=0.0)
    assert pair(s) == ("Unclaimed", "Idle") and _requirements(s) == normal
    s.handle(MatchNotification(s.slot("slot1").claim.id), 3)
    assert pair(s) == ("Matched", "Idle") and _requirements(s) == unavailable
    run_job(s, "slot1", job(), 4)
    assert pair(s) == ("Claimed", "Busy") and _requirements(s) == normal
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(Owner="bob")), 5)
    assert pair(s) == ("Claimed", "Retiring") and _requirements(s) == unavailable
    s.handle(Shutdown("fast"), 6)
    assert pair(s) == ("Preempting", "Killing") and _requirements(s) == unavailable
    b = make_startd(STATIC + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n")
    assert pair(b) == ("Backfill", "Idle") and _requirements(b) == normal
    d = make_startd(STATIC)
    d.handle(Drain(), 1)
    assert pair(d) == ("Drained", "Idle") and _requirements(d) == unavailable
    d = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 100\n", cpus=2)
    run_job(d, "slot2", job(), 0)  # an original job still retiring keeps the draining START
    d.handle(Drain(start_expr="TARGET.Interruptible =?= true"), 3)
    assert pair(d) == ("Drained", "Retiring") and _requirements(d) == normal
    assert repr(d.slot("slot1").ad.lookup("START")) == "TARGET.Interruptible is true"


# ---------------------------------------------------------------------- draining requests
def test_fast_drain_kills_and_charges_badput() -> None:
    """Draining, fast: neither retirement nor vacate time is honoured - the job is hard-killed and its run
    time charged as draining badput."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\n", cpus=2)
    run_job(s, "slot1", job(), 0)
    actions = s.handle(Drain(how_fast="fast"), 50)
    assert pair(s, "slot1") == ("Preempting", "Killing") and any(isinstance(a, HardKill) for a in actions)
    finish(s, "slot1", 51)
    tick(s, 52)
    assert pair(s, "slot1") == ("Drained", "Idle") and s.slot("slot1").ad["TotalMachineDrainingBadput"] == 50


def test_drain_requests_checks_and_completion_actions() -> None:
    """condor_drain: a check expression false on a slot refuses the drain; a second drain is refused
    (DRAINING_ALREADY_IN_PROGRESS); -cancel with another request id does nothing; on completion the
    startd exits, restarts or reconfigures; unclaimed time counts cores × seconds Unclaimed or Drained."""
    s = make_startd(STATIC + "NUM_SLOTS = 2\n", cpus=2)
    refused = [a for a in s.handle(Drain(check_expr="SlotID == 1"), 1) if isinstance(a, DrainReply)]
    assert not refused[0].accepted and "DRAINING_CHECK_EXPR_FAILED" in refused[0].reason and s.draining is None
    assert s.handle(Drain(request_id="7"), 10)[0] == DrainReply(True, "7")
    again = [a for a in s.handle(Drain(), 11) if isinstance(a, DrainReply)]
    assert not again[0].accepted and again[0].reason == "DRAINING_ALREADY_IN_PROGRESS"
    assert not [a for a in s.handle(CancelDrain("8"), 12) if isinstance(a, DrainReply)][0].accepted
    tick(s, 20)
    assert s.slot("slot1").ad["TotalMachineDrainingUnclaimedTime"] == 2 * 10
    for how in ("exit", "restart", "reconfig"):
        s = make_startd(STATIC)
        actions = s.handle(Drain(on_completion=how), 1)
        # only the exit is one the master must not undo (condor_drain -exit-on-completion)
        assert pair(s) == ("Drained", "Idle") and DaemonAction(how, no_restart=how == "exit") in actions


def test_static_slot_claim_is_refused_unless_willing_to_run() -> None:
    """Claims (the HTCondor manual's "Policy Configuration for Execution Points", "The Claimed State
    and Leases"; HTCondor's willingToRun): a static slot takes a claim only if START is true, the
    request fits its resources (WithinResourceLimits) and the request's own Requirements hold
    against the slot."""
    from htcpool.classad import ExprTree
    from htcpool.startd import ClaimReply
    from tests.startd.helpers import claim, job, make_startd

    static = "SLOT_TYPE_1 = 100%\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1_PARTITIONABLE = false\n"
    for request, words in ((job(RequestMemory=4096), "resources"),
                           (job(Requirements=ExprTree("TARGET.Memory > 100000")), "Requirements")):
        startd = make_startd(static, memory=1024)
        replies = [a for a in claim(startd, "slot1", request, 1.0) if isinstance(a, ClaimReply)]
        assert replies and not replies[0].accepted and words in replies[0].reason
        assert startd.slot("slot1").state.value == "Unclaimed"
    startd = make_startd(static, memory=1024)
    replies = [a for a in claim(startd, "slot1", job(Requirements=ExprTree("TARGET.Memory >= 1000")), 1.0)
               if isinstance(a, ClaimReply)]
    assert replies[0].accepted


def test_a_matched_slot_that_refuses_the_claim_goes_back_to_owner() -> None:
    """Matched State (the manual's "Policy Configuration for Execution Points"): a slot matched on an
    ad that was out of date refuses the claim when START is false for it, and gives the match up
    at once (8) rather than after MATCH_TIMEOUT; a match whose claim is taken is kept."""
    s = make_startd(STATIC + "START = Owner == \"alice\"\n")
    tick(s, 1, load_avg=0.0)
    s.handle(MatchNotification(s.slot("slot1").claim.id), 2)
    assert pair(s) == ("Matched", "Idle")
    refused = s.handle(RequestClaim(s.slot("slot1").claim.id, job(Owner="bob")), 3)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted
    assert numbers(s, "slot1")[-3:] == [6, 8, 1] and pair(s) == ("Unclaimed", "Idle")  # Owner, then START
    tick(s, 4, load_avg=0.0)
    s.handle(MatchNotification(s.slot("slot1").claim.id), 5)
    taken = s.handle(RequestClaim(s.slot("slot1").claim.id, job()), 6)
    assert isinstance(taken[0], ClaimReply) and taken[0].accepted and pair(s) == ("Claimed", "Idle")
