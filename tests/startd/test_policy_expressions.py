"""One test per policy expression of the HTCondor manual's "State/Activity Transition Expression
Summary" ("Policy Configuration for Execution Points"), plus IS_OWNER and the ``_VANILLA`` variants.

Each test contrasts the expression true with it false (or absent), so it fails when the
startd ignores the expression."""

from __future__ import annotations

import pytest

from htcpool.startd import (
    BackfillClientExited,
    BackfillClientStarted,
    BenchmarksFinished,
    ClaimReply,
    DeactivateClaim,
    DeactivateReply,
    HardKill,
    HoldJob,
    KillBackfillClient,
    KillStarterFamily,
    MatchNotification,
    ReleaseClaim,
    RequestClaim,
    RunBenchmarks,
    SoftKill,
    StartBackfillClient,
    StarterExited,
    Vacate,
)
from tests.startd.helpers import claim, finish, job, make_startd, numbers, pair, run_job, tick

BASE = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"
BACKFILL = BASE + "ENABLE_BACKFILL = true\nBACKFILL_SYSTEM = BOINC\n"
STANDARD_UNIVERSE = 1  # any universe other than vanilla (5)


def test_is_owner() -> None:
    """The START Expression (IS_OWNER): IS_OWNER true keeps the slot in Owner; false lets it be Unclaimed."""
    s = make_startd(BASE + "IS_OWNER = TotalLoadAvg > 1\n")
    tick(s, 10, load_avg=2.0)
    assert pair(s) == ("Owner", "Idle")
    tick(s, 20, load_avg=0.5)
    assert pair(s) == ("Unclaimed", "Idle")
    run_job(s, "slot1", job(), 30)
    finish(s, "slot1", 40)
    tick(s, 50, load_avg=2.0)  # a Claimed/Idle slot whose owner returns is preempted (10)
    assert numbers(s)[-2:] == [10, 22] and pair(s) == ("Owner", "Idle")


def test_start() -> None:
    """Summary, START: the machine is willing to run a job only when START is true for it."""
    s = make_startd(BASE + 'START = TARGET.Owner != "mallory"\n')
    refused = claim(s, "slot1", job(Owner="mallory"), 5)
    assert isinstance(refused[0], ClaimReply) and not refused[0].accepted
    assert pair(s) == ("Unclaimed", "Idle")
    accepted = claim(s, "slot1", job(Owner="alice"), 6)
    assert isinstance(accepted[0], ClaimReply) and accepted[0].accepted and pair(s) == ("Claimed", "Idle")


def test_rank() -> None:
    """Summary, RANK: a request of higher rank preempts; a lower one is refused; CurrentRank is published."""
    s = make_startd(BASE + "RANK = ImageSize / 1000\nMaxJobRetirementTime = 0\n")
    run_job(s, "slot1", job(ImageSize=2000), 0)
    slot = s.slot("slot1")
    assert slot.ad["CurrentRank"] == 2
    low = s.handle(RequestClaim(slot.preempting_id, job(ImageSize=1000)), 10)
    assert isinstance(low[0], ClaimReply) and not low[0].accepted and pair(s) == ("Claimed", "Busy")
    s.handle(RequestClaim(slot.preempting_id, job(Owner="bob", ImageSize=9000)), 20)
    assert pair(s) == ("Preempting", "Vacating")
    finish(s, "slot1", 30)
    assert pair(s) == ("Claimed", "Idle") and slot.claim.rank == 9 and numbers(s)[-1] == 23


def test_want_suspend() -> None:
    """Summary, WANT_SUSPEND: true - SUSPEND decides (Suspended); otherwise PREEMPT is looked at instead."""
    policy = BASE + "SUSPEND = TotalLoadAvg > 2\nPREEMPT = TotalLoadAvg > 2\n"
    s = make_startd(policy + "WANT_SUSPEND = true\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=3.0)
    assert pair(s) == ("Claimed", "Suspended")
    s = make_startd(policy + "WANT_SUSPEND = false\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=3.0)
    assert 14 not in numbers(s) and 13 in numbers(s)  # PREEMPT: retire, never suspend


def test_suspend() -> None:
    """Summary, SUSPEND: with WANT_SUSPEND true, Claimed/Busy enters Suspended only when SUSPEND is true."""
    s = make_startd(BASE + "WANT_SUSPEND = true\nSUSPEND = KeyboardIdle < 60\nSLOTS_CONNECTED_TO_KEYBOARD = 1\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, keyboard_idle=600)
    assert pair(s) == ("Claimed", "Busy")
    actions = tick(s, 20, keyboard_idle=5)
    assert pair(s) == ("Claimed", "Suspended") and numbers(s)[-1] == 14
    assert any(type(a).__name__ == "SuspendJob" for a in actions)


def test_continue() -> None:
    """Summary, CONTINUE: a suspended job resumes (Busy, 15) only when CONTINUE is true."""
    s = make_startd(BASE + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\n"
                    "CONTINUE = TotalLoadAvg < 0.5 && (time() - EnteredCurrentActivity) > 60\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=3.0)
    tick(s, 20, load_avg=0.1)
    assert pair(s) == ("Claimed", "Suspended")  # load is low, but not for 60 s yet
    actions = tick(s, 80, load_avg=0.1)
    assert pair(s) == ("Claimed", "Busy") and numbers(s)[-1] == 15
    assert any(type(a).__name__ == "ContinueJob" for a in actions)


def test_preempt() -> None:
    """Summary, PREEMPT: Busy without WANT_SUSPEND retires when PREEMPT is true, and cannot un-retire."""
    s = make_startd(BASE + "PREEMPT = TotalLoadAvg > 2\nMaxJobRetirementTime = 100\nMachineMaxVacateTime = 10\n")
    run_job(s, "slot1", job(), 0)
    tick(s, 10, load_avg=1.0)
    assert pair(s) == ("Claimed", "Busy")
    tick(s, 20, load_avg=3.0)
    slot = s.slot("slot1")
    assert pair(s) == ("Claimed", "Retiring") and not slot.claim.may_unretire
    assert slot.claim.vacate_reason == "PREEMPT expression evaluated to True"
    tick(s, 30, load_avg=0.0)
    assert pair(s) == ("Claimed", "Retiring")  # no transition 19 back to Busy
    tick(s, 90, load_avg=0.0)
    assert pair(s) == ("Preempting", "Vacating")  # 100 s retirement less 10 s vacate time


def test_want_vacate() -> None:
    """Summary, WANT_VACATE: checked when PREEMPT is true - false goes straight to Killing."""
    policy = BASE + "PREEMPT = TotalLoadAvg > 2\n"
    s = make_startd(policy + "WANT_VACATE = false\n")
    run_job(s, "slot1", job(), 0)
    actions = tick(s, 10, load_avg=3.0)
    assert pair(s) == ("Preempting", "Killing") and any(isinstance(a, HardKill) for a in actions)
    s = make_startd(policy + "WANT_VACATE = true\n")
    run_job(s, "slot1", job(), 0)
    actions = tick(s, 10, load_avg=3.0)
    assert pair(s) == ("Preempting", "Vacating") and any(isinstance(a, SoftKill) for a in actions)
    s = make_startd(BASE + "WANT_VACATE = false\n")  # not consulted without PREEMPT
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 10)
    assert pair(s) == ("Preempting", "Vacating")


def test_kill() -> None:
    """Summary, KILL: Preempting/Vacating enters Killing (21) when KILL is true."""
    s = make_startd(BASE + "KILL = TotalLoadAvg > 4\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(), 5)
    tick(s, 10, load_avg=1.0)
    assert pair(s) == ("Preempting", "Vacating")
    actions = tick(s, 15, load_avg=5.0)
    assert pair(s) == ("Preempting", "Killing") and numbers(s)[-1] == 21
    assert any(isinstance(a, HardKill) for a in actions)


def test_want_hold() -> None:
    """POLICY : HOLD_IF_MEMORY_EXCEEDED (WANT_HOLD_IF): PREEMPT fires and the job is held, code 21."""
    s = make_startd(BASE + "use POLICY : HOLD_IF_MEMORY_EXCEEDED\n", memory=1024)
    run_job(s, "slot1", job(MemoryUsage=100), 0)
    tick(s, 10)
    assert pair(s) == ("Claimed", "Busy")
    s.slot("slot1").claim.job["MemoryUsage"] = 4096  # type: ignore[index]
    actions = tick(s, 20)
    holds = [a for a in actions if isinstance(a, HoldJob)]
    assert holds and holds[0].code == 21 and holds[0].subcode == 102
    assert holds[0].reason == "memory usage exceeded request_memory"
    # held and also stopped: Vacating soft-kills the job (the reference's Preempting entry)
    assert any(isinstance(a, SoftKill) for a in actions)


def test_max_job_retirement_time_in_job_context() -> None:
    """Summary, MAXJOBRETIREMENTTIME: evaluated against the job; a preempted job keeps running until it ends."""
    s = make_startd(BASE + 'MaxJobRetirementTime = ifThenElse(TARGET.Owner == "alice", 500, 0)\n'
                    "MachineMaxVacateTime = 0\nRANK = TARGET.Owner == \"carol\"\n")
    run_job(s, "slot1", job(Owner="alice"), 0)
    s.handle(RequestClaim(s.slot("slot1").preempting_id, job(Owner="carol")), 10)
    assert pair(s) == ("Claimed", "Retiring")
    tick(s, 499)
    assert pair(s) == ("Claimed", "Retiring")
    tick(s, 500)
    assert pair(s) == ("Preempting", "Vacating")
    s2 = make_startd(BASE + 'MaxJobRetirementTime = ifThenElse(TARGET.Owner == "alice", 500, 0)\n'
                     "RANK = TARGET.Owner == \"carol\"\n")
    run_job(s2, "slot1", job(Owner="bob"), 0)
    s2.handle(RequestClaim(s2.slot("slot1").preempting_id, job(Owner="carol")), 10)
    assert pair(s2) == ("Preempting", "Vacating")


def test_machine_and_job_max_vacate_time() -> None:
    """Summary, MachineMaxVacateTime: the job's lower JobMaxVacateTime wins; the hard kill follows it."""
    s = make_startd(BASE + "MachineMaxVacateTime = 120\n")
    run_job(s, "slot1", job(JobMaxVacateTime=30), 0)
    soft = [a for a in s.handle(Vacate(), 10) if isinstance(a, SoftKill)]
    assert soft[0].max_vacate_time == 30 and s.next_deadline() == 40
    assert not any(isinstance(a, HardKill) for a in s.handle_timer(39))
    assert any(isinstance(a, HardKill) for a in s.handle_timer(40))
    s = make_startd(BASE + "MachineMaxVacateTime = 120\n")
    run_job(s, "slot1", job(), 0)
    soft = [a for a in s.handle(Vacate(), 10) if isinstance(a, SoftKill)]
    assert soft[0].max_vacate_time == 120


def test_killing_timeout() -> None:
    """Summary, KILLING_TIMEOUT: a starter still alive that long after the hard kill is SIGKILLed."""
    s = make_startd(BASE + "KILLING_TIMEOUT = 10\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(fast=True), 100)
    assert s.next_deadline() == 110
    assert not any(isinstance(a, KillStarterFamily) for a in s.handle_timer(109))
    assert any(isinstance(a, KillStarterFamily) for a in s.handle_timer(110))
    s = make_startd(BASE + "KILLING_TIMEOUT = 10\n")
    run_job(s, "slot1", job(), 0)
    s.handle(Vacate(fast=True), 100)
    s.handle(StarterExited(s.slot("slot1").name), 105)  # the starter obeyed in time
    assert not any(isinstance(a, KillStarterFamily) for a in s.handle_timer(110))


def test_match_timeout() -> None:
    """Summary, MATCH_TIMEOUT: Matched longer than this goes to Owner; a claim in time is kept."""
    s = make_startd(BASE + "MATCH_TIMEOUT = 60\n")
    s.handle(MatchNotification(s.slot("slot1").claim.id), 0)
    s.handle_timer(59)
    assert pair(s) == ("Matched", "Idle")
    s.handle_timer(60)
    assert 8 in numbers(s) and pair(s) == ("Unclaimed", "Idle")
    s = make_startd(BASE + "MATCH_TIMEOUT = 60\n")
    claim(s, "slot1", job(), 0, match=True)
    s.handle_timer(60)
    assert pair(s) == ("Claimed", "Idle") and 8 not in numbers(s)


def test_claim_worklife() -> None:
    """Summary, CLAIM_WORKLIFE: after that many seconds the claim accepts no more jobs."""
    s = make_startd(BASE + "CLAIM_WORKLIFE = 300\n")
    cid = run_job(s, "slot1", job(), 0)
    finish(s, "slot1", 100)
    replies = [a for a in s.handle(DeactivateClaim(cid), 100) if isinstance(a, DeactivateReply)]
    assert replies[0].start is True
    tick(s, 250)
    assert pair(s) == ("Claimed", "Idle")
    replies = [a for a in s.handle(DeactivateClaim(cid), 301) if isinstance(a, DeactivateReply)]
    assert replies[0].start is False
    tick(s, 305)
    assert 10 in numbers(s) and pair(s) == ("Unclaimed", "Idle")
    s = make_startd(BASE + "CLAIM_WORKLIFE =\n")  # empty: infinite
    run_job(s, "slot1", job(), 0)
    finish(s, "slot1", 100)
    tick(s, 10**6)
    assert pair(s) == ("Claimed", "Idle")


def test_run_benchmarks_whenever_true() -> None:
    """Summary, RUNBENCHMARKS: while Unclaimed the machine runs benchmarks whenever it is true."""
    s = make_startd("SLOT_TYPE_0_PARTITIONABLE = false\nRunBenchmarks = (time() - LastBenchmark) > 3600\n",
                    now=5000)
    assert pair(s) == ("Unclaimed", "Benchmarking")
    s.handle(BenchmarksFinished(s.slot("slot1").name, mips=100), 5030)
    tick(s, 6000)
    assert pair(s) == ("Unclaimed", "Idle")
    actions = tick(s, 8700)  # an hour after the last run
    assert pair(s) == ("Unclaimed", "Benchmarking") and any(isinstance(a, RunBenchmarks) for a in actions)
    s = make_startd("SLOT_TYPE_0_PARTITIONABLE = false\nRunBenchmarks = false\n")
    assert pair(s) == ("Unclaimed", "Idle") and 3 not in numbers(s)


def test_start_backfill() -> None:
    """Summary, START_BACKFILL: an idle machine enters Backfill only when it is true (and backfill is on)."""
    s = make_startd(BACKFILL + "START_BACKFILL = (time() - EnteredCurrentState) > 60\n")
    tick(s, 30)
    assert pair(s) == ("Unclaimed", "Idle")
    tick(s, 70)
    assert pair(s) == ("Backfill", "Idle") and numbers(s)[-1] == 7
    s = make_startd(BASE + "START_BACKFILL = true\n")  # ENABLE_BACKFILL is false by default
    tick(s, 70)
    assert pair(s) == ("Unclaimed", "Idle")


def test_evict_backfill() -> None:
    """Summary, EVICT_BACKFILL: kills the BOINC client and returns to Owner/Idle."""
    policy = BACKFILL + "START_BACKFILL = true\nEVICT_BACKFILL = TotalLoadAvg > 1\nIS_OWNER = TotalLoadAvg > 1\n"
    s = make_startd(policy)
    tick(s, 5, load_avg=0.5)
    assert pair(s) == ("Backfill", "Idle")
    tick(s, 10, load_avg=2.0)  # no client running yet: straight to Owner (30)
    assert pair(s) == ("Owner", "Idle") and numbers(s)[-1] == 30
    s = make_startd(policy)
    s.handle(BackfillClientStarted(s.slot("slot1").name), 5)
    tick(s, 8, load_avg=0.5)
    assert pair(s) == ("Backfill", "Busy")
    actions = tick(s, 10, load_avg=2.0)
    assert pair(s) == ("Backfill", "Killing") and any(isinstance(a, KillBackfillClient) for a in actions)


def test_one_backfill_client_for_the_whole_machine() -> None:
    """Backfill State: "the condor_startd will only spawn a single instance of the BOINC client, even if
    multiple slots are available"; a slot entering Backfill while it runs goes Backfill/Busy at once (26).
    A slot leaving (claim, vacate) leaves the client to the others (28, 29, then 30/31); only the last one
    kills it, and waits for it to exit (HTCondor's BOINC_BackfillMgr)."""
    s = make_startd(BACKFILL + "NUM_SLOTS = 3\nSTART_BACKFILL = time() < 100\n", cpus=3)
    one, two, three = (s.slot(f"slot{i}") for i in (1, 2, 3))
    assert [a for a in s.initial_actions if isinstance(a, StartBackfillClient)] == [StartBackfillClient(one.name)]
    assert [pair(s, f"slot{i}") for i in (1, 2, 3)] == [("Backfill", "Idle")] * 3
    s.handle(BackfillClientStarted(one.name), 5)
    assert [pair(s, f"slot{i}") for i in (1, 2, 3)] == [("Backfill", "Busy")] * 3
    actions = claim(s, "slot2", job(), 10)
    assert pair(s, "slot2") == ("Claimed", "Idle") and numbers(s, "slot2")[-3:] == [28, 29, 31]
    assert not any(isinstance(a, KillBackfillClient) for a in actions)
    s.handle(ReleaseClaim(two.claim.id), 20)  # back to Unclaimed, then Backfill: joins the running client
    assert pair(s, "slot2") == ("Backfill", "Busy") and numbers(s, "slot2")[-2:] == [7, 26]
    s.handle(Vacate(one.name), 100)  # leaves; START_BACKFILL is false from now on
    assert pair(s, "slot1") == ("Unclaimed", "Idle") and 30 in numbers(s, "slot1")
    assert not any(isinstance(a, KillBackfillClient) for a in s.handle(Vacate(two.name), 101))
    actions = s.handle(Vacate(three.name), 102)  # the last user kills the client, under its name
    assert [a for a in actions if isinstance(a, KillBackfillClient)] == [KillBackfillClient(one.name)]
    assert pair(s, "slot3") == ("Backfill", "Killing")
    s.handle(BackfillClientExited(one.name), 103)
    assert numbers(s, "slot3")[-3:] == [29, 30, 1] and pair(s, "slot3") == ("Unclaimed", "Idle")


def test_backfill_client_exit_restarts_it_once() -> None:
    """Backfill State: the client exiting on its own sends every slot to Backfill/Idle (27), which asks for
    one new client (26 again when it runs); a client that starts when no slot waits is killed."""
    s = make_startd(BACKFILL + "NUM_SLOTS = 2\nSTART_BACKFILL = true\n", cpus=2)
    first = s.slot("slot1").name
    s.handle(BackfillClientStarted(first), 5)
    actions = s.handle(BackfillClientExited(first), 6)
    assert [pair(s, f"slot{i}") for i in (1, 2)] == [("Backfill", "Idle")] * 2
    assert [a for a in actions if isinstance(a, StartBackfillClient)] == [StartBackfillClient(first)]
    s.handle(BackfillClientStarted(first), 7)
    assert numbers(s, "slot2")[-2:] == [27, 26] and pair(s, "slot2") == ("Backfill", "Busy")
    s = make_startd(BACKFILL + "START_BACKFILL = true\nEVICT_BACKFILL = TotalLoadAvg > 1\n"
                    "IS_OWNER = TotalLoadAvg > 1\n")
    tick(s, 5, load_avg=2.0)  # left Backfill/Idle before the client came up
    actions = s.handle(BackfillClientStarted(s.slot("slot1").name), 6)
    assert pair(s) == ("Owner", "Idle") and KillBackfillClient(s.slot("slot1").name) in actions


# ---------------------------------------------------------------------- _VANILLA variants
VANILLA_CASES = {
    # knob: (plain policy, vanilla override, what the vanilla job sees, what the other job sees)
    "PREEMPT": ("PREEMPT = true\n", "PREEMPT_VANILLA = false\n", ("Claimed", "Busy"), ("Preempting", "Vacating")),
    "WANT_SUSPEND": ("WANT_SUSPEND = false\nSUSPEND = true\n", "WANT_SUSPEND_VANILLA = true\n",
                     ("Claimed", "Suspended"), ("Claimed", "Busy")),
    "SUSPEND": ("WANT_SUSPEND = true\nSUSPEND = false\n", "SUSPEND_VANILLA = true\n",
                ("Claimed", "Suspended"), ("Claimed", "Busy")),
}


@pytest.mark.parametrize("knob", sorted(VANILLA_CASES))
def test_vanilla_variant_wins_for_vanilla_jobs(knob: str) -> None:
    """Default Policy ("the vanilla expressions"): <KNOB>_VANILLA is used for vanilla jobs, <KNOB> for others."""
    plain, override, vanilla_pair, other_pair = VANILLA_CASES[knob]
    for universe, expected in ((5, vanilla_pair), (STANDARD_UNIVERSE, other_pair)):
        s = make_startd(BASE + plain + override)
        run_job(s, "slot1", job(JobUniverse=universe), 0)
        tick(s, 10)
        assert pair(s) == expected, universe


@pytest.mark.parametrize("universe,expected", [(5, ("Claimed", "Busy")), (STANDARD_UNIVERSE, ("Claimed", "Suspended"))])
def test_continue_vanilla(universe: int, expected: tuple[str, str]) -> None:
    """Default Policy: CONTINUE_VANILLA decides resumption for vanilla jobs only."""
    s = make_startd(BASE + "WANT_SUSPEND = true\nSUSPEND = TotalLoadAvg > 2\nCONTINUE = false\n"
                    "CONTINUE_VANILLA = true\n")
    run_job(s, "slot1", job(JobUniverse=universe), 0)
    tick(s, 10, load_avg=3.0)
    tick(s, 20, load_avg=0.0)
    assert pair(s) == expected


@pytest.mark.parametrize("universe,kills", [(5, True), (STANDARD_UNIVERSE, False)])
def test_kill_and_want_vacate_vanilla(universe: int, kills: bool) -> None:
    """Default Policy: KILL_VANILLA and WANT_VACATE_VANILLA apply to vanilla jobs only."""
    s = make_startd(BASE + "KILL = false\nKILL_VANILLA = true\n")
    run_job(s, "slot1", job(JobUniverse=universe), 0)
    s.handle(Vacate(), 5)
    tick(s, 10)
    assert (pair(s) == ("Preempting", "Killing")) is kills
    s = make_startd(BASE + "PREEMPT = true\nWANT_VACATE = true\nWANT_VACATE_VANILLA = false\n")
    run_job(s, "slot1", job(JobUniverse=universe), 0)
    tick(s, 10)
    assert (pair(s) == ("Preempting", "Killing")) is kills
