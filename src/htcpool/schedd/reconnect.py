"""A restarted schedd finds its running jobs again (HTCondor's job lease and reconnection).

A running job's ad keeps its claim id (``ClaimId``), its startd's address
(``StartdAddress``) and the time of the last word from that startd
(``LastJobLeaseRenewal``). When the schedd starts (``begin``):

* an active job without a claim id or a startd address goes back to Idle;
* for every other active job the core asks the startd about the claim
  (``AskStartd`` with ``Reconnect``); the driver hands the answer back.

The answers (``on_reply``, ``on_unreachable``):

* a live claim that holds the job (the startd names it as the job last activated on the
  claim, running or exited) is adopted (Busy; its lease and keep-alives start again): the
  job runs on, or its exit, which the startd keeps sending until the schedd takes it,
  completes it; a job the schedd had recorded Running but whose activation never reached
  the startd (killed between the two) goes back to Idle and the claim is released; a claim
  the startd no longer has sends the job back to Idle;
* a startd that cannot be reached is asked again every ``RETRY_INTERVAL`` seconds
  (``retry``, from the core's timer) until ``LastJobLeaseRenewal`` plus the job's
  ``JobLeaseDuration`` (``DEFAULT_JOB_LEASE`` when it has none) has passed; then the
  job goes back to Idle. The first failed attempt does not give up: the lease is
  looked at from the first retry on.

A job that stops being active meanwhile (it exited, reported by its startd as an
orphan, or was removed) is forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, as_number
from htcpool.protocol import Reconnect, ReconnectReply
from htcpool.protocol.startd import ReleaseClaim
from htcpool.schedd.messages import AskStartd, StartdUnreachable, ToStartd
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

RETRY_INTERVAL = 2.0
DEFAULT_JOB_LEASE = 2400  # seconds: HTCondor's JobLeaseDuration when the job sets none
NO_CLAIM = "The schedd restarted and the job's claim was unknown."
GONE_AT_RESTART = "The job's claim was gone when the schedd restarted."
GONE_AT_RETRY = "The job's claim was gone when the schedd reconnected."
RECONNECT_FAILED = "The job's execute point could not be reached within its lease."
NEVER_ACTIVATED = "The schedd restarted before the job's activation reached its execute point."


@dataclass
class Reconnecting:
    """A running job whose startd is being asked about its claim."""

    job_id: JobId
    claim_id: str
    address: str
    attempts: int = 1


class Reconnection:
    """The jobs being reconnected, by claim id, and when to ask again."""

    def __init__(self) -> None:
        self.jobs: dict[str, Reconnecting] = {}
        self.retry_at = 0.0

    def next_deadline(self) -> float | None:
        return self.retry_at if self.jobs else None

    def forget(self, claim_id: str) -> None:
        self.jobs.pop(claim_id, None)


def begin(schedd: Schedd, now: float) -> None:
    """Ask the startd of every active job about its claim; requeue jobs without one."""
    ctx = schedd.queue.context(now)
    for job_id, ad in list(schedd.queue.jobs.items()):
        if JobStatus(ad.evaluate("JobStatus", ctx)) not in ACTIVE:
            continue
        claim_id, address = ad.get("ClaimId"), ad.get("StartdAddress")
        if not isinstance(claim_id, str) or not isinstance(address, str):
            _requeue(schedd, job_id, now, NO_CLAIM)
            continue
        entry = schedd.reconnection.jobs[claim_id] = Reconnecting(job_id, claim_id, address)
        _ask(schedd, entry)
    schedd.reconnection.retry_at = now + RETRY_INTERVAL


def on_reply(schedd: Schedd, reply: ReconnectReply, now: float) -> None:
    entry = schedd.reconnection.jobs.pop(reply.claim_id, None)
    if entry is None or not _active(schedd, entry.job_id):
        return
    if not reply.alive:
        _requeue(schedd, entry.job_id, now, GONE_AT_RESTART if entry.attempts == 1 else GONE_AT_RETRY)
    elif not _ran_there(reply, entry.job_id):
        _requeue(schedd, entry.job_id, now, NEVER_ACTIVATED)
        schedd.emit(ToStartd(entry.address, ReleaseClaim(entry.claim_id)))
        schedd.reschedule("a claim was released")
    elif entry.claim_id not in schedd.claims.claims:
        schedd.claims.adopt(ClassAd({"Name": reply.slot, "MyAddress": entry.address}), entry.claim_id,
                            entry.job_id, now)
        schedd.startd_addresses[entry.claim_id] = entry.address
        if not schedd.queue.has_begun(entry.job_id):  # killed before the activation's answer came
            schedd.queue.began(entry.job_id, now, slot_name=reply.slot)


def _ran_there(reply: ReconnectReply, job_id: JobId) -> bool:
    """Whether the startd's claim holds (or held) this job: it names the job last activated on
    the claim; a startd that names none but is busy is taken at its word (an older startd)."""
    if reply.job:
        return reply.job == f"{job_id[0]}.{job_id[1]}"
    return reply.activity not in ("", "Idle")


def on_unreachable(schedd: Schedd, message: StartdUnreachable, now: float) -> None:
    entry = schedd.reconnection.jobs.get(message.claim_id)
    if entry is None or entry.attempts == 1:
        return
    if not _active(schedd, entry.job_id):
        schedd.reconnection.forget(entry.claim_id)
    elif _lease_expired(schedd.queue.jobs[entry.job_id], now):
        schedd.reconnection.forget(entry.claim_id)
        _requeue(schedd, entry.job_id, now, RECONNECT_FAILED)


def retry(schedd: Schedd, now: float) -> None:
    """Ask again about the jobs still waiting, when a retry is due."""
    reconnection = schedd.reconnection
    if not reconnection.jobs or now < reconnection.retry_at:
        return
    for entry in list(reconnection.jobs.values()):
        if not _active(schedd, entry.job_id):
            reconnection.forget(entry.claim_id)
            continue
        entry.attempts += 1
        _ask(schedd, entry)
    reconnection.retry_at = now + RETRY_INTERVAL


def _ask(schedd: Schedd, entry: Reconnecting) -> None:
    schedd.emit(AskStartd(entry.address, Reconnect(entry.claim_id, schedd.name)))


def _active(schedd: Schedd, job_id: JobId) -> bool:
    return job_id in schedd.queue.jobs and schedd.queue.status(job_id) in ACTIVE


def _lease_expired(ad: ClassAd, now: float) -> bool:
    renewed = as_number(ad.get("LastJobLeaseRenewal"))
    lease = as_number(ad.get("JobLeaseDuration"))
    lease = lease if lease is not None and lease > 0 else DEFAULT_JOB_LEASE
    return renewed is None or now > renewed + lease


def _requeue(schedd: Schedd, job_id: JobId, now: float, reason: str) -> None:
    """Back to Idle: evicted when its run had begun, else without an event (``queue.vacate``)."""
    if _active(schedd, job_id):
        schedd.queue.vacate(job_id, None, now, reason)


__all__ = ["DEFAULT_JOB_LEASE", "RETRY_INTERVAL", "Reconnecting", "Reconnection", "begin", "on_reply",
           "on_unreachable", "retry"]
