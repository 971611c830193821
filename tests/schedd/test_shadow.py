"""What a startd's replies and reports do to claims and jobs, back to back with a fake clock."""

from __future__ import annotations

from htcpool.classad import parseOne
from htcpool.deferral import HOLD_MISSED_DEFERRAL, MISSED_DEFERRAL_REASON
from htcpool.protocol import JobEvent, Ok, Reschedule
from htcpool.protocol.startd import (
    ActivateClaim,
    ActivateReply,
    ClaimReply,
    DeactivateClaim,
    DeactivateReply,
    HoldJob,
    Notice,
    NotifySchedd,
    ReleaseClaim,
)
from htcpool.schedd import (
    ClaimState,
    JobStatus,
    MemoryStore,
    Schedd,
    ScheddSettings,
    ToNegotiator,
    ToStartd,
)
from htcpool.schedd.eventlog import IMAGE_SIZE, TERMINATED
from htcpool.schedd.shadow import HOLD_STARTER_ERROR
from tests.schedd.helpers import STARTD, T0, match, run, schedd, submit, to_startd, update


def test_claim_activate_run_exit_and_the_job_leaves_for_the_history() -> None:
    store = MemoryStore()
    core = schedd(store)
    submit(core, "")
    match(core, (1, 0))
    [activate] = to_startd(core.handle(ClaimReply("c1", True, slot="slot1_1@ep"), T0 + 1))
    assert isinstance(activate, ActivateClaim) and activate.job.eval("ClusterId") == 1
    assert core.claims.claims["c1"].slot_ad.eval("Name") == "slot1_1@ep"  # the dynamic slot's name
    assert core.handle(ActivateReply("c1", True), T0 + 2).reply == Ok()
    ad = core.queue.jobs[(1, 0)]
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    assert ad.eval("ClaimId") == "c1" and ad.eval("StartdAddress") == STARTD
    assert ad.eval("LastJobLeaseRenewal") == T0 + 2 and store.jobs[(1, 0)].eval("ClaimId") == "c1"

    out = core.handle(update("c1", JobEvent.EXITED, exit_code=3, wall=58.0, user_cpu=1.5, sys_cpu=0.5), T0 + 60)
    assert to_startd(out) == [DeactivateClaim("c1")]
    assert (1, 0) not in core.queue.jobs
    [done] = store.history
    assert done.eval("ExitCode") == 3 and done.eval("JobStatus") == JobStatus.COMPLETED
    assert done.eval("ActivationDuration") == 58 and done.eval("ActivationExecutionDuration") == 58
    assert done.eval("CumulativeRemoteUserCpu") == 1.5 and done.eval("CumulativeRemoteSysCpu") == 0.5
    assert any(e.code == TERMINATED for e, _ in core.take_log_events())
    # the claim has no further job: released, and the negotiator hears nothing (no idle jobs)
    out = core.handle(DeactivateReply("c1", start=True), T0 + 61)
    assert to_startd(out) == [ReleaseClaim("c1")] and "c1" not in core.claims.claims


def test_an_accepted_activation_brings_what_the_slot_gives_the_job() -> None:
    """The startd's reply to an activation carries the job's provisioned resources (one message
    where a provisioned update used to come first): they go into the job ad as it starts."""
    core = schedd()
    submit(core, "")
    match(core, (1, 0))
    core.handle(ClaimReply("c1", True, slot="slot1_1@ep"), T0)
    core.handle(ActivateReply("c1", True, resources={"CpusProvisioned": 2, "MemoryProvisioned": 512,
                                                      "ProvisionedResources": "Cpus,Memory",
                                                      "CondorScratchDir": "/x"}), T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    assert (ad.eval("CpusProvisioned"), ad.eval("MemoryProvisioned"), ad.eval("CondorScratchDir")) == (2, 512, "/x")
    assert ad.eval("ProvisionedResources") == "Cpus,Memory"


def test_provisioned_suspended_continued_and_started() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    core.handle(update("c1", JobEvent.PROVISIONED, resources={"CpusProvisioned": 2, "CondorScratchDir": "/x"}),
                T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert ad.eval("CpusProvisioned") == 2 and ad.eval("CondorScratchDir") == "/x"
    core.handle(update("c1", JobEvent.SUSPENDED, processes=3), T0 + 5)
    assert core.queue.status((1, 0)) == JobStatus.SUSPENDED and ad.eval("TotalSuspensions") == 1
    core.handle(update("c1", JobEvent.SUSPENDED), T0 + 6)  # already suspended: nothing more
    assert ad.eval("TotalSuspensions") == 1
    core.handle(update("c1", JobEvent.CONTINUED), T0 + 15)
    assert core.queue.status((1, 0)) == JobStatus.RUNNING and ad.eval("CumulativeSuspensionTime") == 10
    core.handle(update("c1", JobEvent.STARTED), T0 + 20)  # only renews the lease
    assert ad.eval("LastJobLeaseRenewal") == T0 + 20 and core.claims.claims["c1"].last_heard == T0 + 20


def test_usage_is_recorded_under_htcondors_names_and_logged_when_the_image_grows() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    core.take_log_events()
    core.handle(update("c1", JobEvent.USAGE, image_size_kb=5000, rss_kb=2048, user_cpu=2.0, sys_cpu=1.0), T0 + 10)
    ad = core.queue.jobs[(1, 0)]
    assert ad.eval("ImageSize") == 5000 and ad.eval("ResidentSetSize") == 2048
    assert ad.eval("MemoryUsage") == 2 and ad.eval("RemoteUserCpu") == 2.0 and ad.eval("RemoteSysCpu") == 1.0
    [(event, logged_ad)] = core.take_log_events()
    assert event.code == IMAGE_SIZE and event.image_size == 5000 and event.memory_usage == 2
    assert logged_ad is ad
    core.handle(update("c1", JobEvent.USAGE, image_size_kb=4000, rss_kb=1024), T0 + 20)
    assert ad.eval("ImageSize") == 5000 and ad.eval("ResidentSetSize") == 1024  # the image never shrinks
    assert core.take_log_events() == []
    core.handle(update("c1", JobEvent.USAGE, image_size_kb=6000), T0 + 30)
    assert [e.image_size for e, _ in core.take_log_events()] == [6000]


def test_a_start_error_holds_with_code_6_and_releases_the_claim() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    out = core.handle(update("c1", JobEvent.ERROR, message="no such file"), T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert core.queue.status((1, 0)) == JobStatus.HELD
    assert ad.eval("HoldReasonCode") == HOLD_STARTER_ERROR == 6
    assert ad.eval("HoldReason") == "Error from starter: no such file"
    assert to_startd(out) == [ReleaseClaim("c1")] and "c1" not in core.claims.claims


def test_a_missed_deferral_holds_with_code_20_and_releases_the_claim() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    out = core.handle(update("c1", JobEvent.MISSED_DEFERRAL), T0 + 1)
    ad = core.queue.jobs[(1, 0)]
    assert ad.eval("HoldReasonCode") == HOLD_MISSED_DEFERRAL == 20
    assert ad.eval("HoldReason") == MISSED_DEFERRAL_REASON
    assert to_startd(out) == [ReleaseClaim("c1")]


def test_a_job_the_startd_killed_keeps_running_until_the_claim_ends() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    out = core.handle(update("c1", JobEvent.EXITED, killed=True, wall=5.0), T0 + 5)
    assert to_startd(out) == [] and core.queue.status((1, 0)) == JobStatus.RUNNING
    assert core.queue.jobs[(1, 0)].eval("ActivationDuration") == 5
    out = core.handle(NotifySchedd("schedd@submit", "c1", Notice.RELEASE, "preempted"), T0 + 6)
    assert core.queue.status((1, 0)) == JobStatus.IDLE and "c1" not in core.claims.claims
    assert out.actions == [ToNegotiator(Reschedule("a claim ended"))]
    [evicted] = [e for e, _ in core.take_log_events() if e.code == 4]
    assert evicted.reason == "preempted"


def test_hold_job_from_the_startd_holds_the_running_job() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    core.handle(HoldJob("slot1_1@ep", "c1", "PREEMPT with WANT_HOLD", 21, 4), T0 + 3)
    ad = core.queue.jobs[(1, 0)]
    assert core.queue.status((1, 0)) == JobStatus.HELD
    assert (ad.eval("HoldReasonCode"), ad.eval("HoldReasonSubCode")) == (21, 4)
    assert ad.eval("LastJobLeaseRenewal") == T0 + 3


def test_refused_claims_and_activations() -> None:
    core = schedd()
    submit(core, "")
    match(core, (1, 0))
    assert to_startd(core.handle(ClaimReply("c1", False), T0)) == [] and "c1" not in core.claims.claims
    match(core, (1, 0), "c2")
    core.handle(ClaimReply("c2", True), T0)
    out = core.handle(ActivateReply("c2", False), T0)
    assert to_startd(out) == [ReleaseClaim("c2")]
    assert ToNegotiator(Reschedule("a claim was released")) in out.actions  # the job is idle again
    assert core.queue.status((1, 0)) == JobStatus.IDLE


def test_an_exit_about_an_unknown_claim_finishes_the_job_holding_that_claim_id() -> None:
    """After a restart the schedd may hear of a job's exit before it adopted the claim."""
    store = MemoryStore()
    running = parseOne('[ClusterId = 4; ProcId = 0; Owner = "alice"; JobStatus = 2; ClaimId = "old"; '
                       'StartdAddress = "http://startd.example:9618"; JobCurrentStartDate = 999000; '
                       'RemoteWallClockTime = 0.0]')
    core = Schedd(ScheddSettings(), T0, store=store, jobs={(4, 0): running})
    out = core.handle(update("old", JobEvent.EXITED, exit_code=0), T0)
    assert out.reply == Ok("unknown claim") and (4, 0) not in core.queue.jobs
    assert [ad.eval("ClusterId") for ad in store.history] == [4]
    # a killed job's exit says nothing about completion
    assert core.handle(update("gone", JobEvent.EXITED, killed=True), T0).reply == Ok("unknown claim")


def test_an_accepted_claim_the_schedd_does_not_hold_is_released() -> None:
    core = schedd()
    leftovers = parseOne('[Name = "slot1@ep"; MyAddress = "http://other:1"; ClaimId = "p2"]')
    out = core.handle(ClaimReply("stray", True, leftovers=leftovers), T0)
    assert out.actions == [ToStartd("http://other:1", ReleaseClaim("stray"))]
    assert core.handle(ClaimReply("stray", False), T0).actions == []
    for message in (ActivateReply("x", True), DeactivateReply("x", True), NotifySchedd("s", "x", Notice.RELEASE)):
        out = core.handle(message, T0)
        assert out.reply == Ok("unknown claim") and out.actions == []
    out = core.handle(HoldJob("slot", "x", "why"), T0)  # a hold for no job of ours: nothing to do
    assert out.reply == Ok() and out.actions == []


def test_every_report_renews_the_claims_lease() -> None:
    core = schedd(alive_interval=10, max_claim_alives_missed=3)
    submit(core, "")
    run(core, (1, 0))
    claim = core.claims.claims["c1"]
    assert claim.state is ClaimState.BUSY and claim.last_heard == T0
    core.handle(update("c1", JobEvent.USAGE), T0 + 25)
    assert claim.last_heard == T0 + 25
    core.handle_timer(T0 + 40)  # within the renewed lease (30 s): still held
    assert "c1" in core.claims.claims
    core.handle_timer(T0 + 56)
    assert "c1" not in core.claims.claims and core.queue.status((1, 0)) == JobStatus.IDLE
