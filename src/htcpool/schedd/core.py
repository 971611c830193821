"""The schedd's decision core: the job queue, its claims, and every message to and from them.

``Schedd`` owns a ``JobQueue`` and a ``ClaimManager`` and takes every message a schedd
receives, each with ``now``; it answers with an ``Outcome`` (``messages``): the reply
for the sender and the actions for the driver, protocol messages addressed to a
startd, the negotiator or the collector. Nothing here reads a clock or does I/O::

    schedd = Schedd(settings, now=0.0, store=MemoryStore())
    outcome = schedd.start(now=0.0, address="http://…", schedd_address="<…>")
    outcome = schedd.handle(Submit("alice", ads), now=1.0)      # reply: Submitted
    outcome = schedd.handle(MatchInfo(…), now=2.0)              # actions: ToStartd(RequestClaim)
    outcome = schedd.handle_timer(schedd.next_deadline(now))    # keep-alives, periodic policy

``HANDLERS`` maps each message type to its handler, one module per concept:
``commands`` (users: submit, queue queries, job actions), ``offers`` (the negotiator:
which idle jobs to offer, whether a match is taken, what a partitionable slot's
leftovers run), ``shadow`` (the startds' replies and job reports, and reports about
claims the schedd no longer holds) and ``reconnect`` (finding running jobs again after
a restart). ``REQUEST_TYPES`` are those other daemons and users may send; the rest
are answers the driver hands back for ``AskStartd`` actions.

Rules of the core (the claim table is in ``claims``, the job table in ``states``):

* Every message a claim's startd is sent goes through ``send_claim_actions``: a
  request or activation carries the submitter's accounting name
  (``offers.for_startd``), and a released claim asks the negotiator for a cycle.
* The negotiator is asked for a cycle (``Reschedule``) only while some submitter has
  idle jobs: after a submit, a release, a claim that ended, and at each periodic
  evaluation while a deferred job is due to be offered.
* Timers (``next_deadline``/``handle_timer``): the claims' keep-alives and leases,
  the queue's periodic work (``JobQueue.next_deadline``: the policy expressions every
  ``PERIODIC_EXPR_INTERVAL``, cron and deferrals; a claim whose job the policy held,
  removed or vacated is released, ``periodic``), retries of reconnection,
  and the ads, sent every ``SCHEDD_INTERVAL`` but at least every 60 s. After a submit, a job
  action or an edit (``advertise_soon``) they go out at most once per ``SCHEDD_MIN_INTERVAL``,
  as HTCondor's schedd does, except that a submitter with idle jobs the last ads did not show
  is advertised at once, so that the negotiator learns of new work without waiting.
* Local and scheduler universe jobs run on the access point (``localjobs``): after
  every message and timer the core stops the runs whose job left Running and starts
  the jobs that may start now.
* Late-materialization factories (``factory``) make their jobs after every message (the
  factories whose jobs changed) and on the timer (all of them); new idle jobs ask the
  negotiator for a cycle. condor_rm, condor_hold and condor_release of a factory's
  cluster (or its owner, or a constraint its cluster ad meets) remove, pause or resume the
  factory as well as act on the jobs it made.
* Actions of a handler that raised are kept and go out with the next outcome: the
  changes they belong to were made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, ExprTree
from htcpool.protocol import (
    ActionResult,
    AdList,
    JobAction,
    JobActionKind,
    Ok,
    QueueQuery,
    Reschedule,
    Submit,
    Submitted,
    UpdateAd,
)
from htcpool.protocol.schedd import ReconnectReply, SubmitFactory
from htcpool.protocol.startd import ReleaseClaim
from htcpool.schedd import (
    ads,
    commands,
    crontab,
    factory,
    localjobs,
    offers,
    periodic,
    reconnect,
    shadow,
)
from htcpool.schedd.claims import ClaimAction, ClaimManager
from htcpool.schedd.clusterads import cluster_ads
from htcpool.schedd.errors import BadRequest, ScheddError
from htcpool.schedd.eventlog import LogEvent
from htcpool.schedd.messages import (
    Action,
    LocalJobReport,
    Outcome,
    StartdUnreachable,
    ToCollector,
    ToNegotiator,
    ToStartd,
)
from htcpool.schedd.queue import PERIODIC_INTERVAL_CAP, JobQueue
from htcpool.schedd.reconnect import Reconnection
from htcpool.schedd.settings import ScheddSettings
from htcpool.schedd.store import JobId, QueueStore
from htcpool.statistics import ScheddStats

Handler = Callable[["Schedd", Any, float], Any]


class Schedd:
    """One schedd's decisions; see the module docstring."""

    def __init__(self, settings: ScheddSettings, now: float, *, store: QueueStore | None = None,
                 jobs: dict[JobId, ClassAd] | None = None, next_cluster: int = 1,
                 host: str = "localhost", schedd_is_root: bool = False,
                 factories: dict[int, dict[str, Any]] | None = None) -> None:
        self.settings = settings
        self.queue = JobQueue(settings, store, next_cluster=next_cluster)
        if jobs:
            self.queue.restore(jobs, now)
        if factories:
            factory.restore(self.queue, factories)
        self.claims = ClaimManager(self.queue)
        #: local and scheduler universe jobs and their runs (``localjobs``)
        self.local = localjobs.LocalJobs(schedd_is_root)
        self.local.track(self.queue.jobs.items())
        self.host = host
        #: where this schedd answers (the Scheduler ad's MyAddress); given by ``start``
        self.address = ""
        self.started = now
        #: the startd of every claim this schedd has made or adopted, by claim id
        self.startd_addresses: dict[str, str] = {}
        self.reconnection = Reconnection()
        #: the largest image size logged for each running job (the user log's event 006)
        self.image_sizes: dict[JobId, int] = {}
        self.next_advert = now
        #: when the ads last went out, and the submitters they showed with idle jobs
        self.last_advert: float | None = None
        self.advertised_idle: frozenset[str] = frozenset()
        #: the Submitter ads last advertised, kept for the next advertisement (``ads.SubmitterAds``)
        self.submitter_ads = ads.SubmitterAds()
        #: the SCHEDD statistics, counted from the job events (``statistics.schedd``)
        self.stats = ScheddStats(settings.statistics.make_window(now))
        self._actions: list[Action] = []

    @property
    def name(self) -> str:
        return self.settings.schedd_name

    # ------------------------------------------------------------------ entry points
    def start(self, now: float, address: str, schedd_address: str) -> Outcome:
        """The driver is listening at ``address``: advertise, and look for jobs left running."""
        self.address = address
        self.settings.schedd_address = schedd_address
        localjobs.recover(self, now)
        self.advertise(now)
        reconnect.begin(self, now)
        crontab.refresh(self.queue, now)  # a restarted schedd: the clock has moved on
        localjobs.schedule(self, now)
        return Outcome(None, self._take())

    def handle(self, message: Any, now: float) -> Outcome:
        """Process one message; BadRequest for a type the schedd does not take."""
        handler = HANDLERS.get(type(message))
        if handler is None:
            raise BadRequest(f"the schedd does not take {type(message).__name__}")
        reply = handler(self, message, now)
        self._materialize(now)
        localjobs.schedule(self, now)
        return Outcome(reply, self._take())

    def handle_timer(self, now: float) -> Outcome:
        """Do everything due at ``now`` (see ``next_deadline``)."""
        self.send_claim_actions(self.claims.handle_timer(now))
        if now >= self.queue.next_deadline(now):
            moved = self.queue.handle_timer(now)
            periodic.release_claims_of_stopped_jobs(self, moved, now)
            self.image_sizes = {j: size for j, size in self.image_sizes.items() if j in self.queue.jobs}
            if offers.deferred_due(self, now):
                self.reschedule("deferred jobs are due")
            self._materialize(now, every=True)
        reconnect.retry(self, now)
        localjobs.schedule(self, now)
        if now >= self.next_advert:
            self.advertise(now)
        return Outcome(None, self._take())

    def next_deadline(self, now: float) -> float:
        """The earliest time ``handle_timer`` has something to do."""
        times = [self.queue.next_deadline(now), self.next_advert]
        for deadline in (self.claims.next_deadline(), self.reconnection.next_deadline(),
                         localjobs.next_deadline(self, now)):
            if deadline is not None:
                times.append(deadline)
        return min(times)

    def stop(self) -> Outcome:
        """The schedd is stopping: withdraw its ads."""
        for message in ads.withdrawals(self.name):
            self.emit(ToCollector(message))
        return Outcome(None, self._take())

    def reconfigure(self, fresh: ScheddSettings, now: float | None = None) -> None:
        """Take new settings; the queue and the claims share the settings object. With ``now``,
        the crontab jobs' next runs are recomputed under them (``crontab.refresh``)."""
        for name, value in vars(fresh).items():
            setattr(self.settings, name, value)
        if now is not None:
            crontab.refresh(self.queue, now)

    def note_periodic_cost(self, seconds: float) -> None:
        """The driver measured the last periodic pass (``handle_timer``): the next one is spaced
        so that the passes take at most ``PERIODIC_EXPR_TIMESLICE`` of the time (``periodic``)."""
        self.queue.periodic_cost = max(0.0, seconds)

    def configuration_problems(self) -> list[str]:
        """Knobs of the current settings that could not be used, each naming the knob and why."""
        return list(self.settings.problems)

    def take_warnings(self) -> list[str]:
        """What the schedd should log since the last call: the queue's warnings (job transforms
        that failed, jobs whose periodic expressions could not be evaluated)."""
        warnings, self.queue.warnings = self.queue.warnings, []
        return warnings

    def take_log_events(self) -> list[tuple[LogEvent, ClassAd | None]]:
        """The job events since the last call, each with its job's ad when the job is still queued."""
        events, self.queue.events = self.queue.events, []
        self.stats.count_all((e.code, e.time, e.signal is not None) for e in events)
        return [(event, self.queue.jobs.get((event.cluster, event.proc))) for event in events]

    # ------------------------------------------------------------------ for the handlers
    def emit(self, action: Action) -> None:
        self._actions.append(action)

    def send_claim_actions(self, actions: list[ClaimAction]) -> None:
        """Address the claim manager's messages to their startds (see the module rules)."""
        for action in actions:
            message = offers.for_startd(self, action)
            self.emit(ToStartd(self.startd_addresses.get(message.claim_id, ""), message))
            if isinstance(message, ReleaseClaim):
                self.reschedule("a claim was released")

    def reschedule(self, reason: str) -> None:
        """Ask the negotiator for a cycle, when some submitter has idle jobs."""
        if self.queue.submitters():  # only submitters with idle jobs are indexed
            self.emit(ToNegotiator(Reschedule(reason)))

    def advertise(self, now: float) -> None:
        """Send the Scheduler and Submitter ads now."""
        def statistics(running: int) -> dict[str, object]:
            return self.stats.publish(self.settings.statistics.publish, now, running)

        for ad in ads.schedd_ads(self.queue, self.host, self.address, self.started, now, statistics,
                                 self.submitter_ads):
            self.emit(ToCollector(UpdateAd(ad)))
        self.advertised_idle = self.submitter_ads.idle
        self.last_advert = now
        self.next_advert = now + self.advertising_pace

    @property
    def advertising_pace(self) -> float:
        """How often the schedd advertises when nothing changes: ``SCHEDD_INTERVAL``, at most
        ``PERIODIC_INTERVAL_CAP`` seconds."""
        return float(min(self.settings.schedd_interval, PERIODIC_INTERVAL_CAP))

    def advertise_soon(self, now: float) -> None:
        """The queue changed: send the ads now when ``SCHEDD_MIN_INTERVAL`` has passed since the
        last ones or when a submitter has idle jobs they did not show; otherwise once that interval
        has passed (the timer's ``next_advert``), whatever else changes in the meantime."""
        due = None if self.last_advert is None else self.last_advert + max(0, self.settings.schedd_min_interval)
        if due is None or now >= due or not self.advertised_idle.issuperset(s for s in self.queue.submitters() if s):
            self.advertise(now)
        else:
            self.next_advert = min(self.next_advert, due)

    def renew(self, claim_id: str, now: float) -> JobId | None:
        """A word from a claim's startd renews the claim's lease and its job's
        ``LastJobLeaseRenewal``; the job on the claim, or None."""
        claim = self.claims.claims.get(claim_id)
        if claim is None or claim.job is None:
            return None
        claim.last_heard = now
        ad = self.queue.jobs.get(claim.job)
        if ad is not None:
            ad["LastJobLeaseRenewal"] = int(now)
        return claim.job

    def claim_of(self, job_id: JobId) -> str | None:
        """The claim a job holds (or is being claimed or activated on), if any."""
        return next((cid for cid, c in self.claims.claims.items() if c.job == job_id), None)

    def _materialize(self, now: float, every: bool = False) -> None:
        """The factories make what they may (``JobQueue.materialize_changed``); the jobs made,
        here or inside the queue's changes, are tracked as local jobs when they are, and new
        idle jobs ask for a cycle."""
        if self.queue.factories:
            factory.materialize_changed(self.queue, now, every)
        if self.queue.materialized:
            self.local.track(self.queue.take_materialized())
            self.reschedule("jobs materialized")

    def _take(self) -> list[Action]:
        actions, self._actions = self._actions, []
        return actions


def _forward_reschedule(schedd: Schedd, message: Reschedule, now: float) -> Ok:
    """condor_reschedule reaches the schedd, which asks the negotiator for a cycle."""
    schedd.reschedule(message.reason or "condor_reschedule")
    return Ok()


def _submit(schedd: Schedd, message: Submit, now: float) -> Submitted:
    """A submit as ``commands`` takes it, noting the new cluster's local and scheduler jobs."""
    reply = commands.HANDLERS[Submit](schedd, message, now)
    jobs = schedd.queue.jobs
    ids = ((reply.cluster, proc) for proc in range(reply.count))
    schedd.local.track((job_id, jobs[job_id]) for job_id in ids if job_id in jobs)
    return reply


def _submit_factory(schedd: Schedd, message: SubmitFactory, now: float) -> Submitted:
    """A late-materialization factory: its cluster ad gets ``User`` as a submitted job's does,
    the queue keeps the factory and makes its first jobs (``JobQueue.submit_factory``)."""
    ad = message.cluster_ad.copy()
    domain = schedd.settings.accounting_domain
    if "User" not in ad:
        ad["User"] = f"{message.owner}@{domain}" if domain else message.owner
    cluster, warnings = schedd.queue.submit_factory(message.owner, ad, dict(message.digest), now,
                                                    message.cluster)
    made = schedd.queue.take_materialized()
    kept = schedd.queue.factories.get(cluster)
    schedd.local.track(made)
    schedd.advertise_soon(now)
    schedd.reschedule("new jobs")
    return Submitted(cluster, kept.total if kept is not None else len(made), tuple(warnings))


def _factories_named(schedd: Schedd, message: JobAction, now: float) -> list[int]:
    """The factories a job action names: by cluster, by owner, or by a constraint their
    cluster's first job ad would meet (the cluster ad with the factory's attributes)."""
    factories = schedd.queue.factories
    named: list[int] = []
    for target in message.targets:
        head, _, proc = target.partition(".")
        if not proc and head.isdigit() and int(head) in factories:
            named.append(int(head))
        elif not head.isdigit():
            named.extend(c for c, f in factories.items() if f.owner == target)
    if message.constraint:
        try:
            test = ExprTree(message.constraint)
        except ClassAdError:
            return sorted(set(named))  # the job action reports the bad constraint
        ctx = schedd.queue.context(now)
        for cluster, one in factories.items():
            if any(test.evaluate(ad, None, ctx) is True for ad in factory.factory_view(schedd.queue, one, now)):
                named.append(cluster)
    return sorted(set(named))


def _job_action(schedd: Schedd, message: JobAction, now: float) -> ActionResult:
    """A job action, and for hold, release and rm of a factory's cluster the factory too
    (paused, resumed or removed before its jobs are acted on, so no new job replaces them)."""
    try:
        kind: JobActionKind | None = JobActionKind(message.action)
    except ValueError:
        kind = None  # the job action reports it
    acted: list[int] = []
    errors: list[str] = []
    if kind in _FACTORY_ACTIONS:
        user = None if message.user in schedd.settings.queue_super_users else message.user
        for cluster in _factories_named(schedd, message, now):
            try:
                if kind is JobActionKind.REMOVE:
                    factory.remove(schedd.queue, cluster, user, now)
                else:
                    verb = "hold" if kind is JobActionKind.HOLD else "release"
                    factory.set_held(schedd.queue, cluster, user, kind is JobActionKind.HOLD,
                                     message.reason or f"via condor_{verb} (by user {message.user})", now)
                acted.append(cluster)
            except ScheddError as e:
                errors.append(f"Cluster {cluster}: {e}")
    reply: ActionResult = commands.HANDLERS[JobAction](schedd, message, now)
    if not acted and not errors:
        return reply
    quiet = {f"Cluster {c} not found" for c in acted}
    return ActionResult(reply.done, tuple(errors) + tuple(e for e in reply.errors if e not in quiet))


def _queue_query(schedd: Schedd, message: QueueQuery, now: float) -> AdList:
    """A queue query, the factories' jobs showing their factory's current attributes (or, for
    ``clusters``, the factories' cluster ads)."""
    if message.clusters:
        return cluster_ads(schedd.queue, message.constraint, now)
    for one in schedd.queue.factories.values():
        factory.stamp(schedd.queue, one)
    reply: AdList = commands.HANDLERS[QueueQuery](schedd, message, now)
    return reply


_FACTORY_ACTIONS = frozenset({JobActionKind.REMOVE, JobActionKind.HOLD, JobActionKind.RELEASE})


HANDLERS: dict[type, Handler] = {
    **commands.HANDLERS,
    **offers.HANDLERS,
    **shadow.HANDLERS,
    **localjobs.HANDLERS,
    Submit: _submit,
    SubmitFactory: _submit_factory,
    JobAction: _job_action,
    QueueQuery: _queue_query,
    Reschedule: _forward_reschedule,
    ReconnectReply: reconnect.on_reply,
    StartdUnreachable: reconnect.on_unreachable,
}
REQUEST_TYPES: frozenset[type] = frozenset(HANDLERS) - {ReconnectReply, StartdUnreachable, LocalJobReport}

__all__ = ["HANDLERS", "REQUEST_TYPES", "Schedd"]
