"""The pool's periodic policy (SYSTEM_PERIODIC_*), its order against the job's own expressions,
the codes and events it leaves, its timing, and the claims of the jobs it stops."""

from __future__ import annotations

from htcpool.protocol.startd import ReleaseClaim
from htcpool.schedd import JobStatus, settings_from_config
from htcpool.schedd.eventlog import ABORTED, HELD, RELEASED, format_event
from htcpool.schedd.periodic import PeriodicTiming, policy_interval
from tests.schedd.helpers import T0, run, schedd, submit, to_startd


def config(**knobs: str):
    return settings_from_config(lambda name: knobs.get(name))


def policy_schedd(**knobs: str):
    s = config(**knobs)
    return schedd(system_policy=s.system_policy, periodic_timing=s.periodic_timing,
                  system_max_releases=s.system_max_releases, problems=s.problems)


def test_a_system_hold_gives_code_26_with_the_knobs_reason_and_subcode_and_event_012() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="Big > 10",
                         SYSTEM_PERIODIC_HOLD_REASON='strcat("too big: ", Big)',
                         SYSTEM_PERIODIC_HOLD_SUBCODE="Big * 2")
    submit(core, "Big = 11", "Big = 3")
    core.handle_timer(T0 + 1)
    held = core.queue.jobs[(1, 0)]
    assert (held["JobStatus"], held["HoldReason"], held["HoldReasonCode"], held["HoldReasonSubCode"]) == \
        (JobStatus.HELD, "too big: 11", 26, 22)
    assert core.queue.status((1, 1)) == JobStatus.IDLE
    (event,) = [e for e, _ in core.take_log_events() if e.code == HELD]
    assert format_event(event).splitlines()[1:3] == ["\ttoo big: 11", "\tCode 26 Subcode 22"]


def test_without_a_reason_the_text_names_the_nameless_knob_and_the_expression() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD_NAMES="Named", SYSTEM_PERIODIC_HOLD_Named="Big > 10 ")
    submit(core, "Big = 11")
    core.handle_timer(T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert ad["HoldReason"] == "The system macro SYSTEM_PERIODIC_HOLD expression 'Big > 10' evaluated to TRUE"
    assert ad["HoldReasonSubCode"] == 0


def test_the_jobs_own_expression_decides_before_the_systems() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="true", SYSTEM_PERIODIC_HOLD_REASON='"system"')
    submit(core, 'PeriodicHold = true; PeriodicHoldReason = "mine"; PeriodicHoldSubCode = 7')
    core.handle_timer(T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert (ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == ("mine", 3, 7)


def test_named_expressions_come_before_the_nameless_one_each_with_its_own_reason() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD_NAMES="first, second",
                         SYSTEM_PERIODIC_HOLD_first="A == 1", SYSTEM_PERIODIC_HOLD_first_REASON='"first"',
                         SYSTEM_PERIODIC_HOLD_second="B == 1", SYSTEM_PERIODIC_HOLD_second_REASON='"second"',
                         SYSTEM_PERIODIC_HOLD="true", SYSTEM_PERIODIC_HOLD_REASON='"nameless"')
    submit(core, "A = 1; B = 1", "A = 0; B = 1", "A = 0; B = 0")
    core.handle_timer(T0 + 1)
    assert [core.queue.jobs[(1, p)]["HoldReason"] for p in range(3)] == ["first", "second", "nameless"]


def test_a_system_release_then_a_system_remove_with_events_013_and_009() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_RELEASE="HoldReasonCode == 26 && NumHolds < 2",
                         SYSTEM_PERIODIC_HOLD="Flag =?= true",
                         SYSTEM_PERIODIC_REMOVE="NumHolds >= 2", SYSTEM_PERIODIC_REMOVE_REASON='"held twice"')
    submit(core, "Flag = true")
    core.handle_timer(T0 + 1)  # held (NumHolds 1)
    core.handle_timer(T0 + 61)  # released
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    core.handle_timer(T0 + 121)  # held again (NumHolds 2): no release, and the remove fires next
    core.handle_timer(T0 + 181)
    assert (1, 0) not in core.queue.jobs
    codes = [e.code for e, _ in core.take_log_events()]
    assert codes[1:] == [HELD, RELEASED, HELD, ABORTED]
    history = core.queue.store.history  # type: ignore[attr-defined]
    assert history[-1]["RemoveReason"] == "held twice"


def test_a_job_held_by_its_owner_is_not_released_by_the_system() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_RELEASE="true")
    submit(core, "")
    core.queue.hold((1, 0), "alice", T0)
    core.handle_timer(T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.HELD


def test_holding_a_running_job_releases_its_claim() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="JobStatus == 2")
    submit(core, "")
    run(core, (1, 0))
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    out = core.handle_timer(T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.HELD
    assert ReleaseClaim("c1") in to_startd(out)
    assert core.queue.jobs[(1, 0)]["HoldReasonCode"] == 26


def test_a_system_vacate_sends_a_running_job_back_to_idle_and_frees_the_slot() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_VACATE="JobStatus == 2 && NumJobStarts < 2")
    submit(core, "")
    run(core, (1, 0))
    out = core.handle_timer(T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    assert ReleaseClaim("c1") in to_startd(out)
    assert "c1" not in core.claims.claims


def test_a_removed_running_job_releases_its_claim() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_REMOVE="JobStatus == 2")
    submit(core, "")
    run(core, (1, 0))
    out = core.handle_timer(T0 + 1)
    assert (1, 0) not in core.queue.jobs
    assert ReleaseClaim("c1") in to_startd(out)


def test_the_system_policy_also_decides_at_job_exit() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="ExitCode =?= 3")
    submit(core, "")
    core.queue.start((1, 0), T0)
    core.queue.finish((1, 0), T0 + 5, exit_code=3)
    assert core.queue.jobs[(1, 0)]["HoldReasonCode"] == 26


def test_periodic_expr_interval_sets_the_pace_and_zero_turns_the_policy_off() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="time() > 1000030", PERIODIC_EXPR_INTERVAL="20")
    submit(core, "")
    core.handle_timer(T0 + 1)
    assert core.queue.next_deadline(T0 + 1) == T0 + 21
    core.handle_timer(T0 + 41)
    assert core.queue.status((1, 0)) == JobStatus.HELD
    off = policy_schedd(SYSTEM_PERIODIC_HOLD="true", PERIODIC_EXPR_INTERVAL="0")
    submit(off, "PeriodicHold = true")
    off.handle_timer(T0 + 1)
    assert off.queue.status((1, 0)) == JobStatus.IDLE


def test_the_timeslice_stretches_the_interval_by_the_measured_cost() -> None:
    timing = PeriodicTiming(interval=60, max_interval=1200, timeslice=0.01)
    assert policy_interval(timing) == 60
    assert policy_interval(timing, cost=0.1) == 60
    assert policy_interval(timing, cost=1.0) == 100  # 1 s is 1 % of 100 s
    assert policy_interval(timing, cost=30.0) == 1200  # never past MAX_PERIODIC_EXPR_INTERVAL
    core = policy_schedd(SYSTEM_PERIODIC_HOLD="true", SCHEDD_INTERVAL="600")
    core.note_periodic_cost(2.0)  # the driver measured the last pass: 2 s
    core.handle_timer(T0 + 1)
    submit(core, "")
    assert core.queue.next_deadline(T0 + 1) == T0 + 61  # the cron and deferral work keeps its pace
    core.handle_timer(T0 + 61)
    assert core.queue.status((1, 0)) == JobStatus.IDLE  # the policy is next due at T0 + 201
    core.handle_timer(T0 + 201)
    assert core.queue.status((1, 0)) == JobStatus.HELD


def test_bad_expressions_are_reported_with_their_knob_and_left_out() -> None:
    s = config(SYSTEM_PERIODIC_HOLD="JobStatus == == 5", SYSTEM_PERIODIC_REMOVE_REASON="(((",
               SYSTEM_PERIODIC_REMOVE="true", PERIODIC_EXPR_INTERVAL="often", SYSTEM_PERIODIC_RELEASE="false")
    assert s.system_policy.hold == [] and s.system_policy.release == []
    assert [r.reason for r in s.system_policy.remove] == [None]
    assert [p.split(":")[0] for p in s.problems] == ["SYSTEM_PERIODIC_HOLD", "SYSTEM_PERIODIC_REMOVE_REASON",
                                                     "PERIODIC_EXPR_INTERVAL"]
    assert s.periodic_timing.interval == 60
    core = schedd(system_policy=s.system_policy, problems=s.problems)
    submit(core, "")
    core.handle_timer(T0 + 1)  # the schedd runs on with what it could read
    assert (1, 0) not in core.queue.jobs
    assert core.configuration_problems() == s.problems


def test_a_policy_expression_that_errors_for_one_job_does_not_fire() -> None:
    core = policy_schedd(SYSTEM_PERIODIC_HOLD='Big > 10', SYSTEM_PERIODIC_HOLD_SUBCODE='"not a number"')
    submit(core, 'Big = "text"', "Big = 20")
    core.handle_timer(T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    assert core.queue.jobs[(1, 1)]["HoldReasonSubCode"] == 0


def test_a_job_held_while_its_claim_is_requested_keeps_the_request_until_the_startd_answers() -> None:
    from htcpool.protocol.startd import ClaimReply
    from tests.schedd.helpers import match

    core = policy_schedd(SYSTEM_PERIODIC_HOLD="Flag =?= true")
    submit(core, "Flag = true")
    match(core, (1, 0))  # RequestClaim sent, no answer yet
    core.handle_timer(T0 + 1)  # the hold must not break the timer
    assert core.queue.status((1, 0)) == JobStatus.HELD
    out = core.handle(ClaimReply("c1", True, slot="slot1_1@ep"), T0 + 2)
    assert ReleaseClaim("c1") in to_startd(out)  # nothing left to run on it
