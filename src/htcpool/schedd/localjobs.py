"""Local and scheduler universe jobs: the schedd runs them itself, on the access point.

A job whose ``JobUniverse`` is 12 (local) or 7 (scheduler) never goes to the
negotiator (``offers.offerable`` leaves it out, and the ads count it apart from the
idle and running jobs of the submitters). Instead ``schedule`` decides, each time
the core has handled a message or a timer, which of them start now, and returns
that as ``StartLocalJob`` actions; the driver runs each with the same starter the
execute point uses and hands its reports back as ``LocalJobReport`` (``on_report``).
HTCondor's admin manual (*Configuration Macros*, condor_schedd section) describes
the knobs; the rules here:

* An idle job starts when ``START_LOCAL_UNIVERSE`` (local) or
  ``START_SCHEDULER_UNIVERSE`` (scheduler) is true, evaluated in the schedd's ad
  (``TotalLocalJobsRunning``, ``TotalSchedulerJobsRunning``, idle counts, ``Name``)
  with the job as ``TARGET``, and then the job's own ``Requirements``, evaluated in
  the job with the schedd's ad as ``TARGET``, is not false (a clause about a machine
  attribute the schedd's ad lacks is undefined, and does not keep the job waiting).
  A scheduler universe job also waits while its owner has
  ``MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER`` running. The counts go up with each start
  of the same pass. Jobs are taken in ``JobPrio`` order (highest first), then by id.
* A job with a ``DeferralTime`` starts at that time, not before (``next_deadline``).
* Starting is the queue's ``start`` (Running, ``JobStartDate``, ``NumJobStarts``,
  event 001 naming the schedd's address) without ``RemoteHost``: the job runs on no
  slot. Where the schedd runs as root the job runs as its ``Owner``
  (``StartLocalJob.user``), else as the schedd's own user (``run_as``).
* A run whose job is no longer running (held, removed, vacated, by a user or by
  the periodic policy) is stopped: the job's ``HoldKillSig``, ``RemoveKillSig`` or
  ``KillSig``, then SIGKILL after ``JobMaxVacateTime`` (default 10 s). A job whose
  run is still stopping does not start again until the run has ended.
* Reports: usage goes into the ad as a startd's does (``shadow.record_usage``); an
  exit of a running job is the queue's ``finish`` (exit policy, history, event 005);
  a start failure holds the job with code 6 (HTCondor's FailedToCreateProcess), the
  system error number as subcode and the starter's message; a report about a run
  that is over is ignored.
* A restarted schedd has no runs: jobs it finds Running are vacated (event 004)
  and start again (``recover``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ClassAdError, ExprTree, as_int
from htcpool.deferral import deferral_of
from htcpool.protocol import JobEvent as Report
from htcpool.protocol import Ok
from htcpool.schedd.messages import LocalJobReport, StartLocalJob, StopLocalJob
from htcpool.schedd.shadow import HOLD_STARTER_ERROR, note_usage, record_run, record_usage
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId
from htcpool.schedd.universes import Universe, runs_on_access_point, universe_of

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

#: HTCondor's default JobMaxVacateTime: seconds between the soft kill and SIGKILL
DEFAULT_VACATE_TIME = 10


class RunState(Enum):
    RUNNING = "running"    # the job is Running and its process runs
    STOPPING = "stopping"  # the job left Running; its process is being killed


@dataclass(slots=True)
class LocalRun:
    job_id: JobId
    universe: Universe
    owner: str
    job: ClassAd  # the queue's ad, still readable once the job has left the queue
    state: RunState = RunState.RUNNING


def run_as(owner: str, schedd_is_root: bool) -> str:
    """The account a local job runs as: its owner when the schedd is root, else the schedd's
    own (empty)."""
    return owner if schedd_is_root and owner and owner != "root" else ""


class LocalJobs:
    """The local and scheduler universe jobs of one schedd and their runs."""

    def __init__(self, schedd_is_root: bool = False) -> None:
        self.schedd_is_root = schedd_is_root
        #: local and scheduler universe jobs in the queue (kept small: only those)
        self.tracked: set[JobId] = set()
        self.runs: dict[str, LocalRun] = {}
        self._serial = 0

    def track(self, jobs: Iterable[tuple[JobId, ClassAd]]) -> None:
        for job_id, ad in jobs:
            if runs_on_access_point(ad):
                self.tracked.add(job_id)

    def run_of(self, job_id: JobId) -> str | None:
        return next((rid for rid, run in self.runs.items() if run.job_id == job_id), None)

    def new_run_id(self, job_id: JobId) -> str:
        self._serial += 1
        return f"local-{job_id[0]}.{job_id[1]}-{self._serial}"

    def running(self, universe: Universe, owner: str | None = None) -> int:
        return sum(1 for run in self.runs.values()
                   if run.universe is universe and (owner is None or run.owner == owner))


# --------------------------------------------------------------------------- deciding
def schedd_ad(schedd: Schedd, idle: dict[Universe, int]) -> ClassAd:
    """The schedd's ad as START_LOCAL_UNIVERSE and START_SCHEDULER_UNIVERSE see it."""
    local = schedd.local
    return ClassAd({
        "MyType": "Scheduler", "Name": schedd.name, "Machine": schedd.host,
        "ScheddIpAddr": schedd.settings.schedd_address,
        "TotalLocalJobsRunning": local.running(Universe.LOCAL),
        "TotalSchedulerJobsRunning": local.running(Universe.SCHEDULER),
        "TotalLocalJobsIdle": idle.get(Universe.LOCAL, 0),
        "TotalSchedulerJobsIdle": idle.get(Universe.SCHEDULER, 0),
    })


def schedule(schedd: Schedd, now: float) -> None:
    """Stop the runs whose job left Running, then start the idle jobs that may start now."""
    local, queue = schedd.local, schedd.queue
    if not local.tracked and not local.runs:
        return
    local.tracked = {job_id for job_id in local.tracked if job_id in queue.jobs}
    ctx = queue.context(now)
    for run_id, run in local.runs.items():
        if run.state is RunState.RUNNING:
            status = JobStatus(run.job.evaluate("JobStatus", ctx))
            if run.job_id not in queue.jobs or status not in ACTIVE:
                run.state = RunState.STOPPING
                schedd.emit(_stop(run_id, run.job, status))
    idle = [job_id for job_id in local.tracked
            if JobStatus(queue.jobs[job_id].evaluate("JobStatus", ctx)) == JobStatus.IDLE]
    if not idle:
        return
    counts: dict[Universe, int] = {}
    for job_id in idle:
        universe = universe_of(queue.jobs[job_id])
        if universe is not None:
            counts[universe] = counts.get(universe, 0) + 1
    for job_id in sorted(idle, key=lambda j: (-_prio(queue.jobs[j], ctx), j)):
        ad = queue.jobs[job_id]
        if _may_start(schedd, job_id, ad, now, counts):
            _start(schedd, job_id, ad, now)


def _prio(ad: ClassAd, ctx: Any) -> int:
    try:
        return as_int(ad.evaluate("JobPrio", ctx))
    except ClassAdError:
        return 0


def _may_start(schedd: Schedd, job_id: JobId, ad: ClassAd, now: float, idle: dict[Universe, int]) -> bool:
    universe = universe_of(ad)
    if universe is None or schedd.local.run_of(job_id) is not None:
        return False
    ctx = schedd.queue.context(now)
    try:
        deferral = deferral_of(ad, now)
    except ClassAdError:
        return False  # the queue's timer holds a job whose deferral cannot be read
    if deferral is not None and now < deferral.time:
        return False
    owner = str(ad.get("Owner", ""))
    settings = schedd.settings
    if universe is Universe.SCHEDULER and \
            schedd.local.running(universe, owner) >= settings.max_running_scheduler_jobs_per_owner:
        return False
    me = schedd_ad(schedd, idle)
    start = settings.start_local_universe if universe is Universe.LOCAL else settings.start_scheduler_universe
    try:
        if ExprTree(start).evaluate(me, ad, ctx) is not True:
            return False
        return ad.evaluate("Requirements", ctx, target=me) is not False if "Requirements" in ad else True
    except ClassAdError as e:
        schedd.queue.warnings.append(f"job {job_id[0]}.{job_id[1]}: cannot decide whether it may start: {e}")
        return False


def _start(schedd: Schedd, job_id: JobId, ad: ClassAd, now: float) -> None:
    local = schedd.local
    universe = universe_of(ad)
    assert universe is not None
    owner = str(ad.get("Owner", ""))
    schedd.queue.start(job_id, now, host=schedd.settings.schedd_address)
    if "RemoteHost" in ad:
        del ad["RemoteHost"]  # a local job runs on no slot
    schedd.queue.save(job_id, now)
    run_id = local.new_run_id(job_id)
    local.runs[run_id] = LocalRun(job_id, universe, owner, ad)
    schedd.emit(StartLocalJob(run_id, job_id[0], job_id[1], ad.copy(), run_as(owner, local.schedd_is_root)))


def _stop(run_id: str, ad: ClassAd, status: JobStatus) -> StopLocalJob:
    """How a run whose job left Running is killed (see the module rules)."""
    attr = {JobStatus.HELD: "HoldKillSig", JobStatus.IDLE: "KillSig"}.get(status, "RemoveKillSig")
    sig = "SIGTERM"
    for name in (attr, "KillSig"):
        value = ad.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            sig = str(value)
            break
    grace = ad.get("JobMaxVacateTime")
    if not isinstance(grace, int) or isinstance(grace, bool) or grace < 0:
        grace = DEFAULT_VACATE_TIME
    return StopLocalJob(run_id, sig, float(grace))


def next_deadline(schedd: Schedd, now: float) -> float | None:
    """The earliest deferral time of an idle local job still waiting for it."""
    times = []
    for job_id in schedd.local.tracked:
        ad = schedd.queue.jobs.get(job_id)
        if ad is None or "DeferralTime" not in ad:
            continue
        try:
            deferral = deferral_of(ad, now)
        except ClassAdError:
            continue
        if deferral is not None and deferral.time > now and schedd.queue.status(job_id) == JobStatus.IDLE:
            times.append(float(deferral.time))
    return min(times) if times else None


def recover(schedd: Schedd, now: float) -> None:
    """After a restart: the tracked jobs left Running have no process; they start again."""
    for job_id in sorted(schedd.local.tracked):
        if schedd.queue.status(job_id) in ACTIVE:
            schedd.queue.vacate(job_id, None, now, "the schedd restarted")


def vacate(schedd: Schedd, job_id: JobId, user: str | None, now: float) -> bool:
    """condor_vacate_job of a running local job: back to Idle (its run is stopped); False when
    the job has no run here."""
    run_id = schedd.local.run_of(job_id)
    if run_id is None or schedd.local.runs[run_id].state is not RunState.RUNNING:
        return False
    schedd.queue.vacate(job_id, user, now, "via condor_vacate_job")
    return True


# --------------------------------------------------------------------------- messages
def on_report(schedd: Schedd, report: LocalJobReport, now: float) -> Ok:
    update = report.update
    run = schedd.local.runs.get(update.claim_id)
    if run is None:
        return Ok("unknown run")
    event = Report(update.event)
    if event is Report.EXITED:
        del schedd.local.runs[update.claim_id]
    live = run.state is RunState.RUNNING and run.job_id in schedd.queue.jobs \
        and schedd.queue.status(run.job_id) in ACTIVE
    handler = _REPORTS.get(event)
    if live and handler is not None:
        handler(schedd, run.job_id, report, now)
    return Ok()


def _usage(schedd: Schedd, job_id: JobId, report: LocalJobReport, now: float) -> None:
    note_usage(schedd, job_id, report.update, now)


def _error(schedd: Schedd, job_id: JobId, report: LocalJobReport, now: float) -> None:
    reason = f"Error from starter on {schedd.host}: {report.update.message}"
    schedd.queue.hold(job_id, None, now, reason, HOLD_STARTER_ERROR, report.subcode)


def _exited(schedd: Schedd, job_id: JobId, report: LocalJobReport, now: float) -> None:
    u = report.update
    ad = schedd.queue.jobs[job_id]
    record_usage(ad, u)
    record_run(ad, u)
    schedd.queue.finish(job_id, now, u.exit_code, u.exit_signal)


_REPORTS: dict[Report, Callable[[Schedd, JobId, LocalJobReport, float], None]] = {
    Report.USAGE: _usage,
    Report.ERROR: _error,
    Report.EXITED: _exited,
}

HANDLERS: dict[type, Callable[[Schedd, Any, float], Any]] = {LocalJobReport: on_report}

__all__ = ["DEFAULT_VACATE_TIME", "HANDLERS", "LocalJobs", "LocalRun", "RunState", "Universe", "next_deadline",
           "on_report", "recover", "run_as", "runs_on_access_point", "schedule", "universe_of", "vacate"]
