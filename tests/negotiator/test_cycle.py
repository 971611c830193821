"""The negotiation cycle without groups, after the HTCondor manual's "User Priorities and
Negotiation" (its "Effective User Priority (EUP)", "Negotiation" and "The Layperson's Description of
the Pie Spin and Pie Slice") and "Job Priority" in "Job Scheduling"."""

from __future__ import annotations

from htcpool.negotiator import Accountant, NegotiatorPolicy, PreemptState, negotiate
from tests.negotiator.helpers import START, count_by, job, many_jobs, slot, submitters


def _accountant(prios: dict[str, float]) -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    for name, p in prios.items():
        acct.set_priority(name, p)
        acct.set_priority_factor(name, 1)
    return acct


def test_eup_5_10_20_share_4_2_1() -> None:
    """EUP: EUP 5 gets twice what EUP 10 gets and four times what EUP 20 gets."""
    acct = _accountant({"a@d": 5, "b@d": 10, "c@d": 20})
    slots = [slot(f"slot{i}@m") for i in range(70)]
    subs = submitters(slots, {n: many_jobs(100, i + 1) for i, n in enumerate(["c@d", "b@d", "a@d"])})
    out = negotiate(START, slots, subs, acct)
    assert count_by(out.result.matches) == {"a@d": 40, "b@d": 20, "c@d": 10}
    assert out.shares["a@d"] == 4 / 7
    assert out.stats.matches == 70
    assert acct.weighted_usage("a@d") == 40  # charged at once


def test_unused_share_is_repartitioned_by_the_pie_spin() -> None:
    """EUP and the pie spin: what A cannot use is spun out again to the others by the inverse
    ratio."""
    acct = _accountant({"a@d": 5, "b@d": 10, "c@d": 20})
    slots = [slot(f"slot{i}@m") for i in range(70)]
    subs = submitters(slots, {"a@d": many_jobs(5, 1), "b@d": many_jobs(100, 2), "c@d": many_jobs(100, 3)})
    out = negotiate(START, slots, subs, acct)
    got = count_by(out.result.matches)
    assert got["a@d"] == 5 and sum(got.values()) == 70
    assert got["b@d"] > got["c@d"] >= 10
    assert out.stats.pie_spins >= 2


def test_jobs_in_priority_order_and_unmatchable_do_not_block() -> None:
    """Job Priority: higher JobPrio first; an unmatchable prio-10 job does not block prio-9 jobs."""
    slots = [slot(f"s{i}@m") for i in range(2)]
    jobs = [
        job(1, 0, JobPrio=10, RequestMemory=999999),
        job(2, 0, JobPrio=9),
        job(3, 0, JobPrio=5),
        job(4, 0, JobPrio=9),
    ]
    out = negotiate(START, slots, submitters(slots, {"u@d": jobs}), _accountant({}))
    assert [m.job for m in out.result.matches] == [(2, 0), (4, 0)]
    assert out.result.rejections[0].job == (1, 0)


def test_cluster_skipping_and_negotiate_all_jobs_in_cluster() -> None:
    """Negotiation: after one job of an autocluster fails, its siblings are skipped; the knob
    disables it."""
    slots = [slot("s@m")]
    jobs = [job(1, p, RequestMemory=2048) for p in range(50)]
    out = negotiate(START, slots, submitters(slots, {"u@d": jobs}), _accountant({}))
    assert out.stats.rejections == 1 and out.stats.num_jobs_considered == 1
    out = negotiate(START, slots, submitters(slots, {"u@d": jobs}, all_jobs=True), _accountant({}))
    assert out.stats.rejections == 50


def test_identical_job_shapes_are_evaluated_once() -> None:
    """Autoclusters: 1,000 identical jobs over 100 identical slots cost one requirements test."""
    from htcpool.negotiator.cycle import NegotiationCycle

    slots = [slot(f"s{i}@m") for i in range(100)]
    subs = submitters(slots, {"u@d": many_jobs(1000)})
    cyc = NegotiationCycle(START, _accountant({}), NegotiatorPolicy(), None, lambda: 0.0)
    cyc.run(cyc.prepare(slots, subs))
    assert len(cyc.result.matches) == 100
    assert cyc.matchmaker.evaluations == 1


def test_rank_orders_candidates_and_ties_go_to_input_order() -> None:
    """Negotiation: candidates sorted by pre-job rank, job RANK, post-job rank; ties by input
    order."""
    slots = [slot("small@m", Memory=1024), slot("big@m", Memory=8192), slot("big2@m", Memory=8192)]
    pol = NegotiatorPolicy(pre_job_rank="0", post_job_rank="0")
    out = negotiate(START, slots, submitters(slots, {"u@d": [job(1, Rank="=TARGET.Memory")]}, pol),
                    _accountant({}), pol)
    assert out.result.matches[0].slot == "big@m"
    out = negotiate(START, slots, submitters(slots, {"u@d": [job(1)]}, pol), _accountant({}), pol)
    assert out.result.matches[0].slot == "small@m"


def test_default_pre_job_rank_prefers_smallest_fitting_slot() -> None:
    """NEGOTIATOR_PRE_JOB_RANK default: − 100000·Cpus − Memory packs jobs onto small slots first."""
    slots = [slot("big@m", Cpus=8, Memory=16384), slot("small@m", Cpus=1, Memory=2048)]
    out = negotiate(START, slots, submitters(slots, {"u@d": [job(1)]}), _accountant({}))
    assert out.result.matches[0].slot == "small@m"


def test_claimed_idle_slots_are_skipped() -> None:
    """Negotiation rule 2: a machine Claimed but not running a job is not a candidate."""
    idle = slot("ci@m", State="Claimed", Activity="Idle", RemoteUser="x@d", Rank=10)
    out = negotiate(START, [idle], submitters([idle], {"u@d": [job(1)]}), _accountant({}))
    assert out.result.matches == []


def test_nice_user_runs_only_on_slots_nobody_else_wants() -> None:
    """EUP, nice users: NICE_USER_PRIO_FACTOR makes their share tiny; they get leftovers only."""
    acct = Accountant()
    acct.update_priorities(START)
    slots = [slot(f"s{i}@m") for i in range(10)]
    subs = submitters(slots, {"nice-user.bob@d": many_jobs(20, 1), "alice@d": many_jobs(7, 2)})
    out = negotiate(START, slots, subs, acct)
    got = count_by(out.result.matches)
    assert got == {"alice@d": 7, "nice-user.bob@d": 3}
    assert [m.submitter for m in out.result.matches[:7]] == ["alice@d"] * 7
    busy = negotiate(START, slots, submitters(slots, {"nice-user.bob@d": many_jobs(20, 1),
                                                      "alice@d": many_jobs(20, 2)}), Accountant())
    assert count_by(busy.result.matches).get("nice-user.bob@d", 0) == 0


def test_rank_preemption() -> None:
    """Negotiation: a claimed machine whose RANK prefers the job is a candidate by reason of
    Rank."""
    busy = [slot("s@m", State="Claimed", Activity="Busy", RemoteUser="x@d", CurrentRank=0,
                 Rank='=TARGET.Department == "physics"')]
    out = negotiate(START, busy, submitters(busy, {"u@d": [job(1, Department="physics")]}), _accountant({}))
    assert out.result.matches[0].reason is PreemptState.RANK
    assert out.result.matches[0].preempted_user == "x@d"
    out = negotiate(START, busy, submitters(busy, {"u@d": [job(1, Department="bio")]}), _accountant({}))
    assert out.result.matches == []


def test_cycle_statistics() -> None:
    """5.5 of the reference: the cycle publishes its counts as LastNegotiationCycle*0."""
    from htcpool.negotiator import CycleStatsHistory

    slots = [slot(f"s{i}@m") for i in range(3)]
    ticks = iter(range(100))
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(5), "v@d": many_jobs(1, 9)}),
                    _accountant({}), timer=lambda: float(next(ticks)))
    hist = CycleStatsHistory(3)
    hist.record(out.stats)
    attrs = hist.attributes()
    assert attrs["LastNegotiationCycleMatches0"] == 3
    assert attrs["LastNegotiationCycleTotalSlots0"] == 3
    assert attrs["LastNegotiationCycleActiveSubmitterCount0"] == 2
    assert attrs["LastNegotiationCycleNumIdleJobs0"] == 6
    assert attrs["LastNegotiationCycleDuration0"] > 0
    assert attrs["LastNegotiationCyclePieSpins0"] >= 1


def test_phase3_is_the_submitter_sort_measured_by_the_injected_timer() -> None:
    """``publishNegotiationCycleStats``: Phase3Duration is the time spent sorting submitters,
    Phase4Duration the rest of matching; both come from the injected timer (here one tick per
    reading)."""
    slots = [slot(f"s{i}@m") for i in range(3)]
    ticks = iter(range(1000))
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(5), "v@d": many_jobs(1, 9)}),
                    _accountant({}), timer=lambda: float(next(ticks)))
    spins_sorted = out.stats.pies  # one sort per pie, on its first spin
    assert out.stats.phase3_duration == spins_sorted  # each sort read the timer twice: 1 tick
    attrs = out.stats.attributes(0)
    assert attrs["LastNegotiationCyclePhase3Duration0"] == spins_sorted
    assert out.stats.phase4_duration > 0
    assert out.stats.phase1_duration + out.stats.phase2_duration + out.stats.phase3_duration \
        + out.stats.phase4_duration <= out.stats.duration


def test_submitter_ceiling_caps_matches() -> None:
    """``negotiateWithGroup``: a submitter's Ceiling caps its weighted usage (headroom is the
    ceiling less its usage); −1 means none."""
    slots = [slot(f"s{i}@m") for i in range(10)]
    acct = _accountant({})
    acct.set_ceiling("u@d", 3)
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(10)}), acct)
    assert len(out.result.matches) == 3
    acct = _accountant({})
    acct.set_ceiling("u@d", -1)
    assert len(negotiate(START, slots, submitters(slots, {"u@d": many_jobs(10)}), acct).result.matches) == 10


def test_submitter_floor_runs_a_floor_round_first() -> None:
    """``findBelowFloorSubmitters`` and ``negotiateWithGroup``: a submitter below its Floor
    negotiates first, in a floor round capped by the floor, whatever its priority; without the floor
    it gets only its small share."""
    slots = [slot(f"s{i}@m") for i in range(6)]
    jobs = {"good@d": many_jobs(10, 1), "poor@d": many_jobs(10, 2)}
    got = count_by(negotiate(START, slots, submitters(slots, jobs), _accountant({"good@d": 1, "poor@d": 1000})).result.matches)
    assert got.get("poor@d", 0) < 3
    acct = _accountant({"good@d": 1, "poor@d": 1000})
    acct.set_floor("poor@d", 3)
    out = negotiate(START, slots, submitters(slots, jobs), acct)
    assert count_by(out.result.matches)["poor@d"] >= 3
    assert [m.submitter for m in out.result.matches[:3]] == ["poor@d"] * 3


def test_time_limits_use_the_injected_timer() -> None:
    """``negotiateWithGroup``'s time limits: a session ends at min(PIESPIN, what is left of the
    cycle's, the submitter's and the schedd's time); a submitter whose time is spent is done and
    listed in SubmittersOutOfTime. Here every timer reading advances one second."""
    slots = [slot(f"s{i}@m") for i in range(100)]

    def run(**limits: float) -> tuple[int, list[str], int]:
        clock = iter(range(100000))
        unlimited = {"max_time_per_submitter": 1e9, "max_time_per_schedd": 1e9, "max_time_per_piespin": 1e9}
        pol = NegotiatorPolicy(**{**unlimited, **limits})  # type: ignore[arg-type]
        out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(100)}), _accountant({}), pol,
                        timer=lambda: float(next(clock)))
        return len(out.result.matches), out.stats.submitters_out_of_time, out.stats.pie_spins

    assert run() == (100, [], 1)
    n, late, _ = run(max_time_per_submitter=10)
    assert n < 15 and late == ["u@d"]
    n, late, spins = run(max_time_per_piespin=5)
    assert n == 100 and late == [] and spins >= 20  # each session is cut short; the pie spins on
    n, _, _ = run(max_time_per_cycle=8)
    assert n < 8


def test_time_limits_are_checked_before_the_ceiling() -> None:
    """``negotiateWithGroup``: the outcome is the first rule that applies, and a spent submitter
    time (rule 2) comes before a spent ceiling (rule 6), so the submitter is listed out of time."""
    slots = [slot("s@m")]
    acct = _accountant({})
    acct.set_ceiling("u@d", 0)
    pol = NegotiatorPolicy(max_time_per_submitter=0)
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(1)}), acct, pol)
    assert out.result.matches == [] and out.stats.submitters_out_of_time == ["u@d"]


def test_taken_slot_classes_cost_no_evaluation() -> None:
    """``matchmakingAlgorithm``: only available slots are candidates. Once every slot of a class is
    taken, later requests do not evaluate it: five new job shapes after the pool is full are
    rejected ("no match found") without one more requirements test."""
    from htcpool.negotiator.cycle import NegotiationCycle

    slots = [slot(f"s{i}@m") for i in range(10)]
    jobs = {"u@d": many_jobs(10, 1), "v@d": [job(2 + k, 0, RequestMemory=100 + k) for k in range(5)]}
    cyc = NegotiationCycle(START, _accountant({}), NegotiatorPolicy(ignore_user_priorities=True), None, lambda: 0.0)
    cyc.run(cyc.prepare(slots, submitters(slots, jobs)))
    assert count_by(cyc.result.matches) == {"u@d": 10}
    assert [r.reason for r in cyc.result.rejections] == ["no match found"] * 5
    assert cyc.matchmaker.evaluations == 1


def test_requirements_results_are_shared_by_what_they_read() -> None:
    """``matchmakingAlgorithm`` (``IsAMatch`` reads only what the two Requirements reference):
    autoclusters that differ only in attributes neither Requirements reads (here RequestDisk) share
    one test per slot class; those that differ in what is read (RequestMemory) are tested apart,
    with their own outcome."""
    from htcpool.negotiator.cycle import NegotiationCycle

    slots = [slot(f"s{i}@m") for i in range(10)]  # 1024 MB each
    disk = {"u@d": [job(1 + k, 0, RequestDisk=1000 + k) for k in range(5)]}
    cyc = NegotiationCycle(START, _accountant({}), NegotiatorPolicy(ignore_user_priorities=True), None, lambda: 0.0)
    cyc.run(cyc.prepare(slots, submitters(slots, disk)))
    assert len(cyc.result.matches) == 5 and cyc.matchmaker.evaluations == 1
    memory = {"u@d": [job(1, 0, RequestMemory=512), job(2, 0, RequestMemory=2048), job(3, 0, RequestMemory=512)]}
    cyc = NegotiationCycle(START, _accountant({}), NegotiatorPolicy(ignore_user_priorities=True), None, lambda: 0.0)
    cyc.run(cyc.prepare(slots, submitters(slots, memory)))
    assert [m.job for m in cyc.result.matches] == [(1, 0), (3, 0)]
    assert [r.job for r in cyc.result.rejections] == [(2, 0)]
    assert cyc.matchmaker.evaluations == 2
