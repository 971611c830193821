"""A schedd killed between deciding a job's activation and hearing that it started (issue:
a completed job is never run again).

The schedd service runs in-process (``tests/runtime/inprocess.py``); the fake startd "runs" a
job by appending ``cluster.proc run`` to a file for every ``ActivateClaim`` it takes, so the
file counts the runs. A kill -9 is modelled by dropping the service without stopping it: its
outbox is cancelled (what was not yet delivered is lost) and nothing more is written; the next
service opens the same pool directory, as the master's restart would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from htcpool.classad import parseOne
from htcpool.protocol import (
    FetchRequests,
    HistoryQuery,
    JobEvent,
    JobUpdate,
    MatchInfo,
    Ok,
    QueueQuery,
    Reconnect,
    ReconnectReply,
    Submit,
)
from htcpool.protocol.startd import (
    UNKNOWN_CLAIM,
    ActivateClaim,
    ActivateReply,
    Alive,
    ClaimReply,
    DeactivateClaim,
    ReleaseClaim,
)
from htcpool.schedd import JobStatus
from tests.runtime.inprocess import T0, run
from tests.runtime.test_schedd_service import Pool, slot

JOB = "[JobStatus = 1; Requirements = true; JobLeaseDuration = 600]"


class FakeStartd:
    """A startd that runs a job (one line in ``runs``) per activation and answers a reconnect
    with what it knows of the claim: ``activated`` (the last job on it) and ``busy``."""

    def __init__(self, runs: Path) -> None:
        self.runs = runs
        self.activated = ""
        self.busy = False

    def answer(self, message: Any) -> Any:
        if isinstance(message, ActivateClaim):
            job = f"{message.job['ClusterId']}.{message.job['ProcId']}"
            with self.runs.open("a") as f:
                f.write(f"{job} run\n")
            self.activated, self.busy = job, True
        if isinstance(message, Reconnect):
            return ReconnectReply(message.claim_id, True, "slot1@host.test", "Busy" if self.busy else "Idle",
                                  self.activated)
        return None


async def crash(pool: Pool) -> None:
    """kill -9: whatever the outbox still holds is lost; the queue file keeps what was committed."""
    await pool.daemon.outbox.close()
    pool.schedd.store.close()
    await pool.daemon.client.close()


async def claimed_then_killed(tmp_path: Path, startd: FakeStartd, deliver: bool) -> Pool:
    """Submit one job, match and claim it, and kill the schedd right after it decided the
    activation: with ``deliver`` the activation reached the startd, else it was still queued."""
    pool = Pool(tmp_path, startd.answer)
    await pool.schedd.start()
    await pool.send(Submit("alice", (parseOne(JOB),)))
    await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, "alice"))
    if deliver:
        await pool.send(ClaimReply("c1", True))
    else:
        del pool.network.apps["startd.test"]  # the activation cannot leave before the kill
        await pool.daemon.client.send(pool.url, ClaimReply("c1", True))
    await crash(pool)
    return pool


def restarted(tmp_path: Path, startd: FakeStartd) -> Pool:
    return Pool(tmp_path, startd.answer)


def runs_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def check(test: Callable[[], Any]) -> None:
    run(test)


def test_a_schedd_killed_after_the_activation_left_reconnects_and_the_job_runs_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    startd = FakeStartd(runs)

    async def test() -> None:
        await claimed_then_killed(tmp_path / "pool", startd, deliver=True)
        assert runs_of(runs) == ["1.0 run"]
        again = restarted(tmp_path / "pool", startd)
        await again.schedd.start()
        await again.daemon.outbox.flush()
        [job] = (await again.send(QueueQuery())).ads
        assert job["JobStatus"] == JobStatus.RUNNING
        assert again.schedd.core.queue.jobs[(1, 0)]["ClaimId"] == "c1"
        assert again.schedd.core.claims.claims["c1"].job == (1, 0)  # adopted, not re-run
        idle = await again.send(FetchRequests())
        assert idle.ads == ()  # nothing for the negotiator to match a second time
        await again.send(JobUpdate("c1", "slot1@host.test", JobEvent.EXITED, exit_code=0))
        assert (await again.send(QueueQuery())).ads == ()
        assert [ad["ClusterId"] for ad in (await again.send(HistoryQuery())).ads] == [1]
        assert again.startd.of(ActivateClaim) == []
        assert runs_of(runs) == ["1.0 run"]
        await again.close()

    check(test)


def test_a_job_that_completed_while_the_schedd_was_down_is_completed_not_rerun(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    startd = FakeStartd(runs)

    async def test() -> None:
        await claimed_then_killed(tmp_path / "pool", startd, deliver=True)
        startd.busy = False  # the job exited; its exit waits in the startd's outbox
        again = restarted(tmp_path / "pool", startd)
        await again.schedd.start()
        await again.daemon.outbox.flush()
        assert again.schedd.core.claims.claims["c1"].job == (1, 0)
        await again.send(JobUpdate("c1", "slot1@host.test", JobEvent.EXITED, exit_code=0))
        [done] = (await again.send(HistoryQuery())).ads
        assert done["JobStatus"] == JobStatus.COMPLETED and done["NumJobStarts"] == 1
        assert again.startd.of(DeactivateClaim) == [DeactivateClaim("c1")]
        assert runs_of(runs) == ["1.0 run"]
        await again.close()

    check(test)


def test_an_exit_that_arrives_before_the_reconnect_answer_completes_the_job(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    startd = FakeStartd(runs)

    async def test() -> None:
        await claimed_then_killed(tmp_path / "pool", startd, deliver=True)
        again = restarted(tmp_path / "pool", startd)
        del again.network.apps["startd.test"]  # the reconnect question goes unanswered for now
        await again.schedd.start()
        await again.send(JobUpdate("c1", "slot1@host.test", JobEvent.EXITED, exit_code=0))
        [done] = (await again.send(HistoryQuery())).ads
        assert done["JobStatus"] == JobStatus.COMPLETED
        assert (await again.send(QueueQuery())).ads == ()
        await crash(again)
        assert runs_of(runs) == ["1.0 run"]

    check(test)


def test_an_activation_that_never_left_sends_the_job_back_to_idle_and_frees_the_claim(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    startd = FakeStartd(runs)

    async def test() -> None:
        await claimed_then_killed(tmp_path / "pool", startd, deliver=False)
        assert runs_of(runs) == []
        again = restarted(tmp_path / "pool", startd)
        await again.schedd.start()
        await again.daemon.outbox.flush()
        [job] = (await again.send(QueueQuery())).ads
        assert job["JobStatus"] == JobStatus.IDLE
        assert again.startd.of(ReleaseClaim) == [ReleaseClaim("c1")]
        assert "c1" not in again.schedd.core.claims.claims
        # the job is matched again and runs once
        await again.send(MatchInfo("c2", slot(again.startd_url), 1, 0, "alice"))
        await again.send(ClaimReply("c2", True))
        await again.send(ActivateReply("c2", True))
        await again.send(JobUpdate("c2", "slot1@host.test", JobEvent.EXITED, exit_code=0))
        assert [ad["ClusterId"] for ad in (await again.send(HistoryQuery())).ads] == [1]
        assert runs_of(runs) == ["1.0 run"]
        await again.close()

    check(test)


def test_a_keep_alive_the_startd_does_not_know_sends_the_job_back_at_once(tmp_path: Path) -> None:
    """A restarted startd never knew the claim: its answer to the keep-alive ends the claim and
    the job goes back to Idle, long before the job's 600 s lease would have."""

    def answer(message: Any) -> Any:
        return Ok(UNKNOWN_CLAIM) if isinstance(message, Alive) else None

    pool = Pool(tmp_path, answer)

    async def test() -> None:
        await pool.schedd.start()
        await pool.send(Submit("alice", (parseOne(JOB),)))
        await pool.send(MatchInfo("c1", slot(pool.startd_url), 1, 0, "alice"))
        await pool.send(ClaimReply("c1", True))
        await pool.send(ActivateReply("c1", True))
        await pool.fire(T0 + 200)  # the keep-alive is due (ALIVE_INTERVAL, lowered by the lease)
        await pool.daemon.outbox.flush()
        assert pool.startd.of(Alive) == [Alive("c1")]
        [job] = (await pool.send(QueueQuery())).ads
        assert job["JobStatus"] == JobStatus.IDLE
        assert "c1" not in pool.schedd.core.claims.claims
        await pool.close()

    check(test)
