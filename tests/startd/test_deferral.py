"""Job deferral on the execute side (the manual's "Time Scheduling for Job Execution"): the
startd core holds an activated job's start until its DeferralTime, refuses one that arrives
past DeferralTime + DeferralWindow, and ends a held activation that is vacated. Driven by a
fake clock: time moves only to the deadlines the core names."""

from __future__ import annotations

from htcpool.classad import ClassAd, ExprTree
from htcpool.deferral import MISSED_DEFERRAL_REASON
from htcpool.protocol.schedd import JobEvent, JobUpdate
from htcpool.protocol.startd import Action
from htcpool.startd import (
    ActivateClaim,
    ActivateReply,
    ContinueClaim,
    ContinueJob,
    DeactivateClaim,
    DeactivateReply,
    Drain,
    HardKill,
    HoldJob,
    NotifySchedd,
    SoftKill,
    Startd,
    StartJob,
    SuspendClaim,
    SuspendJob,
    Vacate,
)
from tests.startd.helpers import claim, job, make_startd, pair

STATIC = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"


class FakeClock:
    """Moves a startd's time from deadline to deadline, collecting every action on the way."""

    def __init__(self, startd: Startd, now: float) -> None:
        self.startd = startd
        self.now = now
        self.actions: list[tuple[float, Action]] = []

    def record(self, actions: list[Action]) -> list[Action]:
        self.actions += [(self.now, a) for a in actions]
        return actions

    def handle(self, message: object, at: float) -> list[Action]:
        self.now = at
        return self.record(self.startd.handle(message, at))  # type: ignore[arg-type]

    def run_until(self, end: float) -> None:
        """Fire every timer the core asks for up to ``end``, then advance to ``end``."""
        while True:
            deadline = self.startd.next_deadline()
            if deadline is None or deadline > end:
                break
            self.now = max(self.now, deadline)
            self.record(self.startd.handle_timer(self.now))
        self.now = end
        self.record(self.startd.handle_timer(end))

    def when(self, kind: type) -> list[float]:
        return [t for t, a in self.actions if isinstance(a, kind)]

    def of(self, kind: type) -> list[object]:
        return [a for _, a in self.actions if isinstance(a, kind)]


def _activated(ad: ClassAd, at: float, extra: str = "") -> tuple[Startd, FakeClock, str]:
    startd = make_startd(STATIC + extra, now=0.0)
    clock = FakeClock(startd, 0.0)
    clock.record(claim(startd, "slot1", ad, 0.0))
    cid = startd.slot("slot1").claim.id
    clock.handle(ActivateClaim(cid, ad), at)
    return startd, clock, cid


def test_a_deferred_job_waits_busy_until_its_deferral_time_and_starts_then() -> None:
    ad = job(DeferralTime=1000, DeferralWindow=60)
    startd, clock, cid = _activated(ad, 100.0)
    assert clock.of(ActivateReply) == [ActivateReply(cid, True)]
    assert pair(startd) == ("Claimed", "Busy") and clock.of(StartJob) == []
    assert startd.next_deadline() is not None and startd.next_deadline() <= 1000  # type: ignore[operator]
    clock.run_until(999.5)
    assert clock.of(StartJob) == [] and pair(startd) == ("Claimed", "Busy")
    clock.run_until(1500)
    assert clock.when(StartJob) == [1000] and clock.of(StartJob) == [StartJob("slot1@test.example.org", cid, ad)]
    assert pair(startd) == ("Claimed", "Busy")


def test_a_deferral_time_expression_is_evaluated_at_activation() -> None:
    ad = job(QDate=300, DeferralTime=ExprTree("QDate + 500"), DeferralWindow=0)
    _, clock, _ = _activated(ad, 310.0)
    clock.run_until(5000)
    assert clock.when(StartJob) == [800]


def test_a_deferral_time_that_cannot_be_evaluated_refuses_the_activation_and_keeps_the_claim() -> None:
    """An evaluation that fails outright (here: deeper than the evaluator allows) is one job's
    problem: the activation is refused with the reason, and the slot stays Claimed/Idle."""
    deep = {f"Step{i}": ExprTree(f"Step{i + 1} + 1") for i in range(300)}
    ad = job(DeferralTime=ExprTree("Step0"), Step300=1, **deep)
    startd, clock, cid = _activated(ad, 100.0)
    (reply,) = clock.of(ActivateReply)
    assert reply.accepted is False and "deferral time cannot be evaluated" in reply.reason  # type: ignore[attr-defined]
    assert pair(startd) == ("Claimed", "Idle") and clock.of(StartJob) == []


def test_a_job_without_deferral_or_past_its_time_within_the_window_starts_at_once() -> None:
    for ad in (job(), job(DeferralTime=90, DeferralWindow=20)):
        _, clock, cid = _activated(ad, 100.0)
        assert clock.when(StartJob) == [100]
        kinds = [type(a) for _, a in clock.actions if isinstance(a, StartJob | ActivateReply)]
        assert kinds == [StartJob, ActivateReply]  # the starter is on its way before the reply


def test_a_job_past_its_window_is_not_started_and_the_slot_goes_back_to_claimed_idle() -> None:
    ad = job(DeferralTime=10, DeferralWindow=5)
    startd, clock, cid = _activated(ad, 100.0)
    updates = clock.of(JobUpdate)
    assert updates == [JobUpdate(cid, "slot1@test.example.org", JobEvent.MISSED_DEFERRAL,
                                 message=MISSED_DEFERRAL_REASON)]
    assert clock.of(ActivateReply) == [ActivateReply(cid, True)]
    order = [type(a) for _, a in clock.actions if isinstance(a, ActivateReply | JobUpdate)]
    assert order == [ActivateReply, JobUpdate]
    assert pair(startd) == ("Claimed", "Idle") and startd.slot("slot1").claim.job is None
    clock.run_until(1000)
    assert clock.of(StartJob) == []


def test_a_vacate_while_waiting_ends_the_activation_without_a_start() -> None:
    ad = job(DeferralTime=1000)
    startd, clock, cid = _activated(ad, 100.0)
    clock.handle(Vacate(), 200.0)
    assert clock.of(JobUpdate) == [JobUpdate(cid, "slot1@test.example.org", JobEvent.EXITED, killed=True)]
    assert clock.of(SoftKill) == [] and clock.of(HardKill) == []  # there is no starter to signal
    releases = clock.of(NotifySchedd)
    assert [n.claim_id for n in releases] == [cid]  # type: ignore[attr-defined]
    assert pair(startd)[0] in ("Owner", "Unclaimed")
    clock.run_until(1500)
    assert clock.of(StartJob) == []


def test_a_deactivation_while_waiting_keeps_the_claim() -> None:
    ad = job(DeferralTime=1000)
    startd, clock, cid = _activated(ad, 100.0)
    clock.handle(DeactivateClaim(cid), 200.0)
    order = [a for _, a in clock.actions if isinstance(a, DeactivateReply | JobUpdate)]
    assert order == [DeactivateReply(cid, True),
                     JobUpdate(cid, "slot1@test.example.org", JobEvent.EXITED, killed=True)]
    assert pair(startd) == ("Claimed", "Idle")
    clock.run_until(1500)
    assert clock.of(StartJob) == []


def test_a_suspended_wait_starts_the_job_when_the_slot_resumes() -> None:
    ad = job(DeferralTime=1000)
    startd, clock, cid = _activated(ad, 100.0)
    clock.handle(SuspendClaim("slot1"), 200.0)
    assert pair(startd) == ("Claimed", "Suspended") and clock.of(SuspendJob) == []
    clock.run_until(1500)
    assert clock.of(StartJob) == []
    clock.handle(ContinueClaim("slot1"), 1500.0)
    clock.run_until(1600)
    assert clock.when(StartJob) == [1500] and clock.of(ContinueJob) == []
    assert pair(startd) == ("Claimed", "Busy")


def test_a_held_start_still_fires_while_the_claim_retires() -> None:
    """A graceful drain retires the claim; the job has retirement time left, so it starts at its
    deferral time and runs out its retirement."""
    ad = job(DeferralTime=1000)
    startd, clock, cid = _activated(ad, 100.0, "MaxJobRetirementTime = 10000\n")
    clock.handle(Drain(), 200.0)
    assert pair(startd) == ("Claimed", "Retiring")
    clock.run_until(1200)
    assert clock.when(StartJob) == [1000] and clock.of(JobUpdate) == []


def test_want_hold_while_waiting_holds_the_job_and_the_deactivation_drops_its_start() -> None:
    """PREEMPT with WANT_HOLD puts the waiting job on hold (HoldJob); the held start ends when the
    schedd deactivates the claim, and the slot leaves Preempting without a starter to kill."""
    ad = job(DeferralTime=1000)
    startd, clock, cid = _activated(ad, 100.0, "PREEMPT = time() >= 200\nWANT_HOLD = true\n")
    clock.now = 200.0
    clock.record(startd.evaluate(200.0))
    assert [h.claim_id for h in clock.of(HoldJob)] == [cid]  # type: ignore[attr-defined]
    assert pair(startd) == ("Preempting", "Vacating") and clock.of(JobUpdate) == []
    assert clock.of(SoftKill) == [] and clock.of(HardKill) == []
    clock.handle(DeactivateClaim(cid), 201.0)
    assert clock.of(JobUpdate) == [JobUpdate(cid, "slot1@test.example.org", JobEvent.EXITED, killed=True)]
    assert pair(startd)[0] != "Preempting"
    clock.run_until(1500)
    assert clock.of(StartJob) == []
