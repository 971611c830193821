"""The schedd core's users' requests, ads and timers, back to back with a fake clock."""

from __future__ import annotations

import pytest

from htcpool.protocol import (
    ActionResult,
    AdList,
    FetchRequests,
    InvalidateAd,
    JobAction,
    JobActionKind,
    Ok,
    QueueQuery,
    Reschedule,
    Submit,
    Submitted,
    UpdateAd,
)
from htcpool.protocol.startd import ActivateClaim, Alive, ClaimReply, ReleaseClaim
from htcpool.schedd import (
    Action,
    BadRequest,
    IllegalClaimEvent,
    JobStatus,
    MemoryStore,
    Schedd,
    ScheddSettings,
    SubmitRejected,
    ToCollector,
    ToNegotiator,
)
from htcpool.schedd.eventlog import SUBMIT
from htcpool.schedd.submit_requirements import SubmitRequirement
from tests.schedd.helpers import T0, job, match, run, schedd, submit, to_startd


def ads_sent(actions: list[Action]) -> dict[str, dict[str, object]]:
    out = {}
    for action in actions:
        if isinstance(action, ToCollector) and isinstance(action.message, UpdateAd):
            ad = action.message.ad
            out[f"{ad.eval('MyType')}:{ad.eval('Name')}"] = {a: ad.eval(a) for a in ad.keys()}
    return out


def test_submit_stamps_the_cluster_advertises_and_asks_for_a_cycle() -> None:
    store = MemoryStore()
    core = schedd(store, accounting_domain="example.org")
    out = core.handle(Submit("alice", (job(), job())), T0 + 1)
    assert out.reply == Submitted(1, 2, ())
    ad = store.jobs[(1, 1)]
    assert ad.eval("TotalSubmitProcs") == 2 and ad.eval("User") == "alice@example.org"
    sent = ads_sent(out.actions)
    assert sent["Scheduler:schedd@submit"]["TotalIdleJobs"] == 2
    assert sent["Scheduler:schedd@submit"]["MyAddress"] == "http://submit:1"
    assert sent["Submitter:alice@example.org"]["IdleJobs"] == 2
    assert out.actions[-1] == ToNegotiator(Reschedule("new jobs"))
    assert [e.code for e, _ in core.take_log_events()] == [SUBMIT, SUBMIT]
    with pytest.raises(BadRequest, match="no job ads"):
        core.handle(Submit("alice", ()), T0)


def test_a_rejected_submit_queues_nothing() -> None:
    core = schedd(submit_requirements=[SubmitRequirement.from_text("small", "RequestCpus < 4", None)])
    with pytest.raises(SubmitRejected):
        core.handle(Submit("alice", (job("RequestCpus = 8"),)), T0)
    assert core.queue.jobs == {}


def test_queries_hide_the_schedds_private_attributes() -> None:
    core = schedd()
    submit(core, "", "")
    run(core, (1, 0))
    [running, idle] = core.handle(QueueQuery(), T0).reply.ads
    assert "ClaimId" not in running and "StartdAddress" not in running and "ClaimId" in core.queue.jobs[(1, 0)]
    reply = core.handle(QueueQuery("JobStatus == 1", ("ProcId", "ClaimId")), T0).reply
    assert isinstance(reply, AdList) and [dict(ad.items()) for ad in reply.ads] == [{"ProcId": 1}]
    with pytest.raises(BadRequest, match="does not parse"):
        core.handle(QueueQuery("JobStatus =="), T0)


def test_a_job_held_while_its_claim_is_requested_is_held_and_the_claim_takes_another() -> None:
    """A hold that comes between the match and the startd's claim reply: the job is held (and the
    action says so), the claim lets it go and, once accepted, activates the next idle job. (The
    hold used to be reported as failed, the job held all the same, since a requested claim could
    not be released.)"""
    core = schedd()
    submit(core, "", "")
    match(core, (1, 0))
    out = core.handle(JobAction(JobActionKind.HOLD, "alice", ("1.0",)), T0 + 1)
    assert out.reply == ActionResult(("1.0",), ()) and core.queue.status((1, 0)) == JobStatus.HELD
    assert to_startd(out) == []
    out = core.handle(ClaimReply("c1", True, slot="slot1_1@ep"), T0 + 2)
    [activate] = to_startd(out)
    assert isinstance(activate, ActivateClaim) and (activate.job["ClusterId"], activate.job["ProcId"]) == (1, 1)


def test_job_actions_by_kind() -> None:
    core = schedd()
    submit(core, "", "", "")
    run(core, (1, 0))
    out = core.handle(JobAction(JobActionKind.HOLD, "alice", ("1.0",)), T0 + 1)
    assert out.reply == ActionResult(("1.0",), ())
    assert core.queue.status((1, 0)) == JobStatus.HELD and to_startd(out) == [ReleaseClaim("c1")]
    out = core.handle(JobAction(JobActionKind.RELEASE, "alice", ("1.0",)), T0 + 2)
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    assert ToNegotiator(Reschedule("jobs released")) in out.actions
    out = core.handle(JobAction(JobActionKind.VACATE, "alice", ("1.1",)), T0 + 3)
    assert out.reply == ActionResult((), ("Job 1.1: the job is not running",))
    out = core.handle(JobAction(JobActionKind.PRIO, "alice", ("1.1",), value=3, relative=True), T0 + 4)
    out = core.handle(JobAction(JobActionKind.PRIO, "alice", ("1.1",), value=2, relative=True), T0 + 4)
    assert core.queue.jobs[(1, 1)].eval("JobPrio") == 5
    out = core.handle(JobAction(JobActionKind.REMOVE, "bob", ("1.2",)), T0 + 5)
    assert out.reply.done == () and "may not change" in out.reply.errors[0]
    run(core, (1, 2), "c2", now=T0 + 6)
    out = core.handle(JobAction(JobActionKind.REMOVE, "condor", ("1.2", "7")), T0 + 7)  # a queue super user
    assert out.reply == ActionResult(("1.2",), ("Cluster 7 not found",))
    assert (1, 2) not in core.queue.jobs and to_startd(out) == [ReleaseClaim("c2")]


def test_job_actions_refuse_unknown_kinds_and_empty_targets() -> None:
    core = schedd()
    with pytest.raises(BadRequest, match="expected one of hold, release, remove, vacate, prio"):
        core.handle(JobAction("explode", "alice", ("1",)), T0)  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match="name jobs"):
        core.handle(JobAction(JobActionKind.HOLD, "alice"), T0)
    with pytest.raises(BadRequest, match="does not take"):
        core.handle(Ok(), T0)


def test_the_timer_runs_periodic_policy_keep_alives_and_ads_when_due() -> None:
    core = schedd(schedd_interval=300, alive_interval=100)
    submit(core, "PeriodicHold = NumJobStarts > 0", "")
    run(core, (1, 1))
    assert core.next_deadline(T0) == T0  # the queue's periodic work has not run yet
    out = core.handle_timer(T0 + 1)
    assert core.queue.status((1, 0)) == JobStatus.IDLE  # not started yet: PeriodicHold is false
    assert ads_sent(out.actions) == {}  # advertised at the submit, next in 60 s
    assert core.queue.next_deadline(T0 + 1) == T0 + 61
    assert core.next_deadline(T0 + 1) == T0 + 60  # the ads are due first
    out = core.handle_timer(T0 + 60)
    assert "Scheduler:schedd@submit" in ads_sent(out.actions)
    assert core.next_deadline(T0 + 60) == T0 + 61
    out = core.handle_timer(T0 + 100)
    assert to_startd(out) == [Alive("c1")]  # the claim's keep-alive
    core.queue.jobs[(1, 0)]["NumJobStarts"] = 1
    core.handle_timer(T0 + 101)  # the periodic work ran at T0 + 100: next at T0 + 160
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    core.handle_timer(T0 + 160)
    assert core.queue.status((1, 0)) == JobStatus.HELD


def test_a_job_that_cannot_be_evaluated_does_not_stop_the_timer() -> None:
    """A job whose deferral time cannot be evaluated at all is passed over by the periodic work
    and the offers, with a warning for the driver's log; the other jobs' periodic expressions
    still run, at the timer's time."""
    core = schedd(schedd_interval=300)
    deep = "; ".join(f"Step{i} = Step{i + 1} + 1" for i in range(300))
    submit(core, f"DeferralTime = Step0; {deep}; Step300 = 1", "PeriodicHold = CurrentTime >= 1000050")
    core.handle_timer(T0 + 1)
    (warning,) = core.take_warnings()
    assert warning.startswith("job 1.0: periodic evaluation failed: ")
    assert core.queue.status((1, 1)) == JobStatus.IDLE
    idle = core.handle(FetchRequests(()), T0 + 2).reply
    assert [(ad["ClusterId"], ad["ProcId"]) for ad in idle.ads] == [(1, 1)]
    core.handle_timer(T0 + 61)
    assert core.queue.status((1, 1)) == JobStatus.HELD
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    assert [w.split(":")[0] for w in core.take_warnings()] == ["job 1.0"]  # again, at each run
    assert core.take_warnings() == []


def test_an_idle_deferral_job_past_its_window_is_held_by_the_timer() -> None:
    core = schedd()
    submit(core, f"DeferralTime = {int(T0) + 10}; DeferralWindow = 5")
    core.handle_timer(T0 + 15)
    assert core.queue.status((1, 0)) == JobStatus.IDLE
    core.handle_timer(T0 + 16 + 60)
    assert core.queue.jobs[(1, 0)].eval("HoldReasonCode") == 20


def test_reconfigure_and_stop() -> None:
    core = Schedd(ScheddSettings(schedd_name="s@h", schedd_interval=300), T0)
    core.reconfigure(ScheddSettings(schedd_name="s@h", schedd_interval=20))
    assert core.queue.settings.schedd_interval == 20 and core.claims.settings is core.settings
    assert core.stop().actions == [ToCollector(InvalidateAd("Scheduler", "s@h")),
                                   ToCollector(InvalidateAd("Submitter", constraint='ScheddName == "s@h"'))]


def test_actions_of_a_handler_that_raised_go_out_with_the_next_outcome() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    # an action is pending when a handler fails (here: a second reply for a Busy claim)
    core.emit(ToNegotiator(Reschedule("pending")))
    with pytest.raises(IllegalClaimEvent):
        core.handle(ClaimReply("c1", True), T0 + 1)
    assert ToNegotiator(Reschedule("pending")) in core.handle_timer(T0 + 2).actions
