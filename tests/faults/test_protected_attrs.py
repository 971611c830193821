"""A submission cannot set what the schedd owns, and an invalid stored job is held at start-up.

The attacks: ``+JobStatus = undefined`` (or a string, 77, Running) used to be queued, after
which every submit and rm failed and the schedd died at every start; claim and shadow
attributes and an ``Owner`` naming someone else were taken as sent. Each is tried on the
core and, where the store is involved, on the schedd service in-process with SQLite.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from htcpool.classad import ClassAd, parseOne
from htcpool.protocol import (
    JobAction,
    JobActionKind,
    QueueQuery,
    Submit,
    Submitted,
)
from htcpool.protocol.schedd import EditJobs, NewCluster
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.queue_store import SqliteQueueStore
from htcpool.runtime.schedd_service import ScheddService
from htcpool.schedd import JobStatus, MemoryStore, Transform
from htcpool.schedd.errors import SubmitRejected
from htcpool.schedd.factory import MaterializeMode
from htcpool.schedd.quarantine import HOLD_QUARANTINED
from tests.runtime.inprocess import Clock, Network, daemon, pool_layout, run
from tests.schedd.helpers import T0, schedd
from tests.schedd.test_factory import submit_factory

BAD_STATUSES = ["undefined", '"x"', "77", "2", "1.0", "error", "-1"]


def _ad(extra: str) -> ClassAd:
    return parseOne(f'[Owner = undefined; Requirements = true; JobStatus = 1; {extra}]')


@pytest.mark.parametrize("value", BAD_STATUSES)
def test_a_submitted_status_other_than_idle_or_held_refuses_the_cluster(value: str) -> None:
    core = schedd(MemoryStore())
    with pytest.raises(SubmitRejected, match=r"JobStatus = .+: .*Idle \(1\) or Held \(5\) only"):
        core.handle(Submit("alice", (_ad(""), _ad(f"JobStatus = {value}"))), T0)
    assert core.queue.jobs == {} and core.queue.store.jobs == {}  # type: ignore[attr-defined]
    # the queue goes on: the next submit and an rm work
    cluster = core.handle(Submit("alice", (_ad(""),)), T0).reply.cluster
    done = core.handle(JobAction(JobActionKind.REMOVE, "alice", (str(cluster),)), T0).reply
    assert done.done == (f"{cluster}.0",)


def test_idle_held_and_a_missing_status_are_taken() -> None:
    core = schedd(MemoryStore())
    held = parseOne('[Owner = undefined; Requirements = true; JobStatus = 5; HoldReasonCode = 15]')
    computed = _ad("JobStatus = 2 + 3")
    missing = parseOne("[Requirements = true]")
    cluster = core.handle(Submit("alice", (_ad(""), held, computed, missing)), T0).reply.cluster
    statuses = [core.queue.jobs[(cluster, p)]["JobStatus"] for p in range(4)]
    assert statuses == [JobStatus.IDLE, JobStatus.HELD, JobStatus.HELD, JobStatus.IDLE]


def test_claim_and_shadow_attributes_are_dropped_with_a_warning_naming_each() -> None:
    core = schedd(MemoryStore())
    reply = core.handle(Submit("alice", (_ad('ClaimId = "<forged>"; RemoteHost = "slot1@evil"; '
                                              'LastJobStatus = "q"; OsUser = "root"; ClusterId = 99; '
                                              'QDate = 5; NumJobStarts = 0'),)), T0).reply
    ad = core.queue.jobs[(reply.cluster, 0)]
    for name in ("ClaimId", "RemoteHost", "LastJobStatus", "OsUser"):
        assert name not in ad
        assert f"{name} is set by the schedd; the submitted value is ignored" in reply.warnings
    assert (ad["ClusterId"], ad["QDate"], ad["Owner"], ad["NumJobStarts"]) == (reply.cluster, int(T0), "alice", 0)


def test_an_owner_naming_someone_else_is_replaced_with_a_warning() -> None:
    core = schedd(MemoryStore())
    reply = core.handle(Submit("alice", (_ad('Owner = "bob"'), _ad('Owner = "bob"'))), T0).reply
    assert reply.warnings == ('Owner = "bob" is replaced: a job\'s owner is the user who submits it (alice)',)
    assert {ad["Owner"] for ad in core.queue.jobs.values()} == {"alice"}
    cluster = core.handle(Submit("alice", (_ad('Owner = "alice"'),)), T0).reply.cluster
    assert core.handle(Submit("alice", (_ad('Owner = "alice"'),)), T0).reply.warnings == ()
    assert core.queue.jobs[(cluster, 0)]["Owner"] == "alice"


def test_secure_attributes_are_refused_when_the_schedd_is_told_not_to_ignore_them() -> None:
    core = schedd(MemoryStore(), secure_job_attrs=frozenset({"AuthTokenSubject", "MySecret"}),
                  refuse_secure_job_attrs=True)
    with pytest.raises(SubmitRejected, match="MySecret is a secure attribute"):
        core.handle(Submit("alice", (_ad('MySecret = "x"'),)), T0)
    cluster = core.handle(Submit("alice", (_ad(""),)), T0).reply.cluster
    refused = core.handle(EditJobs("alice", ("MySecret",), ('"x"',), (str(cluster),)), T0).reply
    assert refused.done == () and "MySecret is a secure attribute" in refused.errors[0]


def test_a_retried_submit_of_a_reserved_cluster_is_answered_and_not_queued_twice() -> None:
    core = schedd(MemoryStore())
    cluster = core.handle(NewCluster("alice"), T0).reply.cluster
    first = core.handle(Submit("alice", (_ad(""), _ad("")), cluster), T0).reply
    again = core.handle(Submit("alice", (_ad(""), _ad("")), cluster), T0 + 1).reply
    assert first == Submitted(cluster, 2, ())
    assert (again.cluster, again.count) == (cluster, 2) and "already submitted" in again.warnings[0]
    assert sorted(core.queue.jobs) == [(cluster, 0), (cluster, 1)]
    with pytest.raises(SubmitRejected, match="not reserved for bob"):  # someone else's id: refused
        core.handle(Submit("bob", (_ad(""), _ad("")), cluster), T0 + 2)


def _service(root: Path) -> ScheddService:
    layout = pool_layout(root, "SCHEDD_NAME = schedd@pool.test\n")
    return ScheddService(daemon("schedd", layout, Clock(), Network()))


def test_the_attack_through_the_service_is_refused_and_the_schedd_restarts(tmp_path: Path) -> None:
    first = _service(tmp_path)

    async def attack() -> None:
        await first.start()
        with pytest.raises(RequestRefused, match="JobStatus = undefined") as refused:
            await first.handle(Submit("alice", (_ad("JobStatus = undefined"),)))
        assert refused.value.status == 400
        reply = await first.handle(Submit("alice", (_ad(""),)))
        assert reply.count == 1
        await first.handle(JobAction(JobActionKind.REMOVE, "alice", (str(reply.cluster),)))
        first.store.close()

    run(attack)
    second = _service(tmp_path)  # a restart reads the same store

    async def restarted() -> None:
        await second.start()
        assert (await second.handle(QueueQuery())).ads == ()
        second.store.close()

    run(restarted)


def test_an_invalid_stored_job_is_held_and_logged_and_the_schedd_starts(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    spool = tmp_path / "spool"
    spool.mkdir(parents=True)
    store = SqliteQueueStore(spool / "job_queue.db")
    stored = {1: "JobStatus = undefined", 2: 'JobStatus = "x"', 3: "JobStatus = 77", 4: "JobStatus = 1",
              5: "JobStatus = 1; ProcId = undefined", 6: "JobStatus = 2; Owner = 7"}
    for cluster, extra in stored.items():
        store.save_job((cluster, 0), parseOne(f'[ClusterId = {cluster}; ProcId = 0; Owner = "alice"; '
                                              f'Requirements = true; {extra}]'))
    store.close()
    service = _service(tmp_path)

    async def test() -> None:
        with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
            await service.start()
        logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "htcpool.schedd")
        jobs = service.core.queue.jobs
        for cluster in (1, 2, 3, 5, 6):
            ad = jobs[(cluster, 0)]
            assert ad["JobStatus"] == JobStatus.HELD and ad["HoldReasonCode"] == HOLD_QUARANTINED
            assert ad["HoldReason"].startswith("The schedd found this job invalid when it restarted")
            assert f"job {cluster}.0 is invalid in the job queue and is held" in logged
        assert jobs[(1, 0)]["QuarantinedValue"] == "JobStatus = undefined"
        assert jobs[(5, 0)]["ProcId"] == 0 and "ProcId is undefined" in jobs[(5, 0)]["HoldReason"]
        assert jobs[(4, 0)]["JobStatus"] == JobStatus.IDLE and "job 4.0" not in logged
        # the owner may release and remove them as any held job
        done = await service.handle(JobAction(JobActionKind.REMOVE, "alice", ("1", "2", "3", "4", "5")))
        assert sorted(done.done) == ["1.0", "2.0", "3.0", "4.0", "5.0"]
        service.store.close()

    run(test)
    reread, _ = SqliteQueueStore(spool / "job_queue.db").load()
    assert reread[(6, 0)]["JobStatus"] == JobStatus.HELD  # the hold was written back


def test_a_factory_job_with_a_bad_status_holds_the_factory_not_the_schedd() -> None:
    core = schedd(MemoryStore())
    cluster = submit_factory(core, "executable = /bin/sleep\n+JobStatus = $(Process) * 76 + 1\n"
                                   "max_materialize = 5\nqueue 3\n")
    assert sorted(p for (c, p) in core.queue.jobs if c == cluster) == [0]  # proc 1 would be 77
    factory = core.queue.factories[cluster]
    assert factory.mode == MaterializeMode.HELD and "JobStatus = 1 * 76 + 1: a new job's status" in factory.reason
    assert core.queue.jobs[(cluster, 0)]["JobStatus"] == JobStatus.IDLE
    assert core.handle(Submit("alice", (_ad(""),)), T0).reply.count == 1  # the queue goes on


def test_a_transform_that_sets_a_bad_status_refuses_the_cluster_instead_of_breaking_the_queue() -> None:
    core = schedd(MemoryStore(), transforms=[Transform.parse("Bad", "SET JobStatus = 77\n")])
    with pytest.raises(SubmitRejected, match="JobStatus = 77"):
        core.handle(Submit("alice", (_ad(""), _ad(""))), T0)
    assert core.queue.jobs == {}
    fine = schedd(MemoryStore(), transforms=[Transform.parse("Hold", "SET JobStatus = 4 + 1\n")])
    cluster = fine.handle(Submit("alice", (_ad(""), _ad(""))), T0).reply.cluster
    assert [fine.queue.jobs[(cluster, p)]["JobStatus"] for p in (0, 1)] == [JobStatus.HELD] * 2


def test_a_committed_submit_is_answered_even_when_passing_on_its_news_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    service = _service(tmp_path)

    async def broken(actions: object) -> None:
        raise RuntimeError("the collector went away")

    async def test() -> None:
        await service.start()
        monkeypatch.setattr(service, "_carry", broken)
        with caplog.at_level(logging.ERROR, logger="htcpool.schedd"):
            reply = await service.handle(Submit("alice", (_ad(""),)))
        assert (reply.cluster, reply.count) == (1, 1)
        assert "submit of cluster 1 committed, but passing on its news failed" in caplog.text
        service.store.close()

    run(test)
    reread, _ = SqliteQueueStore(tmp_path / "spool" / "job_queue.db").load()
    assert list(reread) == [(1, 0)]
