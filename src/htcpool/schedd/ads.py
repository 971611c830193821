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
``SchedulerJobsRunning`` in each Submitter ad. When a submitter's last job leaves the queue, the
next advertisement carries its ad once more with every count 0, and the later ones leave it
out, so the collector shows it without jobs until the ad's lifetime ends (HTCondor 25's
``updateSubmitterAd`` sends one update for a submitter without jobs, then skips it). Both ads
live ``3 × SCHEDD_INTERVAL + 60`` seconds (``ClassAdLifetime``) so that a schedd that stops advertising drops out of the pool.
The Scheduler ad also carries the schedd's statistics (``statistics.schedd``), which the
core gives as a function of the running-job count. When the schedd stops it withdraws them (``withdrawals``). The counts are the ones the queue
keeps as jobs enter, change and leave (``tally``), not a walk over the queue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from htcpool.classad import ClassAd
from htcpool.protocol import InvalidateAd
from htcpool.schedd.queue import JobQueue
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.universes import Universe

_COUNTED = {JobStatus.IDLE: ("IdleJobs", "TotalIdleJobs"), JobStatus.HELD: ("HeldJobs", "TotalHeldJobs"),
            **{status: ("RunningJobs", "TotalRunningJobs") for status in ACTIVE}}
#: the same for the jobs the schedd runs itself, by universe
_COUNTED_HERE = {
    universe: {JobStatus.IDLE: (f"{name}JobsIdle", f"Total{name}JobsIdle"), JobStatus.HELD: ("HeldJobs", "TotalHeldJobs"),
               **{status: (f"{name}JobsRunning", f"Total{name}JobsRunning") for status in ACTIVE}}
    for universe, name in ((Universe.LOCAL, "Local"), (Universe.SCHEDULER, "Scheduler"))}
_HERE_ZERO = {f"{name}Jobs{what}": 0 for name in ("Local", "Scheduler") for what in ("Idle", "Running")}
#: the counts of a submitter whose jobs have all left
_NO_JOBS = {"IdleJobs": 0, "RunningJobs": 0, "HeldJobs": 0, **_HERE_ZERO}
#: the statuses as ``tally.status_key`` writes them
_STATUSES = {str(int(status)): status for status in JobStatus}


class SubmitterAds:
    """The Submitter ads of the last advertisement, each with what it was made of: an unchanged
    submitter's ad is sent again as the same object (a schedd with many submitters advertises on
    most submits, and building the ads of all of them each time cost a fifth of a simulated
    pool's filling). Ads are never changed once made, so handing one out twice is safe."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[tuple[object, ...], ClassAd]] = {}
        #: the submitters whose ad of the last advertisement shows idle jobs
        self.idle: frozenset[str] = frozenset()

    def ad(self, name: str, common: dict[str, object], counts: dict[str, int]) -> ClassAd:
        """The ad of submitter ``name``: ``common`` (the attributes every submitter's ad shares)
        and ``counts`` (its jobs, always with the same names in the same order)."""
        key = (tuple(common.items()), tuple(counts.values()))
        made = self._made.get(name)
        if made is not None and made[0] == key:
            return made[1]
        ad = ClassAd({"MyType": "Submitter", "Name": name, **common, **counts})
        self._made[name] = (key, ad)
        return ad

    def keep_only(self, names: Collection[str]) -> list[str]:
        """Forget the submitters not in ``names`` (no jobs in the queue any more); returns them."""
        gone = [n for n in self._made if n not in names]
        for name in gone:
            del self._made[name]
        return gone


def schedd_ads(queue: JobQueue, host: str, address: str, started: float, now: float,
               statistics: Callable[[int], Mapping[str, object]] | None = None,
               made: SubmitterAds | None = None) -> list[ClassAd]:
    """The ``Scheduler`` ad, then a ``Submitter`` ad per submitter with jobs in the queue at ``now``
    (those unchanged since the last call taken from ``made``)."""
    settings = queue.settings
    ctx = queue.context(now)
    totals = {"TotalIdleJobs": 0, "TotalRunningJobs": 0, "TotalHeldJobs": 0,
              **{f"Total{name}": 0 for name in _HERE_ZERO}}
    counts: dict[str, dict[str, int]] = {}
    # the queue keeps its jobs counted by submitter, universe and status (``tally``)
    for (submitter, universe, status), n in queue.tally.current(queue.jobs, settings.accounting_domain,
                                                                ctx).items():
        sub = counts.get(submitter)
        if sub is None:
            sub = counts[submitter] = dict(_NO_JOBS)
        state = _STATUSES.get(status)
        counted = None if state is None else (_COUNTED if universe is None else _COUNTED_HERE[universe]).get(state)
        if counted is not None:
            sub[counted[0]] += n
            totals[counted[1]] += n
    lifetime = 3 * settings.schedd_interval + 60
    name = settings.schedd_name
    out = [ClassAd({"MyType": "Scheduler", "Name": name, "Machine": host, "MyAddress": address,
                    "ScheddIpAddr": settings.schedd_address, **totals,
                    "DaemonStartTime": int(started), "ClassAdLifetime": lifetime})]
    if statistics is not None:
        out[0].update(statistics(totals["TotalRunningJobs"]))
    made = made if made is not None else SubmitterAds()
    common: dict[str, object] = {"ScheddName": name, "Machine": host, "MyAddress": address,
                                 "ScheddIpAddr": settings.schedd_address, "ClassAdLifetime": lifetime}
    for submitter, c in counts.items():
        if submitter:
            out.append(made.ad(submitter, common, c))
    for submitter in made.keep_only(counts):  # its last jobs left: one last ad, with nothing counted
        out.append(ClassAd({"MyType": "Submitter", "Name": submitter, **common, **_NO_JOBS}))
    made.idle = frozenset(submitter for submitter, c in counts.items() if submitter and c["IdleJobs"])
    return out


def withdrawals(name: str) -> list[InvalidateAd]:
    """What a stopping schedd sends the collector: withdraw its ad and its submitters' ads."""
    return [InvalidateAd("Scheduler", name), InvalidateAd("Submitter", constraint=f'ScheddName == "{name}"')]


__all__ = ["SubmitterAds", "schedd_ads", "withdrawals"]
