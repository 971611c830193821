"""Preemption and partitionable slots: the HTCondor manual's "Negotiation" and "The Layperson's
Description of the Pie Spin and Pie Slice" (in "User Priorities and Negotiation"), "Priorities and
Preemption" (in "Job Scheduling"), and the partitionable-slot sections of "Policy Configuration for
Execution Points" (pslot preemption, consumption policies)."""

from __future__ import annotations

from htcpool.negotiator import (
    Accountant,
    AccountantPolicy,
    NegotiatorPolicy,
    PreemptState,
    negotiate,
)
from tests.negotiator.helpers import START, claimed, count_by, job, many_jobs, slot, submitters

TWENTY_PERCENT = NegotiatorPolicy(preemption_requirements="RemoteUserPrio > SubmitterUserPrio * 1.2")


def _acct(prios: dict[str, float]) -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    for name, p in prios.items():
        acct.set_priority(name, p)
        acct.set_priority_factor(name, 1)
    return acct


def test_preemption_requires_20_percent_better_priority() -> None:
    """The pie spin: "the user must have a 20% better priority in order for preemption to
    succeed"."""
    busy = [claimed(f"s{i}@m", "bob@d") for i in range(4)]
    subs = submitters(busy, {"alice@d": many_jobs(10), "bob@d": []}, TWENTY_PERCENT, running={"bob@d": 4})
    out = negotiate(START, busy, subs, _acct({"alice@d": 5, "bob@d": 10}), TWENTY_PERCENT)
    # bob has no idle jobs, so after spin 1 (her 2/3 slice) the pie is re-spun without him
    assert [m.reason for m in out.result.matches] == [PreemptState.PRIO] * 4
    assert out.stats.pie_spins == 2 and out.result.shares["alice@d"].limit == 4 * 2 / 3
    assert {m.preempted_user for m in out.result.matches} == {"bob@d"}
    out = negotiate(START, busy, subs, _acct({"alice@d": 9, "bob@d": 10}), TWENTY_PERCENT)
    assert out.result.matches == []
    assert out.result.rejections[0].reason == "PREEMPTION_REQUIREMENTS == False"


def test_default_policy_never_preempts_by_priority() -> None:
    """PREEMPTION_REQUIREMENTS defaults to False: priority preemption is off."""
    busy = [claimed("s@m", "bob@d")]
    out = negotiate(START, busy, submitters(busy, {"alice@d": many_jobs(1)}), _acct({"alice@d": 0.5, "bob@d": 100}))
    assert out.result.matches == []


def test_no_preemption_of_the_submitters_own_slots() -> None:
    """``matchmakingAlgorithm``: a slot running the same submitter's job is not a priority
    candidate."""
    busy = [claimed("s@m", "alice@d")]
    pol = NegotiatorPolicy(preemption_requirements="True")
    out = negotiate(START, busy, submitters(busy, {"alice@d": many_jobs(1)}, pol), _acct({}), pol)
    assert out.result.matches == []


def test_rank_preemption_beats_priority_preemption() -> None:
    """Negotiation: with equal ranks, reason Rank sorts before reason Priority."""
    pol = NegotiatorPolicy(preemption_requirements="True", pre_job_rank="0", post_job_rank="0")
    slots = [
        claimed("prio@m", "bob@d"),
        claimed("rank@m", "bob@d", Rank='=TARGET.Department == "physics"'),
    ]
    out = negotiate(START, slots, submitters(slots, {"alice@d": [job(1, Department="physics")]}, pol),
                    _acct({"bob@d": 50}), pol)
    assert [(m.slot, m.reason) for m in out.result.matches] == [("rank@m", PreemptState.RANK)]


def test_unclaimed_slot_beats_preemption() -> None:
    """Negotiation: No Preemption sorts first."""
    pol = NegotiatorPolicy(preemption_requirements="True", pre_job_rank="0", post_job_rank="0")
    slots = [claimed("busy@m", "bob@d"), slot("free@m")]
    out = negotiate(START, slots, submitters(slots, {"alice@d": [job(1)]}, pol), _acct({"bob@d": 50}), pol)
    assert [(m.slot, m.reason) for m in out.result.matches] == [("free@m", PreemptState.NONE)]


def test_retirement_and_early_preemption() -> None:
    """NEGOTIATOR_CONSIDER_EARLY_PREEMPTION: slots with retirement time left are not considered."""
    busy = [claimed("s@m", "bob@d", RetirementTimeRemaining=600)]
    pol = NegotiatorPolicy(preemption_requirements="True")
    subs = submitters(busy, {"alice@d": [job(1)]}, pol)
    assert negotiate(START, busy, subs, _acct({"bob@d": 50}), pol).result.matches == []
    early = NegotiatorPolicy(preemption_requirements="True", consider_early_preemption=True)
    assert len(negotiate(START, busy, subs, _acct({"bob@d": 50}), early).result.matches) == 1


def _pslot(name: str, cpus: int, children: list[str], **attrs: object) -> object:
    from htcpool.classad import ExprTree

    ad = slot(name, Cpus=cpus, Memory=cpus * 1024, PartitionableSlot=True, SlotType="Partitionable",
              **attrs)  # type: ignore[arg-type]
    ad["Requirements"] = ExprTree("START && TARGET.RequestCpus <= Cpus && TARGET.RequestMemory <= Memory")
    ad["ChildName"] = children
    ad["NumDynamicSlots"] = len(children)
    return ad


def test_pslot_preemption_frees_dynamic_slots_for_a_big_job() -> None:
    """ALLOW_PSLOT_PREEMPTION: the d-slots' resources are added, lowest CurrentRank first, until the
    big job fits; d-slots with retirement time left are never taken."""
    pol = NegotiatorPolicy(preemption_requirements="True", allow_pslot_preemption=True)
    d1 = claimed("slot1_1@m", "bob@d", Cpus=4, Memory=4096, DynamicSlot=True, CurrentRank=5)
    d2 = claimed("slot1_2@m", "bob@d", Cpus=4, Memory=4096, DynamicSlot=True, CurrentRank=0)
    p = _pslot("slot1@m", 0, ["slot1_1@m", "slot1_2@m"], Rank=10)
    big = [job(1, RequestCpus=8, RequestMemory=8000)]
    slots = [p, d1, d2]
    out = negotiate(START, slots, submitters(slots, {"alice@d": big}, pol), _acct({"bob@d": 50}), pol)  # type: ignore[list-item]
    assert len(out.result.matches) == 1
    m = out.result.matches[0]
    assert m.slot == "slot1@m" and set(m.preempted_dslots) == {"slot1_1@m", "slot1_2@m"}
    assert m.reason is PreemptState.RANK  # both d-slots rank below the p-slot's RANK of the job
    assert m.preempted_dslots[0] == "slot1_2@m"  # lower CurrentRank first
    assert out.slot_ads == {"slot1@m": p, "slot1_1@m": d1, "slot1_2@m": d2}  # the collector's ads, by name
    small = [job(1, RequestCpus=4, RequestMemory=4000)]
    out = negotiate(START, slots, submitters(slots, {"alice@d": small}, pol), _acct({"bob@d": 50}), pol)  # type: ignore[list-item]
    assert out.result.matches[0].preempted_dslots == ("slot1_2@m",)
    d2r = claimed("slot1_2@m", "bob@d", Cpus=4, Memory=4096, DynamicSlot=True, RetirementTimeRemaining=60)
    slots = [p, d1, d2r]
    out = negotiate(START, slots, submitters(slots, {"alice@d": big}, pol), _acct({"bob@d": 50}), pol)  # type: ignore[list-item]
    assert out.result.matches == []
    no = NegotiatorPolicy(preemption_requirements="True")
    out = negotiate(START, [p, d1, d2], submitters([p, d1, d2], {"alice@d": big}, no), _acct({"bob@d": 50}), no)  # type: ignore[list-item]
    assert out.result.matches == []


def _cp_pslot(name: str, cpus: int) -> object:
    from htcpool.classad import ExprTree

    ad = _pslot(name, cpus, [])
    ad["MachineResources"] = "Cpus Memory Disk"  # type: ignore[index]
    ad["ConsumptionCpus"] = ExprTree("TARGET.RequestCpus")  # type: ignore[index]
    ad["ConsumptionMemory"] = ExprTree("quantize(TARGET.RequestMemory,{128})")  # type: ignore[index]
    ad["ConsumptionDisk"] = ExprTree("quantize(TARGET.RequestDisk,{1024})")  # type: ignore[index]
    return ad


def test_consumption_policy_8_core_example() -> None:
    """Consumption policies: an 8-core p-slot with CONSUMPTION_CPUS = TARGET.RequestCpus and
    SLOT_WEIGHT = Cpus takes eight 1-core jobs in one cycle, each charged one core."""
    p = _cp_pslot("slot1@m", 8)
    acct = _acct({})
    out = negotiate(START, [p], submitters([p], {"u@d": many_jobs(12)}), acct)  # type: ignore[list-item]
    assert len(out.result.matches) == 8
    assert all(m.cost == 1 and dict(m.consumed)["Cpus"] == 1 for m in out.result.matches)
    assert acct.weighted_usage("u@d") == 8
    three = [job(1, p_, RequestCpus=3, RequestMemory=1024) for p_ in range(5)]
    out = negotiate(START, [p], submitters([p], {"u@d": three}), _acct({}))  # type: ignore[list-item]
    assert [dict(m.consumed)["Cpus"] for m in out.result.matches] == [3, 3]
    plain = _pslot("slot1@m", 8, [])
    out = negotiate(START, [plain], submitters([plain], {"u@d": many_jobs(12)}), _acct({}))  # type: ignore[list-item]
    assert len(out.result.matches) == 1  # without a policy: one match per p-slot per cycle


def test_static_and_consumption_slots_share_by_priority() -> None:
    """Shares are in weighted units: two users split two 8-core consumption p-slots 8 and 8."""
    slots = [_cp_pslot("a@m", 8), _cp_pslot("b@m", 8)]
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(20, 1), "v@d": many_jobs(20, 2)}),  # type: ignore[arg-type]
                    _acct({}))
    assert count_by(out.result.matches) == {"u@d": 8, "v@d": 8}


def test_slot_weight_policy_charges_memory() -> None:
    """SLOT_WEIGHT is the accountant's measure of a slot: here Memory in GB."""
    pol = NegotiatorPolicy(accountant=AccountantPolicy(slot_weight="Memory / 1024", force_negotiator_slot_weight=True))
    slots = [slot("s@m", Memory=4096)]
    acct = Accountant(pol.accountant)
    acct.update_priorities(START)
    out = negotiate(START, slots, submitters(slots, {"u@d": [job(1)]}, pol), acct, pol)
    assert out.result.matches[0].cost == 4


def test_remote_user_resources_in_use_is_live_within_the_cycle() -> None:
    """``addRemoteUserPrios``: RemoteUserResourcesInUse calls ResourcesInUseByUser(), evaluated
    live, so a match made earlier in the cycle counts. bob runs on 2 slots and is matched to the 2
    free ones first; alice may then preempt him, because he now uses 4 (> 3)."""
    pol = NegotiatorPolicy(preemption_requirements="RemoteUserResourcesInUse > 3", ignore_user_priorities=True)
    slots = [claimed("c1@m", "bob@d"), claimed("c2@m", "bob@d"), slot("f1@m"), slot("f2@m")]
    subs = submitters(slots, {"bob@d": many_jobs(2, 1), "alice@d": many_jobs(2, 2)}, pol, running={"bob@d": 2})
    out = negotiate(START, slots, subs, _acct({"bob@d": 1, "alice@d": 10}), pol)
    assert [(m.submitter, m.slot, m.reason) for m in out.result.matches] == [
        ("bob@d", "f1@m", PreemptState.NONE), ("bob@d", "f2@m", PreemptState.NONE),
        ("alice@d", "c1@m", PreemptState.PRIO), ("alice@d", "c2@m", PreemptState.PRIO),
    ]
    # before bob's matches he used 2: with only his running slots, alice may not preempt
    out = negotiate(START, slots[:2], submitters(slots[:2], {"alice@d": many_jobs(2, 2)}, pol),
                    _acct({"bob@d": 1, "alice@d": 10}), pol)
    assert out.result.matches == []


def _five_of_bobs(**extra: object) -> list:
    return [claimed(f"c{i}@m", "bob@d", SlotID=i, **extra) for i in range(1, 6)]  # type: ignore[arg-type]


def test_preemption_requirements_stable_false_rechecks_the_cached_head() -> None:
    """The match-list cache: with PREEMPTION_REQUIREMENTS_STABLE (default true) the match list built
    for alice's first job stays valid, so all five preemptions go through although the policy only
    allows them while she uses fewer than 2 slots; with it false, the head is re-checked with her
    live SubmitterUserResourcesInUse and the third job finds nothing."""
    text = "TARGET.SubmitterUserResourcesInUse < 2"
    slots = _five_of_bobs()
    for stable, expected in ((True, 5), (False, 2)):
        pol = NegotiatorPolicy(preemption_requirements=text, preemption_requirements_stable=stable,
                               ignore_user_priorities=True)
        out = negotiate(START, slots, submitters(slots, {"alice@d": many_jobs(5)}, pol),
                        _acct({"bob@d": 10}), pol)
        assert len(out.result.matches) == expected
        assert all(m.reason is PreemptState.PRIO for m in out.result.matches)


def test_preemption_rank_stable_false_resorts_when_the_head_rank_changed() -> None:
    """The match-list cache: with PREEMPTION_RANK_STABLE false a preempting head whose
    PREEMPTION_RANK changed invalidates the list and the job gets a fresh scan; with both knobs
    false, every job does. Here the rank turns from SlotID to −SlotID after alice's first match."""
    slots = _five_of_bobs()[:3]
    rank = "ifThenElse(TARGET.SubmitterUserResourcesInUse < 1, SlotID, -SlotID)"
    got = {}
    for preq_stable, prank_stable in ((True, True), (True, False), (False, False)):
        pol = NegotiatorPolicy(preemption_requirements="True", preemption_rank=rank, pre_job_rank="0",
                               post_job_rank="0", ignore_user_priorities=True,
                               preemption_requirements_stable=preq_stable, preemption_rank_stable=prank_stable)
        out = negotiate(START, slots, submitters(slots, {"alice@d": many_jobs(3)}, pol), _acct({"bob@d": 10}), pol)
        got[(preq_stable, prank_stable)] = [m.slot for m in out.result.matches]
    assert got[(True, True)] == ["c3@m", "c2@m", "c1@m"]
    assert got[(True, False)] == ["c3@m", "c1@m", "c2@m"]
    assert got[(False, False)] == ["c3@m", "c1@m", "c2@m"]
