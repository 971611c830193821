"""DEFRAG_DRAINING_START_EXPR on the startd (HTCondor's manual, "Defragmenting Dynamic Slots";
HTCondor's manual, "Defrag Daemon Configuration Options"): jobs accepted while draining get no
retirement of their own; when the last original job ends - it exits, or its retirement runs out -
the others are evicted with a retirement of 0, their vacate time still honoured; START is then
false until the drain is over. And the estimates condor_defrag ranks and checks machines by."""

from __future__ import annotations

from htcpool.startd import ActivateClaim, CancelDrain, ClaimReply, Drain, HardKill, SoftKill
from tests.startd.helpers import claim, finish, job, make_startd, pair, run_job, tick

STATIC = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\nNUM_SLOTS = 3\n"
INTERRUPTIBLE = "TARGET.MaxJobRetirementTime =?= 0"


def _draining_with_a_late_job(extra: str = "") -> object:
    """slot1 runs an original job (1000 s of retirement); after a graceful drain with the draining
    START, slot2 takes an interruptible job at 50."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 1000\nMachineMaxVacateTime = 30\n" + extra, cpus=3)
    run_job(s, "slot1", job(), 0)
    s.handle(Drain(start_expr=INTERRUPTIBLE, on_completion="resume"), 10)
    late = job(ProcId=1, MaxJobRetirementTime=0)
    assert [a for a in claim(s, "slot2", late, 50) if isinstance(a, ClaimReply)][0].accepted
    s.handle(ActivateClaim(s.slot("slot2").claim.id, late), 51)
    assert pair(s, "slot2") == ("Claimed", "Busy") and s.slot("slot2").claim.accepted_while_draining
    return s


def test_late_jobs_are_evicted_with_no_retirement_when_the_original_job_exits() -> None:
    """The original job exits at 200, long before its retirement ends: the job accepted while
    draining is vacated at once (soft kill, MachineMaxVacateTime 30 honoured, hard kill only after),
    and START stays false (Requirements False) until the drain ends."""
    s = _draining_with_a_late_job()
    tick(s, 199)
    assert pair(s, "slot2") == ("Claimed", "Busy")  # while the original job retires, it runs
    finish(s, "slot1", 200)
    actions = tick(s, 201)
    assert pair(s, "slot2") == ("Preempting", "Vacating")
    assert any(isinstance(a, SoftKill) and a.slot.startswith("slot2") for a in actions)
    assert repr(s.slot("slot3").ad.lookup("Requirements")) == "false"  # START is now false
    refused = [a for a in claim(s, "slot3", job(ProcId=2, MaxJobRetirementTime=0), 205) if isinstance(a, ClaimReply)]
    assert not refused[0].accepted
    assert not any(isinstance(a, HardKill) for a in s.handle_timer(230))
    assert any(isinstance(a, HardKill) for a in s.handle_timer(231))  # the 30 s vacate time is over
    finish(s, "slot2", 233)
    tick(s, 234)
    assert [pair(s, f"slot{i}") for i in (1, 2, 3)] == [("Unclaimed", "Idle")] * 3  # resumed on completion
    assert s.draining is None and repr(s.slot("slot1").ad.lookup("Requirements")) == "START && WithinResourceLimits"


def test_late_jobs_own_retirement_is_not_granted() -> None:
    """A job accepted while draining whose own MaxJobRetirementTime would allow 5000 s still ends
    when the original job's retirement (1000 s) is over: it runs only as long as the original."""
    s = make_startd(STATIC + "MaxJobRetirementTime = 5000\nMachineMaxVacateTime = 0\n", cpus=3)
    run_job(s, "slot1", job(MaxJobRetirementTime=1000), 0)
    s.handle(Drain(start_expr="true", on_completion="resume"), 10)
    claim(s, "slot2", job(ProcId=1), 20)
    s.handle(ActivateClaim(s.slot("slot2").claim.id, job(ProcId=1)), 21)
    assert s.retirement_left(s.slot("slot2"), 500) == 500  # the original's 1000 - 500, not its own 5000
    tick(s, 999)
    assert pair(s, "slot2") == ("Claimed", "Busy")
    tick(s, 1000)
    assert pair(s, "slot1")[0] == "Preempting" and pair(s, "slot2") == ("Claimed", "Busy")
    finish(s, "slot1", 1001)  # the original job is gone: the late one is evicted, retirement 0
    tick(s, 1002)
    assert pair(s, "slot2")[0] == "Preempting"


def test_cancel_ends_the_draining_start() -> None:
    """Once the drain is cancelled the machine's own START is back."""
    s = _draining_with_a_late_job()
    assert repr(s.slot("slot3").ad.lookup("START")) == "TARGET.MaxJobRetirementTime is 0"
    s.handle(CancelDrain(), 60)
    assert s.draining is None
    assert repr(s.slot("slot3").ad.lookup("START")) != "TARGET.MaxJobRetirementTime is 0"
    assert repr(s.slot("slot3").ad.lookup("Requirements")) == "START && WithinResourceLimits"


def test_expected_draining_cost_is_advertised() -> None:
    """ExpectedMachine{Graceful,Quick}Draining{Badput,Completion}: a 2-core job running 100 s with
    900 s of retirement left and a 30 s vacate time: a graceful drain would end in 930 s and cost
    2 × (100 + 900) cpu-seconds; a quick one would end in 30 s and cost 2 × (100 + 30)."""
    s = make_startd("RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\nNUM_SLOTS = 1\n"
                    "MaxJobRetirementTime = 1000\nMachineMaxVacateTime = 30\n", cpus=2)
    run_job(s, "slot1", job(RequestCpus=2), 0)
    tick(s, 100)
    ad = s.slot("slot1").ad
    assert (ad["ExpectedMachineGracefulDrainingCompletion"], ad["ExpectedMachineGracefulDrainingBadput"]) == \
           (100 + 930, 2 * 1000)
    assert (ad["ExpectedMachineQuickDrainingCompletion"], ad["ExpectedMachineQuickDrainingBadput"]) == \
           (100 + 30, 2 * 130)
