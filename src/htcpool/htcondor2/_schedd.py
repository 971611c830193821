"""``Schedd`` and ``SubmitResult``: the job queue of a pool through HTCondor's bindings API.

Every method is one or two messages of ``htcpool.protocol`` to the pool's schedd
(docs/architecture.md, "Messages between the daemons"): ``submit`` reserves a
cluster id (``NewCluster``), builds the job ads on the client with the submit
language, as condor_submit does, and sends them (``Submit``); ``query`` is a
``QueueQuery``, ``history`` a ``HistoryQuery``, ``act`` a ``JobAction``, ``edit``
condor_qedit's ``EditJobs`` and ``reschedule`` a ``DaemonCommand``. The
arguments and results are those of the HTCondor manual's "Python bindings,
version 2 API reference", class Schedd.
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Callable, Iterable
from typing import Any

from htcpool.htcondor2._enums import JobAction, QueryOpt, TransactionFlag
from htcpool.htcondor2._errors import HTCondorException
from htcpool.htcondor2._jobspec import constraint_text, job_targets, project, projection_names
from htcpool.htcondor2._pool import Connection, connection_for
from htcpool.htcondor2._submit import Submit
from htcpool.htcondor2._submitting import build_jobs

#: htcondor2's job actions and the schedd's (RemoveX and VacateFast have no stronger form here)
_ACTIONS = {JobAction.Hold: "hold", JobAction.Release: "release", JobAction.Remove: "remove",
            JobAction.RemoveX: "remove", JobAction.Vacate: "vacate", JobAction.VacateFast: "vacate",
            JobAction.Suspend: "suspend", JobAction.Continue: "continue"}
_STATUS_NAMES = {1: "Idle", 2: "Running", 3: "Removed", 4: "Completed", 5: "Held",
                 6: "TransferringOutput", 7: "Suspended"}
_REFUSED = re.compile(r"cannot \w+ a job that is (.+)$")


class SubmitResult:
    """The outcome of ``Schedd.submit``: the cluster id, its first proc, how many procs."""

    def __init__(self, cluster: int, first_proc: int, num_procs: int, clusterad: Any,
                 procad: Any = None) -> None:
        self._cluster = cluster
        self._first_proc = first_proc
        self._num_procs = num_procs
        self._clusterad = clusterad
        self._procad = procad

    def cluster(self) -> int:
        return self._cluster

    def first_proc(self) -> int:
        return self._first_proc

    def num_procs(self) -> int:
        return self._num_procs

    def clusterad(self) -> Any:
        """The attributes every job of the cluster shares (the first job's ad)."""
        return self._clusterad

    def procad(self) -> Any:
        """The attributes of the first proc that are its own (``ProcId`` at least)."""
        return self._procad

    def __int__(self) -> int:
        return self._cluster

    def __str__(self) -> str:
        return (f"Submitted {self._num_procs} jobs into cluster {self._cluster},{self._first_proc} :\n"
                f"{self._clusterad}")

    def __repr__(self) -> str:
        return (f"SubmitResult(cluster={self._cluster}, first_proc={self._first_proc}, "
                f"num_procs={self._num_procs}, clusterad={self._clusterad})")


class Schedd:
    """A pool's job queue (the HTCondor manual's ``htcondor2.Schedd``)."""

    def __init__(self, location: Any = None) -> None:
        self._conn, self._address = connection_for(location)

    @classmethod
    def _of(cls, conn: Connection) -> Schedd:
        schedd = cls.__new__(cls)
        schedd._conn, schedd._address = conn, None
        return schedd

    def _send(self, message: Any) -> Any:
        return self._conn.send("schedd", message, self._address)

    # -- submit
    def submit(self, description: Submit, count: int = 0, spool: bool = False,
               itemdata: Iterable[str] | Iterable[dict[str, str]] | None | object = ...,
               queue: str | None = None) -> SubmitResult:
        """Submit the jobs ``description`` describes; ``count`` replaces its queue count,
        ``itemdata`` its items, ``queue`` its whole queue statement."""
        from htcpool.classad import ClassAd
        from htcpool.protocol import Submit as SubmitMessage
        from htcpool.protocol.schedd import NewCluster

        if not isinstance(description, Submit):
            raise TypeError("description must be an htcondor2.Submit")
        if spool:
            raise HTCondorException("spool=True is not supported: htcpool's jobs read their input "
                                    "from the submit directory, which every slot shares")
        if queue is not None and (itemdata is not ... or count):
            raise ValueError("queue and count/itemdata are mutually exclusive")
        owner = getpass.getuser()
        cluster = int(self._send(NewCluster(owner)).cluster)
        jobs = build_jobs(description, cluster, owner, count=count, itemdata=itemdata, queue=queue)
        if not jobs:
            raise HTCondorException("the submit description queues no jobs")
        reply = self._send(SubmitMessage(owner, tuple(jobs), cluster))
        first = jobs[0]
        procad = ClassAd({"ProcId": first.get("ProcId", 0)})
        return SubmitResult(int(reply.cluster), int(first.get("ProcId", 0)), int(reply.count),
                            first, procad)

    # -- the queue
    def query(self, constraint: Any = "True", projection: Iterable[str] = (),
              callback: Callable[[Any], Any] | None = None, limit: int = -1,
              opts: QueryOpt = QueryOpt.Default) -> list[Any]:
        """Job ads matching ``constraint``, with only ``projection``'s attributes when given."""
        from htcpool.protocol import QueueQuery

        text = constraint_text(constraint)
        names = projection_names(projection)
        opts = QueryOpt(int(opts))
        if opts & (QueryOpt.AutoCluster | QueryOpt.GroupBy):
            raise HTCondorException("QueryOpt.AutoCluster and QueryOpt.GroupBy are not supported: "
                                    "htcpool's schedd does not answer autocluster queries")
        if opts & QueryOpt.DefaultMyJobsOnly and not text:
            from htcpool.classad import quote

            text = f"Owner == {quote(getpass.getuser())}"
        wanted = names
        if opts & QueryOpt.SummaryOnly:
            wanted = ("JobStatus",)
        ads = list(self._send(QueueQuery(text, wanted)).ads)
        if opts & QueryOpt.SummaryOnly:
            return [_summary(ads)]
        if limit is not None and limit >= 0:
            ads = ads[:limit]
        if callback is None:
            return ads
        return [r for r in (callback(ad) for ad in ads) if r is not None]

    def act(self, action: JobAction, job_spec: Any, reason: str | None = None) -> Any:
        """Hold, release, remove, vacate, suspend or continue jobs; a ClassAd of totals."""
        from htcpool.protocol import JobAction as JobActionMessage
        from htcpool.protocol import JobActionKind

        if not isinstance(action, JobAction):
            raise TypeError("action must be a JobAction")
        kind = JobActionKind(_ACTIONS[action])
        targets, constraint = job_targets(job_spec)
        why = reason if isinstance(reason, str) else "Python-initiated action"
        reply = self._send(JobActionMessage(kind, getpass.getuser(), targets, constraint, why))
        return _totals(kind, reply.done, reply.errors)

    def edit(self, job_spec: Any, attr: str, value: Any,
             flags: TransactionFlag = TransactionFlag.Default) -> int:
        """Set ``attr`` to the expression ``value`` in the jobs named; how many were changed."""
        from htcpool.classad import ClassAdError, ExprTree
        from htcpool.protocol.schedd import EditJobs

        if not isinstance(flags, TransactionFlag):
            raise TypeError("flags must be a TransactionFlag")
        if not isinstance(attr, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", attr):
            raise HTCondorException(f"Invalid attribute name {attr!r}")
        if isinstance(value, ExprTree):
            text = str(value)
        elif isinstance(value, str):
            text = value
        else:
            raise TypeError("value must be a string or an ExprTree")
        try:
            ExprTree(text)
        except ClassAdError as e:
            raise HTCondorException(f"Invalid value {text!r} for {attr}: {e}") from None
        targets, constraint = job_targets(job_spec)
        reply = self._send(EditJobs(getpass.getuser(), (attr,), (text,), targets, constraint))
        if reply.errors and not reply.done:
            raise HTCondorException("; ".join(reply.errors))
        return len(reply.done)

    def history(self, constraint: Any = None, projection: Iterable[str] = (), match: int = -1,
                since: Any = None) -> list[Any]:
        """Jobs that left the queue, newest first, stopping at ``since`` when given."""
        from htcpool.protocol import HistoryQuery

        text = constraint_text(constraint)
        names = projection_names(projection)
        stop = _since(since)
        ads = list(self._send(HistoryQuery(text, 0 if stop is not None or match < 0 else match)).ads)
        if stop is not None:
            for index, ad in enumerate(ads):
                if stop.evaluate(ad) is True:
                    ads = ads[:index]
                    break
        if match is not None and match >= 0:
            ads = ads[:match]
        return project(ads, names)

    def reschedule(self) -> None:
        """Ask for a negotiation cycle soon."""
        from htcpool.protocol import Command, DaemonCommand

        self._send(DaemonCommand(Command.RESCHEDULE))

    def spool(self, result: SubmitResult) -> None:
        raise HTCondorException("spooling is not supported: htcpool's slots share the submit directory")

    def retrieve(self, job_spec: Any) -> None:
        raise HTCondorException("retrieve is not supported: output is written to the submit directory")


def _since(since: Any) -> Any:
    from htcpool.classad import ExprTree

    if since is None:
        return None
    if isinstance(since, int) and not isinstance(since, bool):
        return ExprTree(f"ClusterId == {since}")
    if isinstance(since, str):
        found = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?\s*", since)
        if found:
            text = f"ClusterId == {found.group(1)}"
            return ExprTree(text + (f" && ProcId == {found.group(2)}" if found.group(2) else ""))
        return ExprTree(constraint_text(since, "since expression") or "true")
    if isinstance(since, ExprTree):
        return since
    raise TypeError("since must be a job id, a cluster id or an ExprTree")


def _summary(ads: list[Any]) -> Any:
    from htcpool.classad import ClassAd

    counts = {name: 0 for name in _STATUS_NAMES.values()}
    for ad in ads:
        name = _STATUS_NAMES.get(int(ad.get("JobStatus", 0)))
        if name is not None:
            counts[name] += 1
    return ClassAd({"MyType": "Summary", "Jobs": len(ads), **counts})


def _totals(kind: str, done: tuple[str, ...], errors: tuple[str, ...]) -> Any:
    """The ClassAd htcondor2's ``act`` returns, from the schedd's per-job results."""
    from htcpool.classad import ClassAd

    not_found = bad_status = already = denied = 0
    done_state = {"hold": "Held", "remove": "Removed"}.get(kind)
    for error in errors:
        refused = _REFUSED.search(error)
        if "not found" in error or "no job" in error.lower():
            not_found += 1
        elif "may not" in error:
            denied += 1
        elif refused is not None and refused.group(1) == done_state:
            already += 1
        else:
            bad_status += 1
    return ClassAd({"TotalError": 0, "TotalSuccess": len(done), "TotalNotFound": not_found,
                    "TotalBadStatus": bad_status, "TotalAlreadyDone": already,
                    "TotalPermissionDenied": denied, "TotalJobAds": len(done) + len(errors),
                    "TotalChangedAds": len(done)})


