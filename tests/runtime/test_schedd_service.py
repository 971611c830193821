"""The schedd service in-process: requests over the pool's HTTP endpoint (httpx's ASGI transport),
a fake negotiator, startd and collector recording what the schedd sends, SQLite in a temporary
pool directory, and the core's timers; no processes, no sockets."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd, parseOne
from htcpool.protocol import (
    ActionResult,
    Command,
    DaemonCommand,
    FetchRequests,
    HistoryQuery,
    How,
    IdleJobs,
    InvalidateAd,
    JobAction,
    JobActionKind,
    JobEvent,
    JobUpdate,
    MatchInfo,
    Ok,
    QueryAds,
    QueueQuery,
    Reconnect,
    ReconnectReply,
    Reschedule,
    Submit,
    Submitted,
    UpdateAd,
)
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
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.schedd_service import ScheddService, claim_key
from htcpool.schedd import JobStatus
from htcpool.startd.claim_ids import make_claim_id, without_secret
from tests.runtime.inprocess import T0, Clock, Network, Recorder, daemon, pool_layout, run

CONFIG = 'SCHEDD_NAME = schedd@pool.test\nALIVE_INTERVAL = 20\n'


class Pool:
    """A schedd service, and recorders for the collector, the negotiator and one startd."""

    def __init__(self, root: Path, startd_answer: Any = None) -> None:
        self.root = root
        self.clock = Clock()
        self.network = Network()
        self.layout = layout = pool_layout(root, CONFIG)
        self.collector, self.negotiator, self.startd = Recorder(), Recorder(), Recorder(startd_answer)
        layout.write_address("collector", self.network.serve("collector", self.collector.handle, layout))
        layout.write_address("negotiator", self.network.serve("negotiator", self.negotiator.handle, layout))
        self.startd_url = self.network.serve("startd", self.startd.handle, layout)
        self.daemon = daemon("schedd", layout, self.clock, self.network)
        self.schedd = ScheddService(self.daemon)
        self.url = self.network.serve("schedd", self.schedd.handle, layout)

    async def send(self, message: Any) -> Any:
        """``message`` over HTTP to the schedd; waits until what the schedd sent on is delivered."""
        reply = await self.daemon.client.send(self.url, message)
        await self.daemon.outbox.flush()
        return reply

    async def refused(self, message: Any) -> str:
        with pytest.raises(RequestRefused) as e:
            await self.daemon.client.send(self.url, message)
        assert e.value.status == 400
        return e.value.detail

    async def fire(self, at: float) -> None:
        self.clock.now = at
        await self.schedd.on_timer(at)
        await self.daemon.outbox.flush()

    async def close(self) -> None:
        await self.schedd.stop(How.GRACEFUL)
        await self.daemon.outbox.flush()
        await self.daemon.client.close()


def slot(url: str) -> ClassAd:
    return parseOne(f'[Name = "slot1@host.test"; MyAddress = "{url}"; Memory = 2048; Cpus = 2; '
                    f'StartdIpAddr = "<10.0.0.2:9618>"; Requirements = true]')


def test_a_job_goes_from_submit_to_the_history_through_the_service(tmp_path: Path) -> None:
    pool = Pool(tmp_path)
    log = tmp_path / "job.log"

    async def test() -> None:
        await pool.schedd.start()
        await pool.daemon.outbox.flush()
        [scheduler] = [m.ad for m in pool.collector.of(UpdateAd)]
        assert scheduler["Name"] == "schedd@pool.test" and scheduler["MyAddress"] == pool.url

        ad = parseOne(f'[JobStatus = 1; Cmd = "/bin/true"; UserLog = "{log}"; RequestMemory = 128; '
                      f'Requirements = TARGET.Memory >= RequestMemory; RemoteWallClockTime = 0.0]')
        assert await pool.send(Submit("alice", (ad,))) == Submitted(1, 1)
        assert pool.negotiator.of(Reschedule) == [Reschedule("new jobs")]
        submitter = next(m.ad for m in pool.collector.of(UpdateAd) if m.ad["MyType"] == "Submitter")
        assert submitter["IdleJobs"] == 1
        [queued] = (await pool.send(QueueQuery())).ads
        assert queued["ClusterId"] == 1 and queued["Owner"] == "alice"

        idle = await pool.send(FetchRequests())
        assert isinstance(idle, IdleJobs) and [a["ClusterId"] for a in idle.ads] == [1]
        submitter_name = idle.submitters[0]

        pool.clock.now = T0 + 1
        assert await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, submitter_name)) == Ok()
        [request] = pool.startd.of(RequestClaim)
        assert request.claim_id == "c1" and request.schedd == "schedd@pool.test"
        assert await pool.send(ClaimReply("c1", True, slot="slot1_1@host.test")) == Ok()
        [activate] = pool.startd.of(ActivateClaim)
        assert activate.job["ClusterId"] == 1
        await pool.send(JobUpdate("c1", "slot1_1@host.test", JobEvent.PROVISIONED, resources={"CpusProvisioned": 1}))
        await pool.send(ActivateReply("c1", True))
        [running] = (await pool.send(QueueQuery("JobStatus == 2"))).ads
        assert running["RemoteHost"] == "slot1_1@host.test" and "ClaimId" not in running

        pool.clock.now = T0 + 30
        await pool.send(JobUpdate("c1", "slot1_1@host.test", JobEvent.EXITED, exit_code=0, wall=29.0))
        assert pool.startd.of(DeactivateClaim) == [DeactivateClaim("c1")]
        await pool.send(DeactivateReply("c1", start=True))
        assert pool.startd.of(ReleaseClaim) == [ReleaseClaim("c1")]  # no other job for the claim
        assert (await pool.send(QueueQuery())).ads == ()
        [done] = (await pool.send(HistoryQuery())).ads
        assert done["JobStatus"] == JobStatus.COMPLETED and done["ExitCode"] == 0 and "ClaimId" not in done
        text = log.read_text()
        for header in ("000 (001.000.000)", "001 (001.000.000)", "005 (001.000.000)"):
            assert header in text
        await pool.close()
        assert pool.collector.of(InvalidateAd)[0] == InvalidateAd("Scheduler", "schedd@pool.test")

    run(test)


def test_an_exit_on_an_open_claim_is_answered_with_the_next_activation(tmp_path: Path) -> None:
    """The startd says the claim stays open: the schedd's answer to the exit is the claim's next
    activation itself (committed first), and nothing more goes to the startd for it."""
    pool = Pool(tmp_path)

    async def test() -> None:
        await pool.schedd.start()
        ads = tuple(parseOne('[JobStatus = 1; Cmd = "/bin/true"; RequestMemory = 128; '
                             'Requirements = TARGET.Memory >= RequestMemory]') for _ in range(2))
        assert await pool.send(Submit("alice", ads)) == Submitted(1, 2)
        submitter = (await pool.send(FetchRequests())).submitters[0]
        assert await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, submitter)) == Ok()
        await pool.send(ClaimReply("c1", True, slot="slot1_1@host.test"))
        await pool.send(ActivateReply("c1", True))
        [first] = pool.startd.of(ActivateClaim)
        answer = await pool.send(JobUpdate("c1", "slot1_1@host.test", JobEvent.EXITED, exit_code=0, claim_open=True))
        assert isinstance(answer, ActivateClaim) and answer.claim_id == "c1"
        assert {first.job["ProcId"], answer.job["ProcId"]} == {0, 1}
        assert pool.startd.of(ActivateClaim) == [first] and not pool.startd.of(DeactivateClaim)
        [running] = (await pool.send(QueueQuery("JobStatus == 2"))).ads
        assert running["ProcId"] == answer.job["ProcId"]
        await pool.close()

    run(test)


def test_a_claim_request_answered_with_the_claim_reply_goes_on_to_the_activation(tmp_path: Path) -> None:
    """A startd that decides a claim at once answers the request with its ClaimReply: the schedd
    takes it as if it had been posted, and the activation follows with nothing more from the startd."""
    def answer(message: Any) -> Any:
        if isinstance(message, RequestClaim):
            return ClaimReply(message.claim_id, True, slot="slot1_1@host.test")
        return None

    pool = Pool(tmp_path, startd_answer=answer)

    async def test() -> None:
        await pool.schedd.start()
        ad = parseOne('[JobStatus = 1; Cmd = "/bin/true"; RequestMemory = 128; Requirements = TARGET.Memory >= RequestMemory]')
        assert await pool.send(Submit("alice", (ad,))) == Submitted(1, 1)
        submitter = (await pool.send(FetchRequests())).submitters[0]
        assert await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, submitter)) == Ok()
        await pool.daemon.outbox.flush()
        [activate] = pool.startd.of(ActivateClaim)
        assert activate.claim_id == "c1" and activate.job["ClusterId"] == 1
        await pool.close()

    run(test)


def test_a_submits_reschedule_reaches_the_negotiator_after_its_submitter_ad(tmp_path: Path) -> None:
    """The cycle a Reschedule asks for reads the submitters from the collector: under a slow
    collector, the Reschedule waits for the new Submitter ad instead of overtaking it (the
    cycle would find nothing to do and the jobs wait NEGOTIATOR_INTERVAL)."""
    pool = Pool(tmp_path)
    arrivals: list[str] = []
    collect, negotiate = pool.collector.handle, pool.negotiator.handle

    async def slow_collector(message: Any) -> Any:
        await asyncio.sleep(0.05)
        if isinstance(message, UpdateAd):
            arrivals.append(str(message.ad.get("MyType")))
        return await collect(message)

    async def negotiator(message: Any) -> Any:
        arrivals.append(type(message).__name__)
        return await negotiate(message)

    for name, handler in (("collector", slow_collector), ("negotiator", negotiator)):
        pool.network.serve(name, handler, pool.layout)

    async def test() -> None:
        await pool.schedd.start()
        await pool.daemon.outbox.flush()
        arrivals.clear()
        ad = parseOne('[JobStatus = 1; Cmd = "/bin/true"; RequestMemory = 128; Requirements = true]')
        assert await pool.send(Submit("alice", (ad,))) == Submitted(1, 1)
        assert "Submitter" in arrivals and arrivals.index("Reschedule") > arrivals.index("Submitter"), arrivals
        await pool.close()

    run(test)


def test_only_a_claims_reply_is_committed_without_a_sync(tmp_path: Path) -> None:
    """HTCondor's schedd marks a job running on its claim without syncing the job queue to disk
    (``mark_serial_job_running``); the submit, the job's start (NumJobStarts, the execute event)
    and its exit are synced."""
    pool = Pool(tmp_path)
    steps: list[bool] = []  # each step's transaction: synced or not
    batch = pool.schedd.store.batch

    def recording(*, synced: bool = True) -> Any:
        steps.append(synced)
        return batch(synced=synced)

    pool.schedd.store.batch = recording  # type: ignore[method-assign]

    async def test() -> None:
        await pool.schedd.start()
        ad = parseOne('[JobStatus = 1; Cmd = "/bin/true"; RequestMemory = 128; Requirements = TARGET.Memory >= RequestMemory]')
        await pool.send(Submit("alice", (ad,)))
        submitter = (await pool.send(FetchRequests())).submitters[0]
        await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, submitter))
        steps.clear()
        await pool.send(ClaimReply("c1", True, slot="slot1_1@host.test"))
        assert steps == [False]
        [running] = (await pool.send(QueueQuery("JobStatus == 2"))).ads
        assert running["ClusterId"] == 1
        steps.clear()
        await pool.send(ActivateReply("c1", True))
        await pool.send(JobUpdate("c1", "slot1_1@host.test", JobEvent.EXITED, exit_code=0, wall=1.0))
        assert steps and all(steps)
        await pool.close()

    run(test)


def test_each_claim_has_its_own_outbox_queue_named_without_its_secret() -> None:
    """A partitionable slot's next claim request does not wait behind the activation of the claim
    before it: one outbox queue per claim. The queue's name shows in the outbox's log lines, so it
    leaves the claim's secret out (as HTCondor logs only a claim id's public part)."""
    first = make_claim_id("exec.test", T0, 1, "f00d" * 8, "1")
    second = make_claim_id("exec.test", T0, 2, "beef" * 8, "1")
    keys = {claim_key("http://startd.test", c) for c in (first, second)}
    assert len(keys) == 2 and all(k.startswith("http://startd.test ") for k in keys)
    assert not any("f00d" in k or "beef" in k for k in keys)
    assert without_secret(first) == f"<exec.test>#{int(T0)}#1#1" and without_secret("c1#secret") == "c1"


def test_refusals_commands_and_the_timer(tmp_path: Path) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        await pool.schedd.start()
        assert "does not take QueryAds" in await pool.refused(QueryAds("Machine"))
        assert "no job ads" in await pool.refused(Submit("alice", ()))
        assert "name jobs" in await pool.refused(JobAction(JobActionKind.HOLD, "alice"))
        assert "does not parse" in await pool.refused(QueueQuery("JobStatus =="))
        assert "does not take ReconnectReply" in await pool.refused(ReconnectReply("c", True))
        assert "the schedd does not take the vacate command" in await pool.refused(DaemonCommand(Command.VACATE))
        assert await pool.send(DaemonCommand(Command.RECONFIG)) == Ok("reconfigured")

        await pool.send(Submit("alice", (parseOne("[JobStatus = 1; Requirements = true]"),)))
        result = await pool.send(JobAction(JobActionKind.HOLD, "alice", ("1",)))
        assert result == ActionResult(("1.0",), ())
        await pool.send(JobAction(JobActionKind.RELEASE, "alice", ("1.0",)))
        assert pool.negotiator.of(Reschedule)[-1] == Reschedule("jobs released")
        assert await pool.send(DaemonCommand(Command.RESCHEDULE)) == Ok()
        assert pool.negotiator.of(Reschedule)[-1] == Reschedule("condor_reschedule")

        # the timer comes from the core: the queue's periodic work first, then every SCHEDD_INTERVAL
        assert pool.schedd.next_deadline() == T0
        await pool.fire(T0)
        assert pool.schedd.next_deadline() == T0 + 5  # SCHEDD_INTERVAL = 5 in the personal pool
        sent = len(pool.collector.of(UpdateAd))
        await pool.fire(T0 + 5)
        assert len(pool.collector.of(UpdateAd)) > sent  # the ads again
        await pool.close()

    run(test)


def test_the_cores_warnings_are_logged_and_history_constraints_read_the_clock(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A job whose deferral time cannot be evaluated is named in the schedd's log and the timer
    goes on; a history constraint may read the time of the query."""
    pool = Pool(tmp_path)
    deep = "; ".join(f"Step{i} = Step{i + 1} + 1" for i in range(300))

    async def test() -> None:
        await pool.schedd.start()
        await pool.send(Submit("alice", (parseOne(f"[JobStatus = 1; Requirements = true; DeferralTime = Step0; "
                                                  f"{deep}; Step300 = 1]"),)))
        await pool.send(Submit("alice", (parseOne("[JobStatus = 1; Requirements = true]"),)))
        with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
            await pool.fire(T0)
        warned = [r.getMessage() for r in caplog.records if r.name == "htcpool.schedd"]
        assert [w.split(":")[0] for w in warned] == ["job 1.0"]
        assert pool.schedd.next_deadline() == T0 + 5  # the timer ran to its end

        pool.clock.now = T0 + 7
        await pool.send(JobAction(JobActionKind.REMOVE, "alice", ("2.0",)))
        [gone] = (await pool.send(HistoryQuery("EnteredCurrentStatus == time()"))).ads
        assert gone["ClusterId"] == 2
        assert (await pool.send(HistoryQuery("EnteredCurrentStatus < time() - 1"))).ads == ()
        await pool.close()

    run(test)


def test_claims_are_kept_alive_and_a_restart_reconnects_to_running_jobs(tmp_path: Path) -> None:
    def startd_answer(message: Any) -> Any:
        if isinstance(message, Reconnect):
            return ReconnectReply(message.claim_id, True, "slot1_1@host.test", "Busy")
        return None

    pool = Pool(tmp_path, startd_answer)

    async def test() -> None:
        await pool.schedd.start()
        await pool.send(Submit("alice", (parseOne("[JobStatus = 1; Requirements = true; JobLeaseDuration = 600]"),)))
        await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, "alice"))
        await pool.send(ClaimReply("c1", True))
        await pool.send(ActivateReply("c1", True))
        await pool.fire(T0 + 20)
        assert pool.startd.of(Alive) == [Alive("c1")]
        await pool.close()

        again = Pool(tmp_path, startd_answer)  # the same pool directory: the queue is on disk
        await again.schedd.start()
        assert again.startd.of(Reconnect) == [Reconnect("c1", "schedd@pool.test")]
        assert again.schedd.core.claims.claims["c1"].job == (1, 0)
        [job] = (await again.send(QueueQuery())).ads
        assert job["JobStatus"] == JobStatus.RUNNING
        await again.send(JobUpdate("c1", "slot1_1@host.test", JobEvent.EXITED, exit_code=0))
        assert (await again.send(QueueQuery())).ads == ()
        await again.close()

    run(test)
