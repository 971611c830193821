"""The ads a schedd advertises to the collector: its own and one per submitter.

The ``Scheduler`` ad names the schedd, where it answers (``MyAddress``, and
``ScheddIpAddr`` in HTCondor's address form) and its totals of idle, running and
held jobs. Each submitter with jobs in the queue (its accounting name, with the
accounting domain) gets a ``Submitter`` ad with its ``IdleJobs``, ``RunningJobs``
and ``HeldJobs``; the negotiator asks the schedds of submitters with idle or running
jobs for their requests. Running counts every active job (running, suspended,
transferring output). Local and scheduler universe jobs, which the schedd runs itself
and never offers, are counted apart, as HTCondor's ads do: ``TotalLocalJobsIdle``,
``TotalLocalJobsRunning``, ``TotalSchedulerJobsIdle`` and ``TotalSchedulerJobsRunning``
in the Scheduler ad, ``LocalJobsIdle``, ``LocalJobsRunning``, ``SchedulerJobsIdle`` and
``SchedulerJobsRunning`` in each Submitter ad. Both ads live ``3 × SCHEDD_INTERVAL + 60`` seconds
(``ClassAdLifetime``) so that a schedd that stops advertising drops out of the pool.
When the schedd stops it withdraws them (``withdrawals``).
"""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Literal
from htcpool.protocol import InvalidateAd
from htcpool.schedd.priority import submitter_of
from htcpool.schedd.queue import JobQueue
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.universes import Universe, universe_of

_COUNTED = {JobStatus.IDLE: ("IdleJobs", "TotalIdleJobs"), JobStatus.HELD: ("HeldJobs", "TotalHeldJobs"),
            **{status: ("RunningJobs", "TotalRunningJobs") for status in ACTIVE}}
#: the same for the jobs the schedd runs itself, by universe
_COUNTED_HERE = {
    universe: {JobStatus.IDLE: (f"{name}JobsIdle", f"Total{name}JobsIdle"), JobStatus.HELD: ("HeldJobs", "TotalHeldJobs"),
               **{status: (f"{name}JobsRunning", f"Total{name}JobsRunning") for status in ACTIVE}}
    for universe, name in ((Universe.LOCAL, "Local"), (Universe.SCHEDULER, "Scheduler"))}
_HERE_ZERO = {f"{name}Jobs{what}": 0 for name in ("Local", "Scheduler") for what in ("Idle", "Running")}


def schedd_ads(queue: JobQueue, host: str, address: str, started: float, now: float) -> list[ClassAd]:
    """The ``Scheduler`` ad, then a ``Submitter`` ad per submitter with jobs in the queue at ``now``."""
    settings = queue.settings
    ctx = queue.context(now)
    totals = {"TotalIdleJobs": 0, "TotalRunningJobs": 0, "TotalHeldJobs": 0,
              **{f"Total{name}": 0 for name in _HERE_ZERO}}
    counts: dict[str, dict[str, int]] = {}
    # jobs whose status, submitter and universe are literals of the same values are counted
    # alike: the answer is remembered by those values (by the nodes' identities, all alive in the
    # queue, when one is not a plain literal)
    known: dict[tuple[object, ...], tuple[dict[str, int], tuple[str, str] | None]] = {}
    for ad in queue.jobs.values():
        exprs = ad._exprs
        nodes = (exprs.get("jobstatus"), exprs.get("accountinggroup"), exprs.get("owner"),
                 exprs.get("jobuniverse"))
        key = _values(nodes)
        found = known.get(key)
        if found is None:
            status = JobStatus(ad.evaluate("JobStatus", ctx))
            sub = counts.setdefault(submitter_of(ad, settings.accounting_domain, ctx),
                                    {"IdleJobs": 0, "RunningJobs": 0, "HeldJobs": 0, **_HERE_ZERO})
            universe = universe_of(ad)
            found = (sub, (_COUNTED if universe is None else _COUNTED_HERE[universe]).get(status))
            if all(node is None or type(node) is Literal for node in nodes):
                known[key] = found
        sub, counted = found
        if counted is not None:
            sub[counted[0]] += 1
            totals[counted[1]] += 1
    lifetime = 3 * settings.schedd_interval + 60
    name = settings.schedd_name
    out = [ClassAd({"MyType": "Scheduler", "Name": name, "Machine": host, "MyAddress": address,
                    "ScheddIpAddr": settings.schedd_address, **totals,
                    "DaemonStartTime": int(started), "ClassAdLifetime": lifetime})]
    for submitter, c in counts.items():
        if submitter:
            out.append(ClassAd({"MyType": "Submitter", "Name": submitter, "ScheddName": name,
                                "Machine": host, "MyAddress": address,
                                "ScheddIpAddr": settings.schedd_address, "ClassAdLifetime": lifetime, **c}))
    return out


_SCALARS = (str, int, float, bool)


def _values(nodes: tuple[object, ...]) -> tuple[object, ...]:
    """The nodes' literal values with their types (so ``1``, ``1.0`` and ``true`` differ); their
    identities when one is neither absent nor a literal of a plain value."""
    key: list[object] = []
    for node in nodes:
        if node is None:
            key.append(None)
        elif type(node) is Literal and type(node.value) in _SCALARS:
            key.append((type(node.value), node.value))
        else:
            return ("ids", *map(id, nodes))
    return tuple(key)


def withdrawals(name: str) -> list[InvalidateAd]:
    """What a stopping schedd sends the collector: withdraw its ad and its submitters' ads."""
    return [InvalidateAd("Scheduler", name), InvalidateAd("Submitter", constraint=f'ScheddName == "{name}"')]


__all__ = ["schedd_ads", "withdrawals"]
