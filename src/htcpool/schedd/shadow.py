"""The shadow's decisions: what a startd's replies and reports mean for the claims and the jobs.

In HTCondor a shadow process per running job hears from the starter; here the schedd
core takes the startd's messages directly, one handler per message type (``HANDLERS``)
and one per reported event (``UPDATES``):

* ``ClaimReply``, ``ActivateReply``, ``DeactivateReply`` go to the claim manager. An
  accepted claim on a partitionable slot may come back as a dynamic slot with another
  name (the claim takes it) and with the leftovers (``offers.claim_leftovers``). The job
  ad already holds its ``ClaimId``, its startd's address (``StartdAddress``) and
  ``LastJobLeaseRenewal`` from the moment its activation was decided (``claims``), which a
  restarted schedd reconnects with (``reconnect``); an accepted activation's reply says
  what the slot gives the job (its provisioned resources, into the job ad); a refused one
  puts the job back to Idle and releases the claim.
* ``NotifySchedd`` release: the startd ended the claim; a running job goes back to Idle
  with the startd's reason, and the negotiator is asked for a cycle.
* ``HoldJob`` (``WANT_HOLD`` when the startd preempted): the running job is held with
  the startd's code and reason.
* ``JobUpdate`` events: provisioned resources go into the job ad; suspended and
  continued move the job between Running and Suspended; usage is recorded under
  HTCondor's names (``ImageSize``, never shrinking, ``ResidentSetSize``,
  ``MemoryUsage`` as the expression ``((ResidentSetSize + 1023) / 1024)``,
  ``RemoteUserCpu``, ``RemoteSysCpu``, ``DiskUsage``, ``CpusUsage``) with an image-size event (006) in the user log
  whenever the size grows; a start error holds the job with code 6 ("Error from
  starter: …") and a missed deferral with code 20, each releasing the claim; an exit
  adds the run's totals (``ActivationDuration``, ``ActivationExecutionDuration``,
  ``CumulativeRemoteUserCpu``/``SysCpu``) and, unless the startd killed the job
  itself, hands the exit to the claim manager (exit policy, then reuse of the claim);
  an exit carrying a hold code (a job over its cgroup memory limit: 34) holds the job
  with the starter's message and releases the claim.
* Every report renews the claim's lease and the job's ``LastJobLeaseRenewal``.
* Orphans: a message about a claim the schedd no longer holds (or not yet, right
  after a restart). An exit finishes the running job whose ``ClaimId`` it names; an
  accepted claim is released at once; anything else is answered "unknown claim".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from htcpool.classad import ClassAd, ExprTree, as_float, as_int
from htcpool.deferral import HOLD_MISSED_DEFERRAL, MISSED_DEFERRAL_REASON
from htcpool.protocol import JobEvent as Report
from htcpool.protocol import JobUpdate, Ok
from htcpool.protocol.startd import (
    UNKNOWN_CLAIM,
    ActivateReply,
    ClaimReply,
    DeactivateReply,
    HoldJob,
    Notice,
    NotifySchedd,
    ReleaseClaim,
)
from htcpool.schedd import offers
from htcpool.schedd.claims import UnknownClaim
from htcpool.schedd.eventlog import IMAGE_SIZE, LogEvent
from htcpool.schedd.messages import ToStartd
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

HOLD_STARTER_ERROR = 6  # HTCondor's hold code: the job could not be started
Handler = Callable[["Schedd", Any, float], Any]


# --------------------------------------------------------------------------- claim replies
def on_claim_reply(schedd: Schedd, reply: ClaimReply, now: float) -> Ok:
    claim = schedd.claims.claim(reply.claim_id)
    submitter = claim.submitter
    if reply.accepted and reply.slot and claim.slot_ad.get("Name") != reply.slot:
        claim.slot_ad = claim.slot_ad.copy()  # a dynamic slot carved from the matched one
        claim.slot_ad["Name"] = reply.slot
    actions = schedd.claims.claim_reply(reply, now)
    if reply.accepted:
        offers.claim_leftovers(schedd, reply, submitter, now)
    # the leftovers' claim goes out ahead of this claim's activation: each claim on a partitionable
    # slot waits for the one before it, each activation for nothing, so on a startd that takes
    # them in turn the slot's d-slots fill sooner (the first jobs of a new submitter)
    schedd.send_claim_actions(actions)
    return Ok()


def on_activate_reply(schedd: Schedd, reply: ActivateReply, now: float) -> Ok:
    job_id = schedd.renew(reply.claim_id, now)
    if reply.accepted and reply.resources and job_id is not None and job_id in schedd.queue.jobs:
        _provide(schedd, job_id, reply.resources, now)
    schedd.send_claim_actions(schedd.claims.activate_reply(reply, now))  # a refusal: a release
    return Ok()


def on_deactivate_reply(schedd: Schedd, reply: DeactivateReply, now: float) -> Ok:
    schedd.send_claim_actions(schedd.claims.deactivate_reply(reply, now))
    return Ok()


def on_notify(schedd: Schedd, notice: NotifySchedd, now: float) -> Ok:
    if Notice(notice.kind) is Notice.RELEASE:
        schedd.claims.startd_released(notice.claim_id, now, notice.reason)
        schedd.reschedule("a claim ended")
    return Ok()


def on_hold_job(schedd: Schedd, message: HoldJob, now: float) -> Ok:
    job_id = schedd.renew(message.claim_id, now)
    if job_id is not None and job_id in schedd.queue.jobs and schedd.queue.status(job_id) in ACTIVE:
        schedd.queue.hold(job_id, None, now, message.reason, message.code, message.subcode)
    return Ok()


# --------------------------------------------------------------------------- job reports
def on_job_update(schedd: Schedd, update: JobUpdate, now: float) -> Ok:
    job_id = schedd.renew(update.claim_id, now)
    if job_id is None or job_id not in schedd.queue.jobs:
        raise UnknownClaim(update.claim_id)
    handler = UPDATES.get(Report(update.event))
    if handler is not None:  # "started" only renews the lease, as every report does
        handler(schedd, job_id, update, now)
    return Ok()


def _provisioned(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    _provide(schedd, job_id, u.resources, now)


def _provide(schedd: Schedd, job_id: JobId, resources: Mapping[str, Any], now: float) -> None:
    """What the slot gives the job, into its ad (an accepted activation's, or a ``provisioned``
    report's)."""
    ad = schedd.queue.jobs[job_id]
    for attr, value in resources.items():
        ad[attr] = value
    schedd.queue.save(job_id, now)


def _suspended(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    if schedd.queue.status(job_id) == JobStatus.RUNNING:
        schedd.queue.suspend(job_id, now, max(1, u.processes))


def _continued(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    if schedd.queue.status(job_id) == JobStatus.SUSPENDED:
        schedd.queue.unsuspend(job_id, now)


def note_usage(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    """A running job's usage report: into its ad, and an image-size event when it grew."""
    record_usage(schedd.queue.jobs[job_id], u)
    schedd.queue.save(job_id, now)
    size = int(u.image_size_kb or 0)
    if size > schedd.image_sizes.get(job_id, 0):
        schedd.image_sizes[job_id] = size
        rss = int(u.rss_kb or 0)
        schedd.queue.events.append(LogEvent(IMAGE_SIZE, job_id[0], job_id[1], now, image_size=size,
                                            memory_usage=(rss + 1023) // 1024, resident_set_size=rss))


def _missed_deferral(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    _hold_and_release(schedd, job_id, u.claim_id, now, MISSED_DEFERRAL_REASON, HOLD_MISSED_DEFERRAL)


def _start_error(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    _hold_and_release(schedd, job_id, u.claim_id, now, f"Error from starter: {u.message}", HOLD_STARTER_ERROR)


def _hold_and_release(schedd: Schedd, job_id: JobId, claim_id: str, now: float, reason: str, code: int,
                      subcode: int = 0) -> None:
    if schedd.queue.status(job_id) in ACTIVE:
        schedd.queue.hold(job_id, None, now, reason, code, subcode)
    schedd.send_claim_actions(schedd.claims.release(claim_id, now))


def _exited(schedd: Schedd, job_id: JobId, u: JobUpdate, now: float) -> None:
    ad = schedd.queue.jobs[job_id]
    record_usage(ad, u)
    record_run(ad, u)
    if u.hold_code:  # the starter ended the job and holds it (over its memory limit): never rerun
        _hold_and_release(schedd, job_id, u.claim_id, now, u.message, u.hold_code, u.hold_subcode)
        return
    if not u.killed and schedd.queue.status(job_id) in ACTIVE:
        actions = schedd.claims.job_exited(u.claim_id, now, u.exit_code, u.exit_signal, u.claim_open)
        schedd.send_claim_actions(actions)


UpdateHandler = Callable[["Schedd", JobId, JobUpdate, float], None]
UPDATES: dict[Report, UpdateHandler] = {
    Report.PROVISIONED: _provisioned,
    Report.SUSPENDED: _suspended,
    Report.CONTINUED: _continued,
    Report.USAGE: note_usage,
    Report.MISSED_DEFERRAL: _missed_deferral,
    Report.ERROR: _start_error,
    Report.EXITED: _exited,
}


def record_usage(ad: ClassAd, u: JobUpdate) -> None:
    """The run's usage so far, under HTCondor's attribute names."""
    if u.image_size_kb:
        ad["ImageSize"] = max(int(u.image_size_kb), as_int(ad.get("ImageSize")))
    if u.rss_kb:
        ad["ResidentSetSize"] = int(u.rss_kb)
        ad["MemoryUsage"] = ExprTree("((ResidentSetSize + 1023) / 1024)")
    if u.user_cpu or u.sys_cpu:
        ad["RemoteUserCpu"] = float(u.user_cpu)
        ad["RemoteSysCpu"] = float(u.sys_cpu)
    if u.disk_usage_kb:
        ad["DiskUsage"] = int(u.disk_usage_kb)
    if u.cpus_usage:
        ad["CpusUsage"] = float(u.cpus_usage)
    if u.gpus_usage is not None:
        ad["GPUsUsage"] = float(u.gpus_usage)
    if u.gpus_memory_mb is not None:
        ad["GPUsMemoryUsage"] = int(round(u.gpus_memory_mb))


def record_run(ad: ClassAd, u: JobUpdate) -> None:
    """A finished run's totals, as the shadow adds them to the job ad."""
    ad["ActivationExecutionDuration"] = int(u.wall)
    ad["ActivationDuration"] = int(u.wall)
    ad["CumulativeRemoteUserCpu"] = as_float(ad.get("CumulativeRemoteUserCpu")) + float(u.user_cpu)
    ad["CumulativeRemoteSysCpu"] = as_float(ad.get("CumulativeRemoteSysCpu")) + float(u.sys_cpu)


# --------------------------------------------------------------------------- orphans
def _orphan_update(schedd: Schedd, update: JobUpdate, now: float) -> Ok:
    if Report(update.event) is Report.EXITED and not update.killed:
        for job_id, ad in list(schedd.queue.jobs.items()):
            if ad.get("ClaimId") == update.claim_id and schedd.queue.status(job_id) in ACTIVE:
                schedd.queue.finish(job_id, now, update.exit_code, update.exit_signal)
                schedd.reconnection.forget(update.claim_id)
    return Ok(UNKNOWN_CLAIM)


def _orphan_claim_reply(schedd: Schedd, reply: ClaimReply, now: float) -> Ok:
    if reply.accepted:
        address = str(reply.leftovers.get("MyAddress", "")) if reply.leftovers is not None \
            else schedd.startd_addresses.get(reply.claim_id, "")
        schedd.emit(ToStartd(address, ReleaseClaim(reply.claim_id)))
    return Ok(UNKNOWN_CLAIM)


ORPHANS: dict[type, Handler] = {JobUpdate: _orphan_update, ClaimReply: _orphan_claim_reply}


def _about_a_claim(handler: Handler) -> Handler:
    """The handler, with a message about a claim the schedd does not hold going to ``ORPHANS``."""

    def guarded(schedd: Schedd, message: Any, now: float) -> Any:
        try:
            return handler(schedd, message, now)
        except UnknownClaim:
            orphan = ORPHANS.get(type(message))
            return orphan(schedd, message, now) if orphan is not None else Ok(UNKNOWN_CLAIM)

    return guarded


#: replies whose queue writes need not be on disk before the schedd goes on: a claim's reply
#: marks a job running on it and names the claim in the job ad, which HTCondor's schedd commits
#: without syncing (``mark_serial_job_running``, and the claim id as the shadow starts). A crash
#: of the machine can lose them, not one of the process; the job is then Idle again and the claim
#: is given up by its startd when its lease ends. The job's start (the accepted activation:
#: ``NumJobStarts``, the execute event) and its exit are synced, as there.
NOT_SYNCED: frozenset[type] = frozenset({ClaimReply})

HANDLERS: dict[type, Handler] = {
    message_type: _about_a_claim(handler) for message_type, handler in (
        (ClaimReply, on_claim_reply),
        (ActivateReply, on_activate_reply),
        (DeactivateReply, on_deactivate_reply),
        (NotifySchedd, on_notify),
        (HoldJob, on_hold_job),
        (JobUpdate, on_job_update),
    )
}

__all__ = ["HANDLERS", "HOLD_STARTER_ERROR", "NOT_SYNCED", "ORPHANS", "UPDATES", "record_run", "record_usage"]
