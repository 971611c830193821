"""A restarted schedd's core finds its running jobs again (job leases), with a fake clock."""

from __future__ import annotations

from htcpool.classad import ClassAd, parseOne
from htcpool.protocol import JobEvent, Reconnect, ReconnectReply
from htcpool.schedd import (
    AskStartd,
    ClaimState,
    JobStatus,
    MemoryStore,
    Schedd,
    ScheddSettings,
    StartdUnreachable,
)
from htcpool.schedd.reconnect import NO_CLAIM, RECONNECT_FAILED
from tests.schedd.helpers import STARTD, T0, update


def running(cluster: int, claim: str | None, lease: int = 600) -> ClassAd:
    claim_attrs = f'ClaimId = "{claim}"; StartdAddress = "{STARTD}";' if claim else ""
    return parseOne(f'[ClusterId = {cluster}; ProcId = 0; Owner = "alice"; JobStatus = 2; {claim_attrs} '
                    f'JobCurrentStartDate = {int(T0) - 100}; LastJobLeaseRenewal = {int(T0) - 50}; '
                    f'JobLeaseDuration = {lease}; RemoteWallClockTime = 0.0]')


def restarted(*jobs: ClassAd) -> tuple[Schedd, list[AskStartd]]:
    core = Schedd(ScheddSettings(schedd_name="schedd@submit"), T0, store=MemoryStore(),
                  jobs={(ad.eval("ClusterId"), 0): ad for ad in jobs})
    asks = [a for a in core.start(T0, "http://submit:1", "<x>").actions if isinstance(a, AskStartd)]
    return core, asks


def test_each_running_job_with_a_claim_is_asked_about_and_the_others_requeued() -> None:
    core, asks = restarted(running(1, "c1"), running(2, None))
    assert asks == [AskStartd(STARTD, Reconnect("c1", "schedd@submit"))]
    assert core.queue.status((2, 0)) == JobStatus.IDLE
    [evicted] = [e for e, _ in core.take_log_events() if e.code == 4]
    assert evicted.reason == NO_CLAIM
    assert core.next_deadline(T0) == T0  # periodic work due; a retry in 2 s after that
    assert core.reconnection.next_deadline() == T0 + 2


def test_a_live_claim_is_adopted_and_the_job_runs_on() -> None:
    core, _ = restarted(running(1, "c1"))
    core.handle(ReconnectReply("c1", True, "slot1_1@ep", "Busy"), T0 + 1)
    claim = core.claims.claims["c1"]
    assert claim.state is ClaimState.BUSY and claim.slot_ad.eval("Name") == "slot1_1@ep"
    assert core.queue.status((1, 0)) == JobStatus.RUNNING and core.reconnection.jobs == {}
    assert core.startd_addresses["c1"] == STARTD
    core.handle(update("c1", JobEvent.EXITED, exit_code=0), T0 + 5)  # its exit now finishes it
    assert (1, 0) not in core.queue.jobs


def test_a_claim_the_startd_no_longer_has_sends_the_job_back_to_idle() -> None:
    core, _ = restarted(running(1, "c1"))
    core.handle(ReconnectReply("c1", False), T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.IDLE and "c1" not in core.claims.claims


def test_an_unreachable_startd_is_asked_again_until_the_lease_runs_out() -> None:
    core, _ = restarted(running(1, "c1", lease=60))  # renewed at T0 - 50: the lease ends at T0 + 10
    core.handle(StartdUnreachable("c1"), T0)  # the first failure does not give up
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    assert [a for a in core.handle_timer(T0 + 1).actions if isinstance(a, AskStartd)] == []  # not yet due
    retries = [a for a in core.handle_timer(T0 + 2).actions if isinstance(a, AskStartd)]
    assert retries == [AskStartd(STARTD, Reconnect("c1", "schedd@submit"))]
    core.handle(StartdUnreachable("c1"), T0 + 3)  # within the lease: wait
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    core.handle_timer(T0 + 11)
    core.handle(StartdUnreachable("c1"), T0 + 11)
    assert core.queue.status((1, 0)) == JobStatus.IDLE and core.reconnection.jobs == {}
    [evicted] = [e for e, _ in core.take_log_events() if e.code == 4]
    assert evicted.reason == RECONNECT_FAILED
    assert core.reconnection.next_deadline() is None


def test_an_exit_heard_while_reconnecting_finishes_the_job_and_ends_the_reconnection() -> None:
    core, _ = restarted(running(1, "c1"))
    core.handle(update("c1", JobEvent.EXITED, exit_code=1), T0 + 1)
    assert (1, 0) not in core.queue.jobs and core.reconnection.jobs == {}
    core.handle(ReconnectReply("c1", True, "slot1_1@ep"), T0 + 2)  # a late answer changes nothing
    assert core.claims.claims == {}
