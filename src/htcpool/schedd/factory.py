"""Late materialization: cluster factories that make their jobs as the limits allow.

A submission with ``max_materialize`` or ``max_idle`` arrives as a ``SubmitFactory``: one
cluster ad and a recipe (``htcpool.submit.materialize``), as the HTCondor manual's
"Submitting Lots of Jobs" describes. The queue keeps a ``Factory`` per such cluster, not its
jobs, and makes ("materializes") proc after proc from the recipe when

* the factory is running (``MaterializeMode``, HTCondor's ``JobMaterializePaused``: -1
  invalid, 0 running, 1 held by condor_hold of the cluster, 2 done), and
* fewer than ``JobMaterializeLimit`` (``max_materialize``) of its jobs are in the queue, and
  fewer than ``JobMaterializeMaxIdle`` (``max_idle``) of them are not running (Idle or
  Held), and
* the queue's limits leave room (``room``): ``MAX_JOBS_SUBMITTED`` for the whole queue,
  ``MAX_JOBS_PER_OWNER`` for the owner, ``MAX_JOBS_PER_SUBMISSION`` for the jobs of the
  factory in the queue at once. A factory never refuses a submission for its size: the
  limits bound what it materializes, as HTCondor applies them to the factory's limits.

``how_many`` is that decision, a pure function of the counts. The queue calls
``materialize`` at submit, when one of a factory's jobs leaves the queue or starts running,
after every message the schedd core handles and on its timer. Each materialized job is the
recipe's ad for that proc with the queue's attributes (``ClusterId``, ``ProcId``, ``Owner``,
``QDate`` of the cluster, ``User``, ``TotalSubmitProcs``), then the attributes the job
transforms set on the cluster ad at submit ("the factory Cluster ad is transformed at submit
time ... values set by the transform will override values set by the job factory", admin
manual, ``JOB_TRANSFORM_<Name>``), then the factory's own attributes
(``JobMaterializeLimit``, ``JobMaterializeMaxIdle``, ``JobMaterializeNextProcId``,
``JobMaterializePaused``, ``JobMaterializePauseReason``; ``stamp`` brings the older jobs' copies up to date before a
query). A proc the recipe cannot build
holds the factory (mode 1) with the reason; nothing else stops.

A factory's state is one row of the queue store (``QueueStore.save_factory``) written at
every change, so a restarted schedd continues at ``JobMaterializeNextProcId``. It leaves the
queue (``delete_factory``) when all its procs were made and none is left in the queue, or,
once condor_rm named its cluster or owner (``removed``: it makes no more jobs), when its last
job has left.

The factory writes the cluster's own events to the user log (``schedd.eventlog``), as
HTCondor's schedd does: cluster submitted before its first job's submit event, paused when
condor_hold names the cluster (hold code 1, user request) or a proc cannot be built (no hold
code), resumed when condor_release names it, and cluster removed when it leaves the queue (the
completion from its ``JobMaterializePaused``, the pause reason as notes). Their ad is one of
the factory's jobs, or its next job made afresh, whose ``UserLog`` names the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, fixed_clock, parseOne
from htcpool.classad.unparse import unparse
from htcpool.schedd import eventlog as ev
from htcpool.schedd.errors import PermissionDenied, SubmitRejected
from htcpool.schedd.protected import Protection, screen_submission
from htcpool.schedd.states import JobStatus
from htcpool.submit import Materializer, SubmitError, digest_from_json

if TYPE_CHECKING:
    from htcpool.schedd.queue import JobQueue

STATE_VERSION = 1
#: attributes the queue sets on every job; never taken from the transforms' changes
QUEUE_ATTRS = frozenset({"clusterid", "procid", "owner", "qdate", "enteredcurrentstatus", "user",
                         "totalsubmitprocs", "jobstatus"})
#: statuses that count against ``max_idle`` ("non-running jobs")
NOT_RUNNING = frozenset({JobStatus.IDLE, JobStatus.HELD})


class MaterializeMode(IntEnum):
    """HTCondor's ``JobMaterializePaused`` values."""

    INVALID = -1
    RUNNING = 0
    HELD = 1
    DONE = 2


@dataclass
class Factory:
    """One cluster factory: its limits, where it is, and how to make its jobs."""

    cluster: int
    owner: str
    submitted: int  # the cluster's QDate
    total: int
    digest: Mapping[str, Any]
    #: what the job transforms changed in the cluster ad: set attributes, and deleted names
    overrides: ClassAd = field(default_factory=ClassAd)
    deleted: tuple[str, ...] = ()
    limit: int = 0  # JobMaterializeLimit; 0: none
    max_idle: int = 0  # JobMaterializeMaxIdle; 0: none
    next_proc: int = 0
    mode: MaterializeMode = MaterializeMode.RUNNING
    reason: str = ""
    user: str = ""
    #: condor_rm named the cluster: no more jobs are made, and it leaves with its last job
    removed: bool = False
    #: procs of this factory now in the queue
    live: set[int] = field(default_factory=set)
    materializer: Materializer | None = None

    def attributes(self) -> dict[str, Any]:
        """The factory's attributes, as every one of its job ads shows them."""
        out: dict[str, Any] = {"JobMaterializeNextProcId": self.next_proc, "TotalSubmitProcs": self.total}
        if self.limit:
            out["JobMaterializeLimit"] = self.limit
        if self.max_idle:
            out["JobMaterializeMaxIdle"] = self.max_idle
        if self.mode != MaterializeMode.RUNNING:
            out["JobMaterializePaused"] = int(self.mode)
        if self.reason:
            out["JobMaterializePauseReason"] = self.reason
        return out

    def to_json(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "cluster": self.cluster, "owner": self.owner,
                "submitted": self.submitted, "total": self.total, "digest": dict(self.digest),
                "overrides": unparse(self.overrides), "deleted": list(self.deleted),
                "limit": self.limit, "max_idle": self.max_idle, "next_proc": self.next_proc,
                "mode": int(self.mode), "reason": self.reason, "user": self.user, "removed": self.removed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Factory:
        """A stored factory; ValueError naming what is wrong."""
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"factory state is not version {STATE_VERSION}")
        try:
            overrides = parseOne(str(data["overrides"]))
            return cls(int(data["cluster"]), str(data["owner"]), int(data["submitted"]), int(data["total"]),
                       dict(data["digest"]), overrides, tuple(str(n) for n in data["deleted"]),
                       int(data["limit"]), int(data["max_idle"]), int(data["next_proc"]),
                       MaterializeMode(int(data["mode"])), str(data["reason"]), str(data["user"]),
                       data.get("removed", False) is True)
        except (KeyError, TypeError, ClassAdError) as e:
            raise ValueError(f"factory state does not read back: {type(e).__name__} {e}") from None


def how_many(factory: Factory, present: int, not_running: int, room: int) -> int:
    """How many procs ``factory`` may make now, with ``present`` of its jobs in the queue,
    ``not_running`` of them Idle or Held, and ``room`` left under the queue's limits."""
    if factory.mode != MaterializeMode.RUNNING or factory.removed:
        return 0
    n = min(factory.total - factory.next_proc, room)
    if factory.limit:
        n = min(n, factory.limit - present)
    if factory.max_idle:
        n = min(n, factory.max_idle - not_running)
    return max(0, n)


def changes(before: ClassAd, after: ClassAd) -> tuple[ClassAd, tuple[str, ...]]:
    """What turned ``before`` into ``after`` (the job transforms, which replace the expression
    of every attribute they set): the attributes set, and the names deleted; the queue's own
    attributes are left out."""
    overrides = ClassAd()
    old, new = before._exprs, after._exprs
    for low, node in new.items():
        if low not in QUEUE_ATTRS and old.get(low) is not node:
            overrides.insert_node(after._names[low], node)
    deleted = tuple(before._names[low] for low in old if low not in new and low not in QUEUE_ATTRS)
    return overrides, deleted


def open_digest(digest: Mapping[str, Any]) -> Materializer:
    """The materializer of a recipe; SubmitRejected saying why it cannot be used."""
    try:
        return Materializer(digest_from_json(digest))
    except SubmitError as e:
        raise SubmitRejected(f"the factory's submit digest cannot be used: {e}") from None


def make_job(factory: Factory, proc: int, now: float) -> ClassAd:
    """Proc ``proc``'s ad (see the module docstring); SubmitError when the recipe fails for it."""
    if factory.materializer is None:
        factory.materializer = open_digest(factory.digest)
    ad = factory.materializer.build(proc)
    screen_submission(ad, factory.owner, Protection(), EvalContext(clock=fixed_clock(now)), [])  # SubmitRejected
    ad["ClusterId"] = factory.cluster
    ad["ProcId"] = proc
    ad["Owner"] = factory.owner
    ad["QDate"] = factory.submitted
    ad["EnteredCurrentStatus"] = int(now)
    if factory.user:
        ad["User"] = factory.user
    for low, node in factory.overrides._exprs.items():
        ad.insert_node(factory.overrides._names[low], node)
    for name in factory.deleted:
        if name in ad:
            del ad[name]
    for name, value in factory.attributes().items():
        ad[name] = value
    ad["JobMaterializeNextProcId"] = proc + 1  # as it will be once this job is made
    return ad


def factory_view(queue: JobQueue, factory: Factory, now: float) -> list[ClassAd]:
    """The ads a constraint on the factory is tested against: its jobs in the queue, or with
    none, its next (or last) job made afresh; none when the recipe fails."""
    live = [queue.jobs[(factory.cluster, proc)] for proc in sorted(factory.live)]
    if live:
        return live
    try:
        return [make_job(factory, min(factory.next_proc, max(factory.total - 1, 0)), now)]
    except (SubmitError, SubmitRejected, ClassAdError):
        return []


_COMPLETION = {MaterializeMode.INVALID: ev.COMPLETION_ERROR, MaterializeMode.RUNNING: ev.COMPLETION_INCOMPLETE,
               MaterializeMode.HELD: ev.COMPLETION_PAUSED, MaterializeMode.DONE: ev.COMPLETION_COMPLETE}


def _log(queue: JobQueue, factory: Factory, code: int, now: float, **details: Any) -> None:
    """Queue one of the cluster's own events (proc -1), for the factory's user log if it has one
    and for the schedd's materialization log."""
    ads = factory_view(queue, factory, now)
    if ads:
        queue.events.append(ev.LogEvent(code, factory.cluster, -1, now, job=ads[0], **details))


def announce(queue: JobQueue, factory: Factory, now: float) -> None:
    """The cluster-submitted event, written before the factory makes its first job."""
    _log(queue, factory, ev.CLUSTER_SUBMIT, now, host=queue.settings.schedd_address)


def _leave(queue: JobQueue, factory: Factory, now: float) -> None:
    """The factory leaves the queue, with its cluster-removed event."""
    try:  # a restarted schedd may not have opened the recipe yet
        if factory.materializer is None:
            factory.materializer = open_digest(factory.digest)
        per_item = factory.materializer.per_item
    except SubmitRejected:
        per_item = 1
    _log(queue, factory, ev.CLUSTER_REMOVE, now, next_proc=factory.next_proc,
         next_row=factory.next_proc // per_item, completion=_COMPLETION[factory.mode], reason=factory.reason)
    queue.drop_factory(factory.cluster)


def counts(queue: JobQueue, factory: Factory) -> tuple[int, int]:
    """(jobs of the factory in the queue, those of them Idle or Held)."""
    not_running = 0
    for proc in factory.live:
        status = queue.jobs[(factory.cluster, proc)].get("JobStatus")
        if status in NOT_RUNNING:
            not_running += 1
    return len(factory.live), not_running


def room(queue: JobQueue, factory: Factory) -> int:
    limits = queue.settings.limits
    return min(limits.max_jobs_submitted - len(queue.jobs),
               limits.max_jobs_per_owner - queue.owners.of(factory.owner),
               limits.max_jobs_per_submission - len(factory.live))


def materialize(queue: JobQueue, factory: Factory, now: float) -> int:
    """Make the procs ``factory`` may make now; returns how many. Saves the factory's state,
    and lets it leave the queue when it is done."""
    present, not_running = counts(queue, factory)
    wanted = how_many(factory, present, not_running, room(queue, factory))
    made = 0
    for _ in range(wanted):
        proc = factory.next_proc
        try:
            ad = make_job(factory, proc, now)
        except (SubmitError, SubmitRejected, ClassAdError) as e:
            factory.mode = MaterializeMode.HELD
            factory.reason = f"failed to create ClassAd for Job {factory.cluster}.{proc} : {e}"
            queue.warnings.append(f"factory {factory.cluster}: {factory.reason}")
            _log(queue, factory, ev.FACTORY_PAUSED, now, reason=factory.reason, pause_code=int(factory.mode))
            break
        factory.next_proc += 1
        factory.live.add(proc)
        queue.enqueue((factory.cluster, proc), ad, now)
        made += 1
    if factory.next_proc >= factory.total and factory.mode != MaterializeMode.INVALID:
        factory.mode = MaterializeMode.DONE
    if (factory.mode == MaterializeMode.DONE or factory.removed) and not factory.live:
        _leave(queue, factory, now)
    elif made:
        queue.store.save_factory(factory.cluster, factory.to_json())
    return made


def stamp(queue: JobQueue, factory: Factory) -> None:
    """Show the factory's current attributes in its jobs' ads, in memory. A job gets them when
    it is made; the older ones are brought up to date here, when the queue is read (the core
    does it before a query), paused or restored, not at every job made."""
    attributes = factory.attributes()
    for proc in factory.live:
        ad = queue.jobs[(factory.cluster, proc)]
        for name, value in attributes.items():
            ad[name] = value
        if factory.mode == MaterializeMode.RUNNING:
            for name in ("JobMaterializePaused", "JobMaterializePauseReason"):
                if name in ad:
                    del ad[name]


def pause(queue: JobQueue, factory: Factory, mode: MaterializeMode, reason: str, now: float) -> None:
    """condor_hold of the cluster (mode HELD) or condor_release (mode RUNNING, only from HELD),
    logged as materialization paused (hold code 1, a user's request) or resumed."""
    if mode == MaterializeMode.RUNNING and factory.mode != MaterializeMode.HELD:
        return
    factory.mode = mode
    factory.reason = reason if mode != MaterializeMode.RUNNING else ""
    queue.store.save_factory(factory.cluster, factory.to_json())
    stamp(queue, factory)
    if mode == MaterializeMode.HELD:
        _log(queue, factory, ev.FACTORY_PAUSED, now, reason=reason, pause_code=int(mode), hold_code=1)
    else:
        _log(queue, factory, ev.FACTORY_RESUMED, now, reason=reason)


def _owned(queue: JobQueue, factory: Factory, user: str | None) -> None:
    if user is not None and user not in queue.settings.queue_super_users and user != factory.owner:
        raise PermissionDenied(f"{user} may not change a job owned by {factory.owner}")


def remove(queue: JobQueue, cluster: int, user: str | None, now: float) -> bool:
    """condor_rm of a factory's cluster: no more jobs are made (its jobs are removed by the
    caller), and the factory leaves with the last of them. False when there is no such
    factory; PermissionDenied for another's."""
    factory = queue.factories.get(cluster)
    if factory is None:
        return False
    _owned(queue, factory, user)
    factory.removed = True
    if factory.live:
        queue.store.save_factory(cluster, factory.to_json())
    else:
        _leave(queue, factory, now)
    return True


def set_held(queue: JobQueue, cluster: int, user: str | None, held: bool, reason: str, now: float) -> bool:
    """condor_hold (``held``) or condor_release of a factory's cluster: materialization stops
    or goes on (a removed factory stays as it is). False when there is no such factory;
    PermissionDenied for another's."""
    factory = queue.factories.get(cluster)
    if factory is None:
        return False
    _owned(queue, factory, user)
    if not factory.removed:
        pause(queue, factory, MaterializeMode.HELD if held else MaterializeMode.RUNNING, reason, now)
    queue.changed_factories.add(cluster)
    return True


def materialize_changed(queue: JobQueue, now: float, every: bool = False) -> int:
    """Let the factories whose jobs changed (``every``: all of them) make what their limits
    allow now; returns how many jobs were made."""
    clusters = list(queue.factories) if every else sorted(queue.changed_factories)
    queue.changed_factories.clear()
    made = 0
    for cluster in clusters:
        factory = queue.factories.get(cluster)
        if factory is not None:
            made += materialize(queue, factory, now)
    return made


def restore(queue: JobQueue, states: Mapping[int, Mapping[str, Any]]) -> None:
    """Take back the factories a store kept (after ``JobQueue.restore``): their jobs in the
    queue are found again and show the factory's attributes; one that does not read back is
    reported in the queue's ``warnings`` and makes no more jobs."""
    for cluster, state in sorted(states.items()):
        try:
            factory = Factory.from_json(state)
        except ValueError as e:
            queue.warnings.append(f"factory {cluster}: {e}; it makes no more jobs")
            continue
        factory.live = {proc for (c, proc) in queue.jobs if c == cluster}
        queue.factories[cluster] = factory
        stamp(queue, factory)
        queue.changed_factories.add(cluster)


__all__ = ["Factory", "MaterializeMode", "announce", "changes", "factory_view", "how_many", "make_job", "materialize",
           "materialize_changed", "open_digest", "pause", "remove", "restore", "set_held", "stamp"]
