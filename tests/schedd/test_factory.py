"""Late materialization in the schedd core: factories, their limits, restart, rm and transforms."""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest

from htcpool.protocol import JobAction, JobActionKind, QueueQuery, carry
from htcpool.protocol.schedd import NewCluster, SubmitFactory
from htcpool.schedd import JobStatus, MemoryStore, Schedd, ScheddSettings, SubmitRejected, Transform
from htcpool.schedd.factory import Factory, MaterializeMode, how_many
from htcpool.schedd.limits import QueueLimits
from htcpool.submit import (
    MemoryFileSystem,
    RecordingEnviron,
    RecordingFileSystem,
    SubmitHost,
    SubmitSettings,
    digest_to_json,
    recorded_digest,
    submit_description,
)
from tests.schedd.helpers import T0, schedd

FS = MemoryFileSystem(sizes={"/bin/sleep": 43000}, files={"/home/alice/items.txt": "a 1\nb 2\nc 3\n"})


def factory_message(core: Schedd, text: str, owner: str = "alice", env: dict[str, str] | None = None
                    ) -> SubmitFactory:
    """What `htcpool submit` sends for ``text``: the cluster reserved first, then the recipe."""
    cluster = int(core.handle(NewCluster(owner), T0).reply.cluster)
    environ = RecordingEnviron(env or {"HOME": "/home/alice", "TOKEN": "secret"})
    host = SubmitHost(user=owner, cwd="/home/alice", now=int(T0), environ=environ)
    fs = RecordingFileSystem(FS)
    result = submit_description(text, host=host, fs=fs, cluster_id=cluster, allow_factory=True)
    assert result.factory is not None
    digest = recorded_digest(text, cluster, host, environ, SubmitSettings(), fs)
    return SubmitFactory(owner, result.jobs[0], digest_to_json(digest), cluster)


def submit_factory(core: Schedd, text: str, **kw: object) -> int:
    message = carry(factory_message(core, text, **kw))  # through the wire's codec
    return int(core.handle(message, T0).reply.cluster)


def procs(core: Schedd, cluster: int) -> list[int]:
    return sorted(p for (c, p) in core.queue.jobs if c == cluster)


def finish(core: Schedd, job_id: tuple[int, int], now: float = T0 + 10) -> None:
    """The job runs and completes (what the shadow's handlers do with a startd's reports)."""
    core.queue.start(job_id, now, host="ep")
    core.queue.finish(job_id, now + 1, 0)


def test_max_materialize_keeps_that_many_jobs_in_the_queue_and_refills_as_they_leave() -> None:
    store = MemoryStore()
    core = schedd(store)
    cluster = submit_factory(core, "executable = /bin/sleep\narguments = $(Process)\nmax_materialize = 3\n"
                                   "queue 7\n")
    assert procs(core, cluster) == [0, 1, 2]
    ad = core.queue.jobs[(cluster, 2)]
    assert (ad["Args"], ad["JobMaterializeLimit"], ad["TotalSubmitProcs"], ad["Owner"]) == ("2", 3, 7, "alice")
    assert ad["JobMaterializeNextProcId"] == 3
    finish(core, (cluster, 0))
    assert procs(core, cluster) == [1, 2, 3]
    assert core.queue.jobs[(cluster, 3)]["Args"] == "3"
    assert store.factories[cluster]["next_proc"] == 4
    for proc in range(1, 7):
        core.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.{proc}",)), T0 + 20)
    assert procs(core, cluster) == [] and cluster not in core.queue.factories
    assert cluster not in store.factories  # all made and gone: the cluster is complete
    assert len(store.history) == 7


def test_max_idle_counts_idle_and_held_jobs_and_a_start_makes_room() -> None:
    core = schedd()
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_idle = 2\nqueue 10\n")
    assert procs(core, cluster) == [0, 1]
    core.handle(JobAction(JobActionKind.HOLD, "alice", (f"{cluster}.0",)), T0)
    assert procs(core, cluster) == [0, 1]  # held still counts as not running
    core.queue.start((cluster, 1), T0 + 5, host="ep")
    assert core.queue.status((cluster, 1)) == JobStatus.RUNNING
    assert procs(core, cluster) == [0, 1, 2]  # one started: one more idle job
    assert core.queue.jobs[(cluster, 2)]["JobMaterializeMaxIdle"] == 2


def test_items_rows_and_steps_are_those_of_each_proc() -> None:
    core = schedd()
    cluster = submit_factory(core, "executable = /bin/sleep\narguments = $(x) $(y) $(Step) $ENV(HOME)\n"
                                   "max_materialize = 6\nqueue 2 x,y from items.txt\n")
    args = [core.queue.jobs[(cluster, p)]["Args"] for p in procs(core, cluster)]
    assert args == ["a 1 0 /home/alice", "a 1 1 /home/alice", "b 2 0 /home/alice", "b 2 1 /home/alice",
                    "c 3 0 /home/alice", "c 3 1 /home/alice"]
    digest = core.queue.factories[cluster].digest
    assert digest["host"]["environ"] == {"HOME": "/home/alice"}  # only what the file read


def test_a_million_proc_factory_costs_only_what_is_materialized() -> None:
    store = MemoryStore()
    core = schedd(store)
    message = factory_message(core, "executable = /bin/sleep\narguments = $(Process)\nmax_materialize = 10\n"
                                    "queue 1000000\n")
    tracemalloc.start()
    reply = core.handle(message, T0).reply
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert reply.count == 1_000_000
    assert len(core.queue.jobs) == 10 and len(store.jobs) == 10 and len(store.factories) == 1
    assert peak < 5_000_000, f"submitting the factory took {peak} bytes at its peak"
    assert core.queue.jobs[(reply.cluster, 9)]["TotalSubmitProcs"] == 1_000_000


def test_a_restarted_schedd_continues_the_factory_where_it_was() -> None:
    store = MemoryStore()
    core = schedd(store)
    cluster = submit_factory(core, "executable = /bin/sleep\narguments = $(Process)\nmax_materialize = 2\n"
                                   "queue 5\n")
    finish(core, (cluster, 0))
    assert procs(core, cluster) == [1, 2]
    again = Schedd(ScheddSettings(schedd_name="schedd@submit"), T0 + 100, store=store, jobs=dict(store.jobs),
                   next_cluster=store.next_cluster, host="submit", factories=dict(store.factories))
    again.start(T0 + 100, "http://submit:1", "<127.0.0.1:1>")
    assert procs(again, cluster) == [1, 2]
    assert again.queue.jobs[(cluster, 1)]["JobMaterializeNextProcId"] == 3
    again.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.1",)), T0 + 101)
    assert procs(again, cluster) == [2, 3]
    assert again.queue.jobs[(cluster, 3)]["Args"] == "3"


def test_condor_rm_of_the_cluster_removes_the_factory_too() -> None:
    store = MemoryStore()
    core = schedd(store)
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_materialize = 2\nqueue 100\n")
    result = core.handle(JobAction(JobActionKind.REMOVE, "bob", (str(cluster),)), T0).reply
    assert cluster in core.queue.factories and result.errors  # not bob's
    result = core.handle(JobAction(JobActionKind.REMOVE, "alice", (str(cluster),)), T0).reply
    assert not result.errors and procs(core, cluster) == []
    assert cluster not in core.queue.factories and not store.factories
    core.handle_timer(T0 + 600)
    assert procs(core, cluster) == []


def test_hold_of_the_cluster_pauses_the_factory_and_release_resumes_it() -> None:
    core = schedd()
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_materialize = 2\nqueue 4\n")
    core.handle(JobAction(JobActionKind.HOLD, "alice", (str(cluster),)), T0)
    core.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.0",)), T0)
    assert procs(core, cluster) == [1]
    assert core.queue.jobs[(cluster, 1)]["JobMaterializePaused"] == MaterializeMode.HELD
    core.handle(JobAction(JobActionKind.RELEASE, "alice", (str(cluster),)), T0)
    assert procs(core, cluster) == [1, 2]
    assert "JobMaterializePaused" not in core.queue.jobs[(cluster, 2)]


def test_transforms_set_on_the_cluster_ad_override_every_materialized_job() -> None:
    transform = Transform.parse("T", "SET AccountingGroup = \"group_a.alice\"\nSET Args = \"fixed\"\n"
                                     "DELETE JobPrio\n")
    core = schedd(transforms=[transform])
    cluster = submit_factory(core, "executable = /bin/sleep\narguments = $(Process)\nmax_materialize = 2\n"
                                   "queue 3\n")
    finish(core, (cluster, 0))
    ad = core.queue.jobs[(cluster, 2)]
    assert (ad["AccountingGroup"], ad["Args"], "JobPrio" in ad) == ("group_a.alice", "fixed", False)


def test_queue_limits_bound_what_is_materialized_not_the_submission() -> None:
    core = schedd(limits=QueueLimits(max_jobs_per_owner=3, max_jobs_per_submission=5))
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_idle = 100\nqueue 50000\n")
    assert procs(core, cluster) == [0, 1, 2]  # MAX_JOBS_PER_OWNER
    core.handle(JobAction(JobActionKind.REMOVE, "alice", (f"{cluster}.0",)), T0)
    assert procs(core, cluster) == [1, 2, 3]


def test_how_many_is_the_smallest_of_the_limits() -> None:
    f = Factory(1, "alice", 0, 100, {}, limit=10, max_idle=4)
    assert how_many(f, present=3, not_running=1, room=100) == 3
    assert how_many(f, present=8, not_running=0, room=100) == 2
    assert how_many(f, present=0, not_running=0, room=1) == 1
    assert how_many(dataclasses.replace(f, next_proc=99), 0, 0, 100) == 1
    assert how_many(dataclasses.replace(f, mode=MaterializeMode.HELD), 0, 0, 100) == 0


def test_a_proc_the_digest_cannot_build_holds_the_factory_with_the_reason() -> None:
    core = schedd()
    message = factory_message(core, "executable = /bin/sleep\nrequest_memory = $(Item)\nmax_materialize = 5\n"
                                    "queue Item in (1G, 2G, 3+)\n")
    cluster = int(core.handle(message, T0).reply.cluster)
    assert procs(core, cluster) == [0, 1]
    factory = core.queue.factories[cluster]
    assert factory.mode == MaterializeMode.HELD and "2.2" not in factory.reason
    assert f"Job {cluster}.2" in factory.reason and "request_memory" in factory.reason
    assert any("factory" in w for w in core.take_warnings())


def test_bad_digests_and_a_schedd_that_refuses_factories() -> None:
    core = schedd()
    message = factory_message(core, "executable = /bin/sleep\nmax_idle = 1\nqueue 2\n")
    with pytest.raises(SubmitRejected, match="digest"):
        core.handle(dataclasses.replace(message, digest={"version": 99}), T0)
    core = schedd(allow_late_materialize=False)
    message = factory_message(core, "executable = /bin/sleep\nmax_idle = 1\nqueue 2\n")
    with pytest.raises(SubmitRejected, match="SCHEDD_ALLOW_LATE_MATERIALIZE"):
        core.handle(message, T0)


def test_the_queue_shows_the_factorys_jobs_with_its_attributes() -> None:
    core = schedd()
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_materialize = 2\nqueue 9\n")
    ads = core.handle(QueueQuery(projection=("ProcId", "TotalSubmitProcs", "JobMaterializeNextProcId")), T0).reply.ads
    assert [(a["ProcId"], a["TotalSubmitProcs"], a["JobMaterializeNextProcId"]) for a in ads] == [(0, 9, 2), (1, 9, 2)]
    assert cluster == 1


def test_queue_matching_and_a_removal_by_constraint() -> None:
    core = schedd()
    cluster = submit_factory(core, "executable = /bin/sleep\narguments = $(Item)\nmax_materialize = 1\n"
                                   "queue matching *.txt\n")
    assert [core.queue.jobs[(cluster, p)]["Args"] for p in procs(core, cluster)] == ["items.txt"]
    other = submit_factory(core, "executable = /bin/sleep\nmax_materialize = 1\nqueue 5\n")
    core.handle(JobAction(JobActionKind.REMOVE, "alice", constraint=f"ClusterId == {other}"), T0)
    assert other not in core.queue.factories and procs(core, other) == []
    assert cluster in core.queue.factories


def cluster_log(core: Schedd) -> list[str]:
    """The events the core has for user logs since the last call: 'code.proc' and, for the
    cluster's own events, their text."""
    from htcpool.schedd.eventlog import format_event

    out = []
    for event, ad in core.take_log_events():
        out.append(f"{event.code:03d}.{event.proc}")
        if event.proc < 0:
            assert event.job is not None and event.job["UserLog"] == "/home/alice/f.log"
            out.append(format_event(event).split(" ", 4)[4])
        else:
            assert ad is None or ad["UserLog"] == "/home/alice/f.log"
    return out


def test_a_factory_logs_its_cluster_submitted_paused_resumed_and_removed() -> None:
    core = schedd(MemoryStore())
    cluster = submit_factory(core, "executable = /bin/sleep\nlog = f.log\nbatch_name = nightly\n"
                                   "max_materialize = 2\nqueue 3 in (a, b)\n")
    assert cluster_log(core) == ["035.-1", 'Cluster submitted from host: <127.0.0.1:1>\n'
                                           '    [ JobBatchName = "nightly" ]\n...\n', "000.0", "000.1"]
    core.handle(JobAction(JobActionKind.HOLD, "alice", (str(cluster),)), T0)
    assert cluster_log(core)[:2] == ["037.-1", "Job Materialization Paused\n\tvia condor_hold (by user alice)\n"
                                               "\tPauseCode 1\n\tHoldCode 1\n...\n"]
    core.handle(JobAction(JobActionKind.RELEASE, "alice", (str(cluster),)), T0)
    assert cluster_log(core)[:2] == ["038.-1", "Job Materialization Resumed\n"
                                               "\tvia condor_release (by user alice)\n...\n"]
    core.handle(JobAction(JobActionKind.REMOVE, "alice", (str(cluster),)), T0)
    log = cluster_log(core)  # the jobs' aborted events, then the cluster's, as it leaves with them
    assert log == ["009.0", "009.1", "036.-1", "Cluster removed\n\tMaterialized 2 jobs from 0 items.\t"
                                               "Incomplete\n...\n"]
    assert cluster not in core.queue.factories


def test_a_factory_that_made_all_its_jobs_logs_a_complete_cluster_when_its_last_job_leaves() -> None:
    core = schedd(MemoryStore())
    cluster = submit_factory(core, "executable = /bin/sleep\nlog = f.log\nmax_materialize = 1\nqueue 2\n")
    cluster_log(core)
    finish(core, (cluster, 0))
    assert "036.-1" not in cluster_log(core)
    finish(core, (cluster, 1))
    log = cluster_log(core)
    assert log[-2:] == ["036.-1", "Cluster removed\n\tMaterialized 2 jobs from 1 items.\tComplete\n...\n"]
    assert cluster not in core.queue.factories


def test_condor_q_factory_asks_for_the_factories_cluster_ads() -> None:
    core = schedd(MemoryStore())
    cluster = submit_factory(core, "executable = /bin/sleep\nmax_materialize = 2\nmax_idle = 1\nqueue 5\n")
    core.queue.start((cluster, 0), T0 + 1, host="ep")
    core.handle(JobAction(JobActionKind.HOLD, "alice", (str(cluster),)), T0 + 2)
    ads = core.handle(QueueQuery(clusters=True), T0 + 3).reply.ads
    assert len(ads) == 1 and "ProcId" not in ads[0] and "JobStatus" not in ads[0]
    ad = ads[0]
    assert (ad["ClusterId"], ad["Owner"], ad["QDate"], ad["JobMaterializeLimit"], ad["JobMaterializeMaxIdle"]) == \
           (cluster, "alice", int(T0), 2, 1)
    assert (ad["JobsPresent"], ad["JobsRunning"], ad["JobsIdle"], ad["JobsHeld"]) == (2, 0, 0, 2)  # held with it
    assert (ad["JobMaterializeNextProcId"], ad["JobMaterializePaused"], ad["JobFactoryPaused"]) == (2, 1, 1)
    assert core.handle(QueueQuery('Owner == "bob"', clusters=True), T0).reply.ads == ()
    assert len(core.handle(QueueQuery(), T0).reply.ads) == 2  # the jobs, as before


def test_a_removed_factory_that_a_restart_finds_without_jobs_leaves_with_its_event() -> None:
    store = MemoryStore()
    core = schedd(store)
    cluster = submit_factory(core, "executable = /bin/sleep\nlog = f.log\nmax_materialize = 2\nqueue 3 in (a, b)\n")
    state = dict(store.factories[cluster], removed=True)  # as saved while its last jobs drained
    again = Schedd(ScheddSettings(schedd_name="schedd@submit"), T0 + 100, store=store, jobs={},
                   next_cluster=store.next_cluster, host="submit", factories={cluster: state})
    again.start(T0 + 100, "http://submit:1", "<127.0.0.1:1>")
    again.handle_timer(T0 + 101)
    assert cluster not in again.queue.factories and cluster not in store.factories
    log = cluster_log(again)
    assert log[-2:] == ["036.-1", "Cluster removed\n\tMaterialized 2 jobs from 0 items.\tIncomplete\n...\n"]
    assert procs(again, cluster) == []
