"""The schedd's claims, back to back with a fake clock (HTCondor's manual: "Job Leases", CLAIM_WORKLIFE)."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext, fixed_clock, parseOne
from htcpool.protocol.startd import (
    ActivateClaim,
    ActivateReply,
    Alive,
    ClaimReply,
    DeactivateClaim,
    DeactivateReply,
    ReleaseClaim,
    RequestClaim,
)
from htcpool.schedd import (
    ClaimEvent,
    ClaimManager,
    ClaimState,
    IllegalClaimEvent,
    JobQueue,
    JobStatus,
    ScheddSettings,
    UnknownClaim,
)
from htcpool.schedd.claims import TRANSITIONS, claim_worklife, diagram
from htcpool.schedd.settings import settings_from_config

T0 = 1_000_000.0
SLOT = '[Name = "slot1@ep"; Memory = 1024; CLAIM_WORKLIFE = 1200; Requirements = true]'


def job(extra: str = "") -> ClassAd:
    return parseOne(f"[JobStatus = 1; RemoteWallClockTime = 0.0; Requirements = TARGET.Memory >= 512; {extra}]")


def pool(*jobs: tuple[str, str], alive_interval: int = 300) -> tuple[JobQueue, ClaimManager]:
    q = JobQueue(ScheddSettings(alive_interval=alive_interval))
    for owner, extra in jobs:
        q.submit(owner, [job(extra)], T0)
    return q, ClaimManager(q)


def claim_and_run(m: ClaimManager, slot: str = SLOT, job_id: tuple[int, int] = (1, 0),
                  now: float = T0) -> None:
    m.match(parseOne(slot), "c1", job_id, now)
    m.claim_reply(ClaimReply("c1", True), now)
    m.activate_reply(ActivateReply("c1", True), now)


def test_request_activate_reuse_then_worklife_release() -> None:
    """After a job exits the claim runs the same submitter's next job; once older than the slot
    ad's CLAIM_WORKLIFE (age from the claim's start) it is released."""
    q, m = pool(("alice", ""), ("alice", ""), ("alice", ""))
    actions = m.match(parseOne(SLOT), "c1", (1, 0), T0)
    assert isinstance(actions[0], RequestClaim) and actions[0].claim_id == "c1"
    assert m.state("c1") is ClaimState.REQUESTED
    actions = m.claim_reply(ClaimReply("c1", True), T0 + 1)
    assert isinstance(actions[0], ActivateClaim) and actions[0].job is q.job((1, 0))
    assert m.state("c1") is ClaimState.ACTIVATING
    m.activate_reply(ActivateReply("c1", True), T0 + 2)
    assert m.state("c1") is ClaimState.BUSY and q.status((1, 0)) == JobStatus.RUNNING

    assert m.job_exited("c1", T0 + 100) == [DeactivateClaim("c1")]
    assert (1, 0) not in q.jobs and m.state("c1") is ClaimState.DEACTIVATING
    actions = m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 101)
    assert isinstance(actions[0], ActivateClaim) and actions[0].job is q.job((2, 0))
    m.activate_reply(ActivateReply("c1", True), T0 + 102)
    assert q.status((2, 0)) == JobStatus.RUNNING

    m.job_exited("c1", T0 + 1300)
    assert m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 1301) == [ReleaseClaim("c1")]
    assert "c1" not in m.claims and q.status((3, 0)) == JobStatus.IDLE


def test_exit_with_the_claim_open_activates_the_next_job_at_once() -> None:
    """A startd that says with the exit that the claim takes another job (``claim_open``) gets
    the next job's activation as the answer, no deactivation between; the claim's worklife
    and the submitter's jobs decide as after a deactivation."""
    q, m = pool(("alice", ""), ("alice", ""), ("bob", ""))
    claim_and_run(m)
    actions = m.job_exited("c1", T0 + 100, claim_open=True)
    assert [type(a) for a in actions] == [ActivateClaim] and actions[0].job is q.job((2, 0))
    assert (1, 0) not in q.jobs and m.state("c1") is ClaimState.ACTIVATING
    assert q.status((2, 0)) == JobStatus.RUNNING
    m.activate_reply(ActivateReply("c1", True), T0 + 101)
    assert m.job_exited("c1", T0 + 200, claim_open=True) == [ReleaseClaim("c1")]  # only bob's job is left
    assert "c1" not in m.claims and q.status((3, 0)) == JobStatus.IDLE


def test_claim_worklife_is_evaluated_when_the_claim_is_reused() -> None:
    """A CLAIM_WORKLIFE that reads the time is evaluated at each decision: 1200 s before
    1_001_000, 60 s after."""
    slot = '[Name = "s"; Memory = 1024; CLAIM_WORKLIFE = ifThenElse(CurrentTime < 1001000, 1200, 60)]'
    q, m = pool(("alice", ""), ("alice", ""), ("alice", ""))
    claim_and_run(m, slot)
    m.job_exited("c1", T0 + 100)
    actions = m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 101)  # age 101 < 1200
    assert isinstance(actions[0], ActivateClaim) and actions[0].job is q.job((2, 0))
    m.activate_reply(ActivateReply("c1", True), T0 + 102)
    m.job_exited("c1", T0 + 1100)
    assert m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 1101) == [ReleaseClaim("c1")]
    assert q.status((3, 0)) == JobStatus.IDLE
    at = EvalContext(clock=fixed_clock(T0))
    assert claim_worklife(parseOne(slot), at) == 1200.0
    assert claim_worklife(parseOne('[CLAIM_WORKLIFE = CurrentTime - 1000000 - 1]'), at) is None  # −1


def test_no_worklife_means_reuse_forever() -> None:
    """CLAIM_WORKLIFE absent or −1 ⇒ infinite worklife."""
    for slot in ('[Name = "s"; Memory = 1024]', '[Name = "s"; Memory = 1024; CLAIM_WORKLIFE = -1]'):
        _, m = pool(("alice", ""), ("alice", ""))
        claim_and_run(m, slot)
        m.job_exited("c1", T0 + 10**6)
        m.handle_timer(T0 + 10**6)
        actions = m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 10**6)
        assert isinstance(actions[0], ActivateClaim)


def test_no_reuse_for_another_owner_or_unmatched_job() -> None:
    """Claim reuse: only a job of the same submitter whose Requirements match the slot may reuse it."""
    q, m = pool(("alice", ""), ("bob", ""), ("alice", "Requirements = TARGET.Memory > 4096"))
    claim_and_run(m)
    m.job_exited("c1", T0 + 10)
    assert m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 11) == [ReleaseClaim("c1")]
    assert q.status((2, 0)) == JobStatus.IDLE and q.status((3, 0)) == JobStatus.IDLE


def test_closing_claim_is_dropped_without_release() -> None:
    """A deactivation reply with Start = false means the startd closes the claim."""
    _, m = pool(("alice", ""), ("alice", ""))
    claim_and_run(m)
    m.job_exited("c1", T0 + 10)
    assert m.deactivate_reply(DeactivateReply("c1", start=False), T0 + 11) == []
    assert m.claims == {}


def test_keep_claim_idle_holds_the_claim_then_releases() -> None:
    """With KeepClaimIdle = N the unused claim stays for N seconds; a job arriving meanwhile reuses it."""
    q, m = pool(("alice", "KeepClaimIdle = 100"))
    claim_and_run(m)
    m.job_exited("c1", T0 + 10)
    assert m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 11) == []
    assert m.state("c1") is ClaimState.IDLE and m.next_deadline() == T0 + 110
    q.submit("alice", [job()], T0 + 50)
    assert isinstance(m.handle_timer(T0 + 60)[0], ActivateClaim)
    m.activate_reply(ActivateReply("c1", True), T0 + 61)
    m.job_exited("c1", T0 + 70)
    assert m.deactivate_reply(DeactivateReply("c1", start=True), T0 + 71) == [ReleaseClaim("c1")]


def test_keep_alives_every_alive_interval_lowered_by_job_lease() -> None:
    """ALIVE_INTERVAL, lowered to JobLeaseDuration/3 with a floor of 10 s."""
    _, m = pool(("alice", ""), alive_interval=300)
    claim_and_run(m)
    assert m.next_deadline() == T0 + 300
    assert m.handle_timer(T0 + 299) == []
    assert m.handle_timer(T0 + 300) == [Alive("c1")]
    assert m.next_deadline() == T0 + 600

    _, m = pool(("alice", "JobLeaseDuration = 90"))
    claim_and_run(m)
    assert m.alive_interval == 30
    _, m = pool(("alice", "JobLeaseDuration = 20"))
    claim_and_run(m)
    assert m.alive_interval == 10


def test_alive_interval_knobs_come_through_settings() -> None:
    knobs = {"ALIVE_INTERVAL": "120", "MAX_CLAIM_ALIVES_MISSED": "3"}
    s = settings_from_config(knobs.get)
    assert (s.alive_interval, s.max_claim_alives_missed) == (120, 3)
    m = ClaimManager(JobQueue(s))
    m.queue.submit("alice", [job()], T0)
    assert m.match(parseOne(SLOT), "c1", (1, 0), T0)[0].alive_interval == 120  # type: ignore[union-attr]


def test_job_lease_expiry_requeues_the_job() -> None:
    """Job leases: a claim silent past JobLeaseDuration is gone (the startd killed it, not
    telling the schedd); its running job goes back to Idle. Every startd message renews the lease."""
    q, m = pool(("alice", "JobLeaseDuration = 600"))
    claim_and_run(m)
    m.handle_timer(T0 + 500)
    m.alive(Alive("c1"), T0 + 500)
    m.handle_timer(T0 + 1099)
    assert m.state("c1") is ClaimState.BUSY
    assert m.handle_timer(T0 + 1100) == []
    assert "c1" not in m.claims
    assert q.status((1, 0)) == JobStatus.IDLE


def test_lease_without_job_lease_is_alives_missed_times_interval() -> None:
    """The lease = MAX_CLAIM_ALIVES_MISSED (6) × alive interval."""
    q, m = pool(("alice", ""), alive_interval=100)
    claim_and_run(m)
    m.handle_timer(T0 + 599)
    assert m.state("c1") is ClaimState.BUSY
    m.handle_timer(T0 + 600)
    assert m.claims == {} and q.status((1, 0)) == JobStatus.IDLE


def test_removing_a_running_job_releases_its_claim() -> None:
    """RELEASE_CLAIM from the schedd kills the job on the claim (code 1017)."""
    q, m = pool(("alice", ""), ("alice", ""))
    claim_and_run(m)
    assert m.remove_job((1, 0), "alice", T0 + 5) == [ReleaseClaim("c1")]
    assert m.claims == {} and (1, 0) not in q.jobs and q.status((2, 0)) == JobStatus.IDLE


def test_startd_release_evicts_the_job() -> None:
    q, m = pool(("alice", ""))
    claim_and_run(m)
    assert m.startd_released("c1", T0 + 5) == []
    assert m.claims == {} and q.status((1, 0)) == JobStatus.IDLE


def test_refused_claim_and_refused_activation() -> None:
    q, m = pool(("alice", ""))
    m.match(parseOne(SLOT), "c1", (1, 0), T0)
    assert m.claim_reply(ClaimReply("c1", False), T0) == [] and m.claims == {}
    m.match(parseOne(SLOT), "c2", (1, 0), T0)
    m.claim_reply(ClaimReply("c2", True), T0)
    assert m.activate_reply(ActivateReply("c2", False), T0) == [ReleaseClaim("c2")]
    assert q.status((1, 0)) == JobStatus.IDLE


def test_a_job_waiting_on_one_claim_is_not_given_to_another() -> None:
    _, m = pool(("alice", ""))
    m.match(parseOne(SLOT), "c1", (1, 0), T0)
    m.match(parseOne(SLOT), "c2", (1, 0), T0)
    m.claim_reply(ClaimReply("c1", True), T0)
    assert m.claim_reply(ClaimReply("c2", True), T0) == [ReleaseClaim("c2")]


def test_illegal_event_names_event_and_state() -> None:
    """h11-style table: a pair missing from TRANSITIONS raises one error naming both."""
    _, m = pool(("alice", ""))
    m.match(parseOne(SLOT), "c1", (1, 0), T0)
    with pytest.raises(IllegalClaimEvent) as info:
        m.job_exited("c1", T0)
    assert info.value.event is ClaimEvent.JOB_EXITED and info.value.state is ClaimState.REQUESTED
    assert "end the job of" in str(info.value) and "Requested" in str(info.value)
    with pytest.raises(UnknownClaim):
        m.alive(Alive("nope"), T0)
    assert (ClaimState.BUSY, ClaimEvent.JOB_EXITED) in TRANSITIONS
    assert '"Busy" -> "Deactivating"' in diagram()


def test_run_end_counts_wall_clock_without_earlier_value() -> None:
    """A job ad without RemoteWallClockTime (a hand-made or transformed ad) still has its run
    counted when it ends, instead of failing on the missing value (HTCondor's job
    accounting)."""
    from htcpool.schedd.store import MemoryStore

    store = MemoryStore()
    q = JobQueue(ScheddSettings(), store)
    ad = parseOne("[JobStatus = 1; Requirements = true]")  # no RemoteWallClockTime
    cluster, _ = q.submit("alice", [ad], 1000)
    job_id = (cluster, 0)
    q.start(job_id, 1010)
    q.finish(job_id, 1070)
    [done] = store.history
    assert done.eval("RemoteWallClockTime") == 60.0
