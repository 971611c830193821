"""Claims from the schedd's side: request, activate, reuse, release, keep-alives, leases.

``ClaimManager`` turns matches from the negotiator into claims on slots and
runs the queue's jobs on them. Every entry point takes ``now`` and returns the
messages to send to startds (the startd core's ``RequestClaim``,
``ActivateClaim``, ``DeactivateClaim``, ``ReleaseClaim`` and ``Alive``); job
state changes go straight to the ``JobQueue``. Each claim's state follows
``TRANSITIONS[(state, event)]``; a pair missing from it raises
``IllegalClaimEvent`` naming the event and the state.

Rules the table does not show (HTCondor's manual: "Job Leases", and the configuration
macros ``CLAIM_WORKLIFE``, ``ALIVE_INTERVAL``, ``MAX_CLAIM_ALIVES_MISSED``):

* A claim is accepted → Idle, and at once gets a job: the matched job if it
  is still Idle, else the best Idle job of the **same submitter** whose
  Requirements hold against the slot ad it was matched with (``next_job``).
  A job waiting on one claim's activation is never offered to another.
* The job is Running from the moment its activation is decided, as HTCondor marks a job
  running when its shadow starts: the status, the claim id, the startd's address and
  ``LastJobLeaseRenewal`` are written in one save before ``ActivateClaim`` leaves, so a
  schedd killed in between finds the job on its claim and reconnects (``reconnect``). A
  refused activation sends the job back to Idle and releases the claim.
* When a job exits the claim is deactivated. A reply with ``start`` false
  (the startd is closing the claim) drops it without a message. Otherwise it
  is reused, unless the claim is older than the slot ad's ``CLAIM_WORKLIFE``
  (age from the claim's acceptance; absent, undefined, −1 or impossible to
  evaluate ⇒ no limit; an expression reads the time of the decision), or
  no job fits: then it is released, except that a previous job with
  ``KeepClaimIdle = N`` keeps it Idle for N seconds, offered again on timers.
* Keep-alives: every claim after acceptance gets ``Alive`` every alive
  interval: ``ALIVE_INTERVAL``, lowered to ``JobLeaseDuration/3`` (floor 10 s)
  of any job activated so far, as ``RecomputeAliveInterval`` does.
* Leases: every message from the startd about a claim renews it. A claim that
  stays silent past its lease (the job's ``JobLeaseDuration``, else
  ``MAX_CLAIM_ALIVES_MISSED`` × the alive interval) is dropped without a
  message (the startd killed it at its own expiry) and its running job goes
  back to Idle (evicted).
* The claim request carries what the negotiator said of the match: ``RemoteGroup`` (the job's
  accounting group, only in a pool with groups), ``RemoteNegotiatingGroup`` and
  ``RemoteAutoregroup`` (``negotiated_attributes``), which the startd publishes in the claimed
  slot's ad for preemption policies. A claim on partitionable-slot leftovers carries none of them,
  as in HTCondor 25, whose schedd copies them from the negotiator's match ad only.
* Removing a job that holds a claim releases the claim (the startd kills the
  job, code 1017). A release notice from the startd drops the claim and
  evicts its job back to Idle.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import Enum

from htcpool.classad import ClassAd, ClassAdError, EvalContext
from htcpool.classad.match import requirements_hold
from htcpool.protocol.startd import (
    ActivateClaim,
    ActivateReply,
    Alive,
    ClaimReply,
    DeactivateClaim,
    DeactivateReply,
    ReleaseClaim,
    RequestClaim,
)
from htcpool.schedd.claimtimes import ClaimTable, Watcher
from htcpool.schedd.errors import ScheddError
from htcpool.schedd.priority import submitter_of
from htcpool.schedd.queue import JobQueue
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId

ClaimAction = RequestClaim | ActivateClaim | DeactivateClaim | ReleaseClaim | Alive
MIN_ALIVE_INTERVAL = 10
LEASE_EXPIRED_REASON = "Job lease expired: the execute point stopped answering."
STARTD_RELEASED_REASON = "The execute point released the claim."
STARTD_FORGOT_REASON = "The execute point no longer holds the claim (it restarted)."


class ClaimState(Enum):
    REQUESTED = "Requested"        # REQUEST_CLAIM sent, no reply yet
    IDLE = "Idle"                  # claimed, no job on it
    ACTIVATING = "Activating"      # ACTIVATE_CLAIM sent with a job
    BUSY = "Busy"                  # the job runs
    DEACTIVATING = "Deactivating"  # the job exited, DEACTIVATE_CLAIM sent
    RELEASED = "Released"          # gone (released, refused, closed or lost)


class ClaimEvent(Enum):
    CLAIM_ACCEPTED = "accept the claim of"
    CLAIM_REFUSED = "refuse the claim of"
    ACTIVATE = "activate"
    ACTIVATE_ACCEPTED = "accept the activation of"
    ACTIVATE_REFUSED = "refuse the activation of"
    JOB_EXITED = "end the job of"
    DEACTIVATED = "finish deactivating"
    CLAIM_CLOSING = "close"
    RELEASE = "release"
    JOB_REMOVED = "remove the job of"
    LEASE_EXPIRED = "expire the lease of"
    STARTD_RELEASED = "have the startd release"


class IllegalClaimEvent(ScheddError):
    def __init__(self, event: ClaimEvent, state: ClaimState) -> None:
        super().__init__(f"cannot {event.value} a claim that is {state.value}")
        self.event = event
        self.state = state


class UnknownClaim(ScheddError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown claim"


S, E = ClaimState, ClaimEvent
_LOST = {E.LEASE_EXPIRED: S.RELEASED, E.STARTD_RELEASED: S.RELEASED, E.RELEASE: S.RELEASED}
TRANSITIONS: dict[tuple[ClaimState, ClaimEvent], ClaimState] = {
    (S.REQUESTED, E.CLAIM_ACCEPTED): S.IDLE,
    (S.REQUESTED, E.CLAIM_REFUSED): S.RELEASED,
    (S.REQUESTED, E.JOB_REMOVED): S.REQUESTED,
    (S.REQUESTED, E.LEASE_EXPIRED): S.RELEASED,
    (S.IDLE, E.ACTIVATE): S.ACTIVATING,
    (S.ACTIVATING, E.ACTIVATE_ACCEPTED): S.BUSY,
    (S.ACTIVATING, E.ACTIVATE_REFUSED): S.RELEASED,
    (S.ACTIVATING, E.JOB_REMOVED): S.RELEASED,
    (S.BUSY, E.JOB_EXITED): S.DEACTIVATING,
    (S.BUSY, E.JOB_REMOVED): S.RELEASED,
    (S.DEACTIVATING, E.DEACTIVATED): S.IDLE,
    (S.DEACTIVATING, E.CLAIM_CLOSING): S.RELEASED,
    **{(state, event): target for state in (S.IDLE, S.ACTIVATING, S.BUSY, S.DEACTIVATING)
       for event, target in _LOST.items()},
}
del S, E


def next_claim_state(state: ClaimState, event: ClaimEvent) -> ClaimState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalClaimEvent(event, state) from None


@dataclass
class Claim:
    """One claim as the schedd holds it (a row of ``ClaimManager.claims``)."""

    claim_id: str
    slot_ad: ClassAd
    submitter: str
    job: JobId | None
    state: ClaimState = ClaimState.REQUESTED
    requested_at: float = 0.0
    claimed_at: float | None = None
    activations: int = 0
    last_heard: float = 0.0
    lease: float = 0.0
    next_alive: float | None = None
    keep_idle_until: float | None = None
    table: Watcher | None = field(default=None, repr=False, compare=False)

    def deadline(self) -> float:
        """The earliest keep-alive, lease expiry or end of being kept idle of this claim."""
        when = self.last_heard + self.lease
        if self.next_alive is not None and self.next_alive < when:
            when = self.next_alive
        if self.state is ClaimState.IDLE and self.keep_idle_until is not None and self.keep_idle_until < when:
            when = self.keep_idle_until
        return when

    def watch(self, table: Watcher) -> None:
        self.table = table

    def waiting(self) -> bool:
        """An idle claim: every timer firing tries to place a job on it (``ClaimManager.handle_timer``)."""
        return self.state is ClaimState.IDLE

    def reserves(self) -> JobId | None:
        """The job this claim holds for running: while it activates or runs it."""
        return self.job if self.job is not None and self.state in _RESERVING else None

    def __setattr__(self, name: str, value: object) -> None:
        table = self.__dict__.get("table")
        if table is None:
            object.__setattr__(self, name, value)
            return
        if name in _RESERVE_FIELDS:
            before = (self.job, self.reserves())
            object.__setattr__(self, name, value)
            table.jobs_moved(self, before)
        else:
            object.__setattr__(self, name, value)
        if name in _DEADLINE_FIELDS:
            table.touched(self)


_DEADLINE_FIELDS = frozenset({"state", "last_heard", "lease", "next_alive", "keep_idle_until"})
_RESERVE_FIELDS = frozenset({"state", "job"})
_RESERVING = frozenset({ClaimState.ACTIVATING, ClaimState.BUSY})


def negotiated_attributes(group: str, negotiating_group: str,
                          autoregroup: bool) -> tuple[tuple[str, object], ...]:
    """What a match from the negotiator adds to the claim request: ``RemoteGroup`` when the job
    has an accounting group, ``RemoteNegotiatingGroup`` and ``RemoteAutoregroup`` when the
    negotiator named the group it negotiated for."""
    out: list[tuple[str, object]] = []
    if group:
        out.append(("RemoteGroup", group))
    if negotiating_group:
        out += [("RemoteNegotiatingGroup", negotiating_group), ("RemoteAutoregroup", autoregroup)]
    return tuple(out)


def claim_worklife(slot_ad: ClassAd, context: EvalContext) -> float | None:
    """The slot ad's ``CLAIM_WORKLIFE`` in seconds, evaluated in ``context``; None (no limit) when
    absent, undefined, −1 or impossible to evaluate."""
    value = _seconds(slot_ad, "CLAIM_WORKLIFE", context)
    return None if value is None or value < 0 else value


def _seconds(ad: ClassAd, attr: str, context: EvalContext) -> float | None:
    """A number of seconds from the ad; None when absent, not a number or impossible to evaluate."""
    try:
        value = ad.evaluate(attr, context) if attr in ad else None
    except ClassAdError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class ClaimManager:
    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self.settings = queue.settings
        self.claims: ClaimTable[Claim] = ClaimTable()  # keeps their earliest deadline at hand
        self.alive_interval = float(max(MIN_ALIVE_INTERVAL, self.settings.alive_interval))

    # -- the table
    def state(self, claim_id: str) -> ClaimState:
        return self.claim(claim_id).state

    def table(self) -> dict[str, tuple[ClaimState, JobId | None]]:
        """Every held claim: its state and the job on it."""
        return {cid: (c.state, c.job) for cid, c in self.claims.items()}

    def claim(self, claim_id: str) -> Claim:
        try:
            return self.claims[claim_id]
        except KeyError:
            raise UnknownClaim(f"claim {claim_id} is not held by this schedd") from None

    def _move(self, claim: Claim, event: ClaimEvent) -> None:
        claim.state = next_claim_state(claim.state, event)
        if claim.state is ClaimState.RELEASED:
            del self.claims[claim.claim_id]

    def _heard(self, claim: Claim, now: float) -> None:
        claim.last_heard = now

    def _default_lease(self) -> float:
        return self.settings.max_claim_alives_missed * self.alive_interval

    def _reserved(self) -> AbstractSet[JobId]:
        """The jobs a claim activates or runs (kept by the claims table, not walked for)."""
        return self.claims.reserved_jobs()  # type: ignore[return-value]

    # -- from the negotiator
    def match(self, slot_ad: ClassAd, claim_id: str, job_id: JobId, now: float,
              negotiated: tuple[tuple[str, object], ...] = ()) -> list[ClaimAction]:
        """The negotiator matched ``job_id`` to the slot: ask the startd for the claim, the request
        carrying the ``negotiated`` attributes (``negotiated_attributes``)."""
        if claim_id in self.claims:
            raise ScheddError(f"claim {claim_id} is already held")
        job = self.queue.job(job_id)
        ctx = self.queue.context(now)
        submitter = submitter_of(job, self.settings.accounting_domain, ctx)
        self.claims[claim_id] = Claim(claim_id, slot_ad, submitter, job_id, requested_at=now,
                                      last_heard=now, lease=self._lease_for(job, ctx))
        if negotiated:
            job = job.copy()
            for attr, value in negotiated:
                job[attr] = value
        return [RequestClaim(claim_id, job, self.settings.schedd_name, self.alive_interval)]

    def adopt(self, slot_ad: ClassAd, claim_id: str, job_id: JobId, now: float) -> None:
        """Take back a claim whose job still runs (a restarted schedd reconnecting to it).

        The claim is Busy with ``job_id``; its lease and keep-alives start again now.
        """
        if claim_id in self.claims:
            raise ScheddError(f"claim {claim_id} is already held")
        job = self.queue.job(job_id)
        ctx = self.queue.context(now)
        submitter = submitter_of(job, self.settings.accounting_domain, ctx)
        self.claims[claim_id] = Claim(claim_id, slot_ad, submitter, job_id, state=ClaimState.BUSY,
                                      requested_at=now, claimed_at=now, activations=1, last_heard=now,
                                      lease=self._lease_for(job, ctx), next_alive=now)

    # -- replies and notices from the startd
    def claim_reply(self, reply: ClaimReply, now: float) -> list[ClaimAction]:
        claim = self.claim(reply.claim_id)
        self._heard(claim, now)
        if not reply.accepted:
            self._move(claim, ClaimEvent.CLAIM_REFUSED)
            return []
        self._move(claim, ClaimEvent.CLAIM_ACCEPTED)
        claim.claimed_at = now
        claim.next_alive = now + self.alive_interval
        return self._place_job(claim, now)

    def activate_reply(self, reply: ActivateReply, now: float) -> list[ClaimAction]:
        claim = self.claim(reply.claim_id)
        self._heard(claim, now)
        if not reply.accepted:
            self._move(claim, ClaimEvent.ACTIVATE_REFUSED)
            job, claim.job = claim.job, None
            if job is not None and job in self.queue.jobs and self.queue.status(job) in ACTIVE:
                self.queue.not_begun(job, now)
            return [ReleaseClaim(claim.claim_id)]
        self._move(claim, ClaimEvent.ACTIVATE_ACCEPTED)
        claim.activations += 1
        if claim.job is not None and claim.job in self.queue.jobs:
            ctx = self.queue.context(now)
            self.queue.began(claim.job, now, host=_text(claim.slot_ad, "StartdIpAddr", ctx),
                             slot_name=_text(claim.slot_ad, "Name", ctx))
        return []

    def job_exited(self, claim_id: str, now: float, exit_code: int | None = 0,
                   exit_signal: int | None = None, claim_open: bool = False) -> list[ClaimAction]:
        """The job on the claim exited: the queue applies its exit policy; the claim is deactivated,
        or, when the startd said with the exit that the claim takes another job (``claim_open``),
        reused at once: the next job's activation answers the exit, one round trip instead of two."""
        claim = self.claim(claim_id)
        self._heard(claim, now)
        self._move(claim, ClaimEvent.JOB_EXITED)
        assert claim.job is not None
        job = self.queue.job(claim.job)
        keep = _seconds(job, "KeepClaimIdle", self.queue.context(now))
        claim.keep_idle_until = now + keep if keep is not None and keep > 0 else None
        self.queue.finish(claim.job, now, exit_code, exit_signal)
        claim.job = None
        if claim_open:
            self._move(claim, ClaimEvent.DEACTIVATED)
            return self._place_job(claim, now)
        return [DeactivateClaim(claim_id)]

    def deactivate_reply(self, reply: DeactivateReply, now: float) -> list[ClaimAction]:
        claim = self.claim(reply.claim_id)
        self._heard(claim, now)
        if not reply.start:
            self._move(claim, ClaimEvent.CLAIM_CLOSING)
            return []
        self._move(claim, ClaimEvent.DEACTIVATED)
        return self._place_job(claim, now)

    def alive(self, message: Alive, now: float) -> list[ClaimAction]:
        """The startd's keep-alive for a claim: renews the lease."""
        self._heard(self.claim(message.claim_id), now)
        return []

    def startd_released(self, claim_id: str, now: float, reason: str = "") -> list[ClaimAction]:
        """The startd says the claim is gone (``reason``: why): a running job goes back to Idle."""
        claim = self.claim(claim_id)
        self._move(claim, ClaimEvent.STARTD_RELEASED)
        self._evict(claim, now, reason or STARTD_RELEASED_REASON)
        return []

    # -- the schedd's own decisions
    def release(self, claim_id: str, now: float) -> list[ClaimAction]:
        """Give the claim up (an Idle claim, or the schedd shutting down)."""
        claim = self.claim(claim_id)
        self._move(claim, ClaimEvent.RELEASE)
        self._evict(claim, now, "The schedd released the claim.")
        return [ReleaseClaim(claim_id)]

    def job_held(self, claim_id: str, now: float) -> list[ClaimAction]:
        """The claim's job was held: a claim still being requested lets the job go and stays, for
        its reply to take another job or be released (``_place_job``), as for a removed job;
        any other claim is released."""
        claim = self.claim(claim_id)
        if claim.state is ClaimState.REQUESTED:
            claim.job = None
            return []
        return self.release(claim_id, now)

    def remove_job(self, job_id: JobId, user: str | None, now: float, reason: str = "") -> list[ClaimAction]:
        """condor_rm through the claims: the job leaves the queue and its claim is released."""
        self.queue.remove(job_id, user, now, reason)
        for claim in list(self.claims.values()):
            if claim.job == job_id:
                self._move(claim, ClaimEvent.JOB_REMOVED)
                claim.job = None
                if claim.state is ClaimState.RELEASED:
                    return [ReleaseClaim(claim.claim_id)]
        return []

    def _lease_for(self, job: ClassAd, context: EvalContext) -> float:
        lease = _seconds(job, "JobLeaseDuration", context)
        return lease if lease is not None and lease > 0 else self._default_lease()

    def _evict(self, claim: Claim, now: float, reason: str) -> None:
        if claim.job is not None and claim.job in self.queue.jobs \
                and self.queue.status(claim.job) in ACTIVE:
            self.queue.vacate(claim.job, None, now, reason)
        claim.job = None

    def _can_use(self, claim: Claim, job_id: JobId, reserved: AbstractSet[JobId], context: EvalContext) -> bool:
        if job_id in reserved or job_id not in self.queue.jobs:
            return False
        job = self.queue.jobs[job_id]
        if self.queue.status(job_id) != JobStatus.IDLE:
            return False
        return requirements_hold(job, claim.slot_ad, context)

    def _worklife_expired(self, claim: Claim, context: EvalContext, now: float) -> bool:
        worklife = claim_worklife(claim.slot_ad, context)
        if worklife is None or claim.activations == 0 or claim.claimed_at is None:
            return False
        return now - claim.claimed_at > worklife

    def _place_job(self, claim: Claim, now: float) -> list[ClaimAction]:
        """An Idle claim: activate it with a job of its submitter, keep it idle, or release it."""
        ctx = self.queue.context(now)
        if self._worklife_expired(claim, ctx, now):
            return self.release(claim.claim_id, now)
        wanted, claim.job = claim.job, None
        reserved = self._reserved()
        job_id: JobId | None = None
        if wanted is not None and self._can_use(claim, wanted, reserved, ctx):
            job_id = wanted
        else:
            job_id = self.queue.next_job(
                claim.submitter, lambda ad: self._can_use(claim, _job_id(ad), reserved, ctx))
        if job_id is None:
            if claim.keep_idle_until is not None and now < claim.keep_idle_until:
                return []
            return self.release(claim.claim_id, now)
        self._move(claim, ClaimEvent.ACTIVATE)
        claim.job = job_id
        claim.keep_idle_until = None
        job = self.queue.job(job_id)
        claim.lease = self._lease_for(job, ctx)
        lease = _seconds(job, "JobLeaseDuration", ctx)
        if lease is not None and lease > 0:
            lowered = max(MIN_ALIVE_INTERVAL, min(self.alive_interval, lease / 3))
            self.alive_interval = float(lowered)
        self._start_run(claim, job_id, now, ctx)
        return [ActivateClaim(claim.claim_id, job)]

    def _start_run(self, claim: Claim, job_id: JobId, now: float, context: EvalContext) -> None:
        """The job is Running on the claim from the moment its activation is decided: its status,
        ``ClaimId``, ``StartdAddress`` and ``LastJobLeaseRenewal`` go into one save, which the
        driver makes durable before the activation leaves, so a restarted schedd reconnects to
        the claim instead of running the job a second time."""
        ad = self.queue.job(job_id)
        slot_ad = claim.slot_ad
        address = slot_ad.get("MyAddress")
        ad["ClaimId"] = claim.claim_id
        ad["StartdAddress"] = address if isinstance(address, str) else ""
        ad["LastJobLeaseRenewal"] = int(now)
        name = _text(slot_ad, "Name", context)
        host = _text(slot_ad, "StartdIpAddr", context)
        self.queue.start(job_id, now, host=host, slot_name=name, began=False)  # began: activate_reply

    # -- timers
    def next_deadline(self) -> float | None:
        """The earliest keep-alive, lease expiry or end of a kept-idle claim; None without claims."""
        return self.claims.earliest()

    def handle_timer(self, now: float) -> list[ClaimAction]:
        actions: list[ClaimAction] = []
        # a claim neither due nor idle has nothing to do: the due and idle ones, in the table's order
        for claim in self.claims.due(now):
            if now >= claim.last_heard + claim.lease:
                self._move(claim, ClaimEvent.LEASE_EXPIRED)
                self._evict(claim, now, LEASE_EXPIRED_REASON)
                continue
            if claim.state is ClaimState.IDLE:
                actions.extend(self._place_job(claim, now))
                if claim.claim_id not in self.claims:
                    continue
            if claim.next_alive is not None and now >= claim.next_alive:
                actions.append(Alive(claim.claim_id))
                claim.next_alive = now + self.alive_interval
        return actions


def _text(ad: ClassAd, attr: str, context: EvalContext) -> str:
    """A string attribute of the slot ad; empty when absent, not a string or not evaluable."""
    try:
        value = ad.evaluate(attr, context) if attr in ad else ""
    except ClassAdError:
        return ""
    return value if isinstance(value, str) else ""


def _job_id(ad: ClassAd) -> JobId:
    return int(ad.evaluate("ClusterId")), int(ad.evaluate("ProcId"))


def diagram() -> str:
    """The claim table as Graphviz text."""
    lines = ["digraph schedd_claims {"]
    for (state, event), target in TRANSITIONS.items():
        lines.append(f'  "{state.value}" -> "{target.value}" [label="{event.name.lower()}"];')
    lines.append("}")
    return "\n".join(lines)


__all__ = ["TRANSITIONS", "Claim", "ClaimEvent", "ClaimManager", "ClaimState", "IllegalClaimEvent",
           "negotiated_attributes",
           "UnknownClaim", "claim_worklife", "diagram", "next_claim_state"]
