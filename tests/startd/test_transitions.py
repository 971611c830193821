"""One test per numbered transition of the HTCondor manual's "Policy Configuration for Execution
Points" ("State and Activity Transitions"); each asserts the number recorded by the table."""

from __future__ import annotations

import pytest

from htcpool.protocol import How
from htcpool.startd import (
    Activity,
    Alive,
    BackfillClientExited,
    BackfillClientStarted,
    BenchmarksFinished,
    CancelDrain,
    ClaimReply,
    Drain,
    Event,
    FinalJobUpdate,
    HardKill,
    IllegalTransition,
    KillStarterFamily,
    MatchNotification,
    ReleaseClaim,
    RequestClaim,
    Shutdown,
    SoftKill,
    StartBackfillClient,
    State,
    Vacate,
    step,
)
from tests.startd.helpers import claim, finish, job, make_startd, numbers, pair, run_job, tick

DESKTOP = "use POLICY : Desktop\n"
NOBENCH = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"


def test_table_rejects_illegal_event_naming_event_and_state() -> None:
    """The manual's "State and Activity Transitions": only listed transitions exist."""
    with pytest.raises(IllegalTransition, match="ACTIVATE.*Owner/Idle"):
        step(State.OWNER, Activity.IDLE, Event.ACTIVATE)


def test_transition_01_owner_to_unclaimed_when_is_owner_false() -> None:
    """Owner State: IS_OWNER false -> Unclaimed (transition 1)."""
    s = make_startd(DESKTOP + NOBENCH)
    tick(s, 0, keyboard_idle=0)
    assert pair(s) == ("Owner", "Idle")  # the keyboard was just used
    tick(s, 1000, keyboard_idle=1000)
    assert pair(s) == ("Unclaimed", "Idle") and 1 in numbers(s)


def test_transition_02_unclaimed_to_owner_when_is_owner_true() -> None:
    """Unclaimed State: IS_OWNER (START =?= False) true -> Owner (transition 2)."""
    s = make_startd(DESKTOP + NOBENCH)
    tick(s, 1000, keyboard_idle=1000)
    tick(s, 1010, keyboard_idle=0)
    assert pair(s) == ("Owner", "Idle") and numbers(s)[-1] == 2


def test_transition_03_04_benchmarks() -> None:
    """Unclaimed State: RUNBENCHMARKS true -> Benchmarking (3), done -> Idle (4)."""
    s = make_startd("SLOT_TYPE_0_PARTITIONABLE = false\n")
    assert pair(s) == ("Unclaimed", "Benchmarking") and 3 in numbers(s)
    s.handle(BenchmarksFinished(s.slot("slot1").name, mips=5000, kflops=900), 30)
    assert pair(s) == ("Unclaimed", "Idle") and numbers(s)[-1] == 4
    ad = s.slot("slot1").ad
    assert ad["LastBenchmark"] == 30 and ad["Mips"] == 5000 and ad["KFlops"] == 900
    tick(s, 60)
    assert pair(s) == ("Unclaimed", "Idle")  # LastBenchmark == 0 no longer true


def test_transition_05_unclaimed_to_claimed_without_match() -> None:
    """Unclaimed State: the schedd claims before the match arrives (transition 5)."""
    s = make_startd(NOBENCH)
    claim(s, "slot1", job(), 10)
    assert pair(s) == ("Claimed", "Idle") and numbers(s)[-1] == 5


def test_transition_06_and_09_matched_then_claimed() -> None:
    """Unclaimed -> Matched (6) on the negotiator's match; Matched -> Claimed/Idle (9)."""
    s = make_startd(NOBENCH)
    claim(s, "slot1", job(), 10, match=True)
    assert numbers(s)[-2:] == [6, 9] and pair(s) == ("Claimed", "Idle")
    assert s.slot("slot1").ad["RemoteUser"] == "alice@example.org"


def test_transition_07_unclaimed_to_backfill() -> None:
    """Unclaimed State: START_BACKFILL true with backfill enabled (transition 7)."""
    s = make_startd(NOBENCH + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n")
    assert pair(s) == ("Backfill", "Idle") and 7 in numbers(s)


def test_transition_08_match_timeout() -> None:
    """Matched State: MATCH_TIMEOUT expires -> Owner (8), then Unclaimed again (1)."""
    s = make_startd(NOBENCH + "MATCH_TIMEOUT = 60\n")
    s.handle(MatchNotification(s.slot("slot1").claim.id), 10)
    assert s.next_deadline() == 70
    s.handle_timer(70)
    assert numbers(s)[-2:] == [8, 1] and pair(s) == ("Unclaimed", "Idle")


def test_transition_08_vacate_in_matched() -> None:
    """Matched State: condor_vacate while Matched -> Owner (8)."""
    s = make_startd(NOBENCH)
    s.handle(MatchNotification(s.slot("slot1").claim.id), 10)
    s.handle(Vacate(), 11)
    assert 8 in numbers(s)


def test_transition_10_claimed_idle_to_preempting_on_vacate() -> None:
    """Claimed State: condor_vacate with no job -> Preempting (10), then Owner (22)."""
    s = make_startd(NOBENCH)
    claim(s, "slot1", job(), 10)
    s.handle(Vacate(), 20)
    assert numbers(s)[-3:] == [10, 22, 1]


def test_transition_11_12_activate_and_finish() -> None:
    """Claimed/Idle -> Busy on activation (11); starter exits -> Idle (12)."""
    s = make_startd(NOBENCH)
    run_job(s, "slot1", job(), 10)
    assert pair(s) == ("Claimed", "Busy") and numbers(s)[-1] == 11
    finish(s, "slot1", 50)
    assert pair(s) == ("Claimed", "Idle") and numbers(s)[-1] == 12


def test_transition_13_18_preempt_retire_then_preempt() -> None:
    """Claimed/Busy: PREEMPT true -> Retiring (13); retirement expired -> Preempting (18)."""
    s = make_startd(NOBENCH + "PREEMPT = (time() - JobStart) > 100\nMaxJobRetirementTime = 150\n"
                    "MachineMaxVacateTime = 10\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 101)
    assert pair(s) == ("Claimed", "Retiring") and numbers(s)[-1] == 13
    tick(s, 150)
    assert pair(s) == ("Preempting", "Vacating") and numbers(s)[-1] == 18


def test_transition_14_15_suspend_and_continue() -> None:
    """Busy -> Suspended when WANT_SUSPEND and SUSPEND (14); CONTINUE -> Busy (15)."""
    s = make_startd(NOBENCH + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\nCONTINUE = TotalLoadAvg < 1\n")
    run_job(s, "slot1", job(), 0)
    actions = tick(s, 10, load_avg=3.0)
    assert pair(s) == ("Claimed", "Suspended") and numbers(s)[-1] == 14
    assert any(type(a).__name__ == "SuspendJob" for a in actions)
    actions = tick(s, 20, load_avg=0.0)
    assert pair(s) == ("Claimed", "Busy") and numbers(s)[-1] == 15
    assert any(type(a).__name__ == "ContinueJob" for a in actions)


def test_transition_16_suspended_preempt_to_retiring() -> None:
    """Suspended: PREEMPT true -> Retiring, irreversibly (16)."""
    s = make_startd(NOBENCH + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\nCONTINUE = false\n"
                    "PREEMPT = Activity == \"Suspended\" && (time() - EnteredCurrentActivity) > 30\n"
                    "MaxJobRetirementTime = 1000\nMachineMaxVacateTime = 5\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=3.0)
    tick(s, 50, load_avg=3.0)
    # Retiring at once suspends again (20) because SUSPEND still holds.
    assert numbers(s)[-2:] == [16, 20]
    assert s.slot("slot1").claim.may_unretire is False


def test_transition_17_suspended_retirement_expires() -> None:
    """Suspended in retirement whose MaxJobRetirementTime shrinks -> Preempting (17)."""
    s = make_startd(NOBENCH + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\nCONTINUE = false\n"
                    "MaxJobRetirementTime = ifThenElse(TotalLoadAvg > 5, 0, 10000)\nMachineMaxVacateTime = 5\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 5)  # irreversible retirement: Busy -> Retiring (13)
    tick(s, 10, load_avg=3.0)
    assert pair(s) == ("Claimed", "Suspended") and numbers(s)[-1] == 20
    tick(s, 20, load_avg=6.0)
    assert numbers(s)[-1] == 17 and pair(s)[0] == "Preempting"


def test_transition_19_unretire_when_preempting_claim_goes() -> None:
    """Retiring because of a preempting claim only; it goes away -> Busy (19)."""
    s = make_startd(NOBENCH + "RANK = Owner == \"bob\"\nMaxJobRetirementTime = 1000\n")
    run_job(s, "slot1", job(), 0)
    slot = s.slot("slot1")
    pre_id = slot.preempting_id
    s.handle(RequestClaim(pre_id, job(Owner="bob", User="bob@example.org")), 10)
    assert pair(s) == ("Claimed", "Retiring") and numbers(s)[-1] == 13
    s.handle(ReleaseClaim(pre_id), 20)
    assert pair(s) == ("Claimed", "Busy") and numbers(s)[-1] == 19


def test_transition_20_retiring_to_suspended() -> None:
    """Retiring -> Suspended when WANT_SUSPEND and SUSPEND (20)."""
    s = make_startd(NOBENCH + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\nMaxJobRetirementTime = 1000\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 5)
    tick(s, 10, load_avg=3.0)
    assert numbers(s)[-1] == 20


def test_transition_21_kill_true_while_vacating() -> None:
    """Preempting/Vacating: KILL true -> Killing (21) with a hard kill."""
    s = make_startd(NOBENCH + "KILL = (time() - EnteredCurrentActivity) > 30\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 10)
    assert pair(s) == ("Preempting", "Vacating")
    actions = tick(s, 50)
    assert numbers(s)[-1] == 21 and pair(s) == ("Preempting", "Killing")
    assert any(isinstance(a, HardKill) for a in actions)


def test_transition_21_not_taken_when_the_vacate_time_runs_out() -> None:
    """Preempting State: "If the Vacating activity lasts for as long as the maximum vacating time, then
    the machine also enters the Killing activity" (transition 21). HTCondor's code does not change the
    activity there (Starter::softkillTimeout only hard-kills the job and arms KILLING_TIMEOUT), and
    htcpool follows the code: the slot stays Preempting/Vacating; KILL can still take 21 later, which
    hard-kills again but keeps the KILLING_TIMEOUT already running."""
    s = make_startd(NOBENCH + "MachineMaxVacateTime = 40\nKILLING_TIMEOUT = 30\n"
                    "KILL = (time() - EnteredCurrentActivity) > 60\n")
    run_job(s, "slot1", job(), 0)
    assert any(isinstance(a, SoftKill) for a in s.handle(Vacate(), 10))
    actions = s.handle_timer(50)  # MachineMaxVacateTime is over
    assert any(isinstance(a, HardKill) for a in actions)
    assert pair(s) == ("Preempting", "Vacating") and 21 not in numbers(s)
    actions = tick(s, 71)  # KILL is true now
    assert numbers(s)[-1] == 21 and pair(s) == ("Preempting", "Killing")
    assert any(isinstance(a, HardKill) for a in actions) and s.slot("slot1").killing_deadline == 80
    assert any(isinstance(a, KillStarterFamily) for a in s.handle_timer(80))


def test_transition_22_and_25_preempting_to_owner() -> None:
    """Starter gone after vacating (22) or killing (25) -> Owner."""
    s = make_startd(NOBENCH)
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 10)
    finish(s, "slot1", 20)
    assert 22 in numbers(s)
    run_job(s, "slot1", job(), 30)
    s.handle(Vacate(fast=True), 40)
    assert pair(s) == ("Preempting", "Killing")
    finish(s, "slot1", 41)
    assert 25 in numbers(s)


def test_transition_23_and_24_preempting_to_claimed() -> None:
    """A better-ranked claim takes over after vacating (23) or killing (24)."""
    s = make_startd(NOBENCH + "RANK = (Owner == \"bob\") * 10 + (Owner == \"carol\") * 20\n")
    run_job(s, "slot1", job(), 0)
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(Owner="bob", User="bob")), 10)
    assert pair(s) == ("Preempting", "Vacating")
    finish(s, "slot1", 20)
    assert numbers(s)[-1] == 23 and s.slot("slot1").claim.rank == 10
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(Owner="carol", User="carol")), 30)
    assert pair(s) == ("Claimed", "Idle") and numbers(s)[-2:] == [10, 23]
    slot = s.slot("slot1")
    s.handle(RequestClaim(slot.preempting_id, job(Owner="carol", User="carol")), 40)
    run_job(s, "slot1", job(Owner="carol"), 50)
    s.handle(RequestClaim(slot.preempting_id, job(Owner="carol", User="carol2")), 60)
    s.handle(Vacate(fast=True), 61)
    finish(s, "slot1", 62)
    assert 24 in numbers(s)


def test_transition_26_27_28_29_30_backfill() -> None:
    """Backfill: client running (26), exits (27), EVICT_BACKFILL kills it (28), gone (29), Owner (30)."""
    s = make_startd(NOBENCH + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n"
                    "EVICT_BACKFILL = TotalLoadAvg > 1\nIS_OWNER = TotalLoadAvg > 1\n")
    name = s.slot("slot1").name
    s.handle(BackfillClientStarted(name), 5)
    assert numbers(s)[-1] == 26
    s.handle(BackfillClientExited(name), 6)
    assert numbers(s)[-1] == 27
    actions = s.handle(BackfillClientStarted(name), 7)
    actions = tick(s, 10, load_avg=2.0)
    assert numbers(s)[-1] == 28 and any(type(a).__name__ == "KillBackfillClient" for a in actions)
    s.handle(BackfillClientExited(name), 12)
    assert numbers(s)[-2:] == [29, 30] and pair(s) == ("Owner", "Idle")


def test_transition_31_backfill_to_claimed() -> None:
    """Backfill: a claim request arrives; once the client is gone -> Claimed/Idle (31). The schedd
    is answered only then, as HTCondor's request_claim finishes the claiming protocol once the
    backfill is gone: an activation sent on an earlier answer found the slot still Backfill/Killing
    and was refused (tests/e2e/test_backfill.py, under load)."""
    s = make_startd(NOBENCH + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n")
    name = s.slot("slot1").name
    s.handle(BackfillClientStarted(name), 5)
    cid = s.slot("slot1").claim.id
    actions = s.handle(RequestClaim(cid, job()), 10)
    assert pair(s) == ("Backfill", "Killing")
    assert not [a for a in actions if isinstance(a, ClaimReply)]
    actions = s.handle(BackfillClientExited(name), 12)
    assert numbers(s)[-2:] == [29, 31] and pair(s) == ("Claimed", "Idle")
    assert [(a.claim_id, a.accepted) for a in actions if isinstance(a, ClaimReply)] == [(cid, True)]


def test_a_claim_taken_in_backfill_is_refused_when_the_slot_goes_to_owner_instead() -> None:
    s = make_startd(NOBENCH + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n")
    name = s.slot("slot1").name
    s.handle(BackfillClientStarted(name), 5)
    cid = s.slot("slot1").claim.id
    s.handle(RequestClaim(cid, job()), 10)
    s.handle(Shutdown(How.FAST), 11)  # the slot's way out of Backfill is now Owner
    actions = s.handle(BackfillClientExited(name), 12)
    assert numbers(s)[-4:-2] == [29, 30]  # through Owner (and on, the machine still willing)
    assert [(a.claim_id, a.accepted) for a in actions if isinstance(a, ClaimReply)] == [(cid, False)]


def test_transition_32_backfill_to_matched() -> None:
    """Backfill: the negotiator's match arrives first -> Matched after the kill (32)."""
    s = make_startd(NOBENCH + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\nSTART_BACKFILL = true\n")
    name = s.slot("slot1").name
    actions = s.handle(BackfillClientStarted(name), 5)
    s.handle(MatchNotification(s.slot("slot1").claim.id), 10)
    s.handle(BackfillClientExited(name), 12)
    assert numbers(s)[-1] == 32 and pair(s) == ("Matched", "Idle")
    assert not any(isinstance(a, StartBackfillClient) for a in actions)


def test_transition_33_34_36_37_drain_resume() -> None:
    """Draining: Unclaimed (37) and Owner (36) -> Drained/Retiring; all drained -> Idle (33);
    resume on completion -> Owner (34)."""
    s = make_startd(NOBENCH + "NUM_SLOTS = 2\nSLOT_TYPE_0_PARTITIONABLE = false\n"
                    "IS_OWNER = SlotID == 2\n", cpus=2)
    assert pair(s, "slot2") == ("Owner", "Idle")
    s.handle(Drain(on_completion="resume"), 10)
    assert 37 in numbers(s, "slot1") and 36 in numbers(s, "slot2")
    tick(s, 20)
    assert 33 in numbers(s, "slot1") and 34 in numbers(s, "slot1")


def test_transition_35_cancel_before_completion() -> None:
    """Drained/Retiring -> Owner when draining is cancelled early (35)."""
    s = make_startd(NOBENCH + "NUM_SLOTS = 2\nMaxJobRetirementTime = 1000\n", cpus=2)
    run_job(s, "slot2", job(), 0)
    s.handle(Drain(), 10)
    assert pair(s, "slot1") == ("Drained", "Retiring")
    s.handle(CancelDrain(), 20)
    assert 35 in numbers(s, "slot1")
    assert pair(s, "slot2") == ("Claimed", "Busy") and 19 in numbers(s, "slot2")


def test_unnumbered_cleaning_activity() -> None:
    """Claimed/Cleaning (not numbered): the starter's final update moves Busy to Cleaning, where no policy is
    evaluated; its exit gives Claimed/Idle - or, when a vacate (hard kill) or RELEASE_CLAIM (soft kill)
    came in during Cleaning, Preempting and then Owner."""
    s = make_startd(NOBENCH + "PREEMPT = TotalLoadAvg > 1\n")
    run_job(s, "slot1", job(), 0)
    name = s.slot("slot1").name
    s.handle(FinalJobUpdate(name), 10)
    assert pair(s) == ("Claimed", "Cleaning") and s.history[-1][1:] == (0, "Claimed/Busy", "Claimed/Cleaning")
    tick(s, 15, load_avg=5.0)
    assert pair(s) == ("Claimed", "Cleaning")  # PREEMPT is not looked at
    finish(s, "slot1", 20)
    assert pair(s) == ("Claimed", "Idle")
    for command, kill in ((Vacate(fast=True), HardKill), (None, SoftKill)):
        s = make_startd(NOBENCH)
        cid = run_job(s, "slot1", job(), 0)
        s.handle(FinalJobUpdate(s.slot("slot1").name, cid), 10)
        actions = s.handle(command if command is not None else ReleaseClaim(cid), 11)
        assert pair(s) == ("Claimed", "Cleaning") and any(isinstance(a, kill) for a in actions)
        finish(s, "slot1", 12)
        assert numbers(s)[-3:] == [0, 22, 1] and pair(s) == ("Unclaimed", "Idle")


def test_timers_soft_then_hard_kill_then_starter_family() -> None:
    """Preempting: MachineMaxVacateTime ends the soft kill; KILLING_TIMEOUT then kills the starter."""
    s = make_startd(NOBENCH + "MachineMaxVacateTime = 40\nKILLING_TIMEOUT = 30\n")
    run_job(s, "slot1", job(KillSig="SIGUSR1"), 0)
    actions = s.handle(Vacate(), 10)
    soft = [a for a in actions if isinstance(a, SoftKill)]
    assert soft and soft[0].kill_sig == "SIGUSR1" and soft[0].max_vacate_time == 40
    assert s.next_deadline() == 50
    assert any(isinstance(a, HardKill) for a in s.handle_timer(50))
    assert any(isinstance(a, KillStarterFamily) for a in s.handle_timer(80))


def test_claim_lease_expiry_kills_claim() -> None:
    """The Claimed State and Leases: no alive within the lease -> claim dropped, job killed."""
    s = make_startd(NOBENCH + "MAX_CLAIM_ALIVES_MISSED = 3\n")
    s.handle(RequestClaim(s.slot("slot1").claim.id, job(), alive_interval=100), 0)
    cid = s.slot("slot1").claim.id
    s.handle(Alive(cid), 200)
    assert s.slot("slot1").claim.lease_expires == 500
    s.handle_timer(500)
    assert numbers(s)[-3:] == [10, 25, 1]


def test_job_lease_duration_sets_lease() -> None:
    """The Claimed State and Leases: JobLeaseDuration of the job is the lease."""
    s = make_startd(NOBENCH)
    s.handle(RequestClaim(s.slot("slot1").claim.id, job(JobLeaseDuration=2400)), 0)
    assert s.slot("slot1").claim.lease_expires == 2400
