"""The job queue: clusters of procs, their states, and every change made to them.

Rules of this module (the state table itself is in ``states``):

* Every entry point takes ``now``; nothing reads a clock. Every accepted change
  is written through the ``QueueStore`` and may add ``LogEvent`` records to
  ``events`` (the driver writes them to user logs and clears the list).
* Users may change only their own jobs (``Owner``) unless they are in
  ``QUEUE_SUPER_USERS``; the schedd itself acts as ``None``.
* ``submit`` applies the job transforms, then the submit requirements, to every
  job (``admission``); one failure rejects the whole cluster and nothing is
  queued.
* Idle jobs are indexed by submitter (accounting name with the accounting
  domain) in job-priority order (``priority``).
* Crontab jobs get a ``DeferralTime`` while Idle: at submit, on requeue, on
  release and whenever the previous one has passed its window (``handle_timer``).
  A non-cron deferral job still Idle past ``DeferralTime + DeferralWindow`` is
  held with code 20 (the rule is ``htcpool.deferral.missed``). One job is one
  instance: a running cron job is not restarted.
* ``handle_timer`` (cron schedules, missed deferrals, the job's and the pool's periodic
  policy expressions, each decision applied through the ``_POLICY`` table) is due every
  ``SCHEDD_INTERVAL``, at most ``PERIODIC_INTERVAL_CAP`` seconds apart, and when the policy
  is due (``PERIODIC_EXPR_INTERVAL``, stretched by ``PERIODIC_EXPR_TIMESLICE``: ``periodic``);
  the policy is evaluated only on the passes where it is due. ``next_deadline`` says when.
  A job whose expressions cannot be evaluated at all (a ``ClassAdError``) is passed
  over, with a line in ``warnings``, and the timer goes on with the other jobs.
* ``submit`` refuses a cluster that would pass ``MAX_JOBS_SUBMITTED``,
  ``MAX_JOBS_PER_OWNER`` or ``MAX_JOBS_PER_SUBMISSION`` before anything is queued
  (``limits``); ``owners`` counts each owner's jobs as they enter and leave.
* Job expressions are evaluated in ``context(now)``: the clock reads the entry
  point's ``now``.
* Removed jobs and completed jobs (unless ``LeaveJobInQueue``) leave the queue
  at once and are appended to the history.
* A submission with ``max_materialize`` or ``max_idle`` is a factory (``submit_factory``;
  ``factory`` decides what it materializes and when): its jobs enter through ``enqueue`` as
  the limits allow, at submit, when one of them leaves the queue or starts, on
  ``factory.materialize_changed`` (the core calls it after every message) and on the timer.
* Cluster ids never repeat: ``reserve_cluster`` (condor_submit's NewCluster) takes the
  next id and writes the counter at once, so a restart continues after it; the
  reservation is held in memory for its owner's next ``submit`` naming it, for at most
  ``RESERVATION_LIFETIME`` seconds. An id reserved and not used is skipped, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from htcpool.classad import ClassAd, ClassAdError, EvalContext, as_int, fixed_clock
from htcpool.classad.nodes import Literal, Node
from htcpool.deferral import HOLD_MISSED_DEFERRAL, MISSED_DEFERRAL_REASON, missed
from htcpool.gcpause import LARGE_RUN, paused_gc
from htcpool.schedd import eventlog as ev
from htcpool.schedd.admission import admit
from htcpool.schedd.crontab import FIELDS as CRON_FIELDS
from htcpool.schedd.crontab import CronError, CronSchedule
from htcpool.schedd.errors import PermissionDenied, SubmitRejected, UnknownJob
from htcpool.schedd.factory import Factory, announce, changes, materialize, open_digest
from htcpool.schedd.limits import OwnerCounts, check_submission
from htcpool.schedd.periodic import policy_interval
from htcpool.schedd.policy import PolicyAction, PolicyKind, exit_action, periodic_action
from htcpool.schedd.priority import PriorityIndex, priority_key, submitter_of
from htcpool.schedd.quarantine import quarantine
from htcpool.schedd.runs import close_suspension, end_run
from htcpool.schedd.settings import ScheddSettings, protection_of
from htcpool.schedd.states import ACTIVE, JobEvent, JobStatus, next_status
from htcpool.schedd.store import JobId, NullStore, QueueStore
from htcpool.schedd.tally import JobTally

_CRON_KEYS = tuple(name.lower() for name, _, _ in CRON_FIELDS)
HOLD_USER = 1
HOLD_INVALID_CRON = 25
#: the queue's periodic work (policy expressions, cron schedules, missed deferrals) runs every
#: SCHEDD_INTERVAL, but at least this often (HTCondor's PERIODIC_EXPR_INTERVAL default)
PERIODIC_INTERVAL_CAP = 60
#: how long a reserved cluster id waits for its Submit (condor_submit sends it at once)
RESERVATION_LIFETIME = 3600.0


class JobQueue:
    def __init__(self, settings: ScheddSettings | None = None, store: QueueStore | None = None,
                 schedd_ad: ClassAd | None = None, next_cluster: int = 1) -> None:
        self.settings = settings or ScheddSettings()
        self.store: QueueStore = store or NullStore()
        self.schedd_ad = schedd_ad or ClassAd({"MyType": "Scheduler", "Name": self.settings.schedd_name})
        self.jobs: dict[JobId, ClassAd] = {}
        self.next_cluster = next_cluster
        #: cluster ids reserved by ``reserve_cluster``: id -> (owner, when)
        self.reservations: dict[int, tuple[str, float]] = {}
        self.index = PriorityIndex()
        #: the jobs counted by submitter, universe and status (``tally``), kept at each store
        self.tally = JobTally(self.settings.accounting_domain)
        #: jobs per owner, for MAX_JOBS_PER_OWNER (``limits``)
        self.owners = OwnerCounts()
        #: seconds the last periodic pass took, as the driver measured it (PERIODIC_EXPR_TIMESLICE)
        self.periodic_cost = 0.0
        #: when the policy expressions are next due (``periodic.policy_interval``); None: at once
        self.policy_due: float | None = None
        self._policy_now = True
        self.events: list[ev.LogEvent] = []
        #: what the schedd should log (transform errors, jobs whose periodic expressions could
        #: not be evaluated); the core hands them to the driver (``Schedd.take_warnings``)
        self.warnings: list[str] = []
        #: when ``handle_timer`` is next due; None until it first runs (due at once)
        self.periodic_due: float | None = None
        #: during ``handle_timer`` only: each job whose status the pass moved or that left, with
        #: the status it had before
        self.moved: dict[JobId, JobStatus] | None = None
        #: late-materialization factories by cluster id, and those whose jobs changed since
        #: ``materialize_changed`` last ran
        self.factories: dict[int, Factory] = {}
        self.changed_factories: set[int] = set()
        #: jobs the factories made since the core last took them (``take_materialized``)
        self.materialized: list[JobId] = []

    # -- helpers
    def context(self, now: float) -> EvalContext:
        """What the queue's evaluations of job expressions see: the clock at ``now``, the map
        files and the local zone. Each entry point makes one and hands it down."""
        return EvalContext(clock=fixed_clock(now), user_maps=self.settings.user_maps,
                           local_zone=self.settings.local_zone)

    def job(self, job_id: JobId) -> ClassAd:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise UnknownJob(f"job {job_id[0]}.{job_id[1]} is not in the queue") from None

    def status(self, job_id: JobId) -> JobStatus:
        return JobStatus(self.job(job_id).evaluate("JobStatus"))

    def authorize(self, ad: ClassAd, user: str | None) -> None:
        """PermissionDenied unless ``user`` owns the job, is a queue super user or is the schedd (None)."""
        if user is None or user in self.settings.queue_super_users:
            return
        if ad.evaluate("Owner") != user:
            raise PermissionDenied(f"{user} may not change a job owned by {ad.evaluate('Owner')}")

    def _event(self, code: int, job_id: JobId, now: float, **kw: object) -> None:
        self.events.append(ev.LogEvent(code, job_id[0], job_id[1], now, **kw))  # type: ignore[arg-type]

    def save(self, job_id: JobId, now: float) -> None:
        """Write a job whose ad the caller changed in place (an attribute from a startd's report)."""
        self._save(job_id, self.job(job_id), self.context(now))

    def _save(self, job_id: JobId, ad: ClassAd, ctx: EvalContext) -> None:
        self.store.save_job(job_id, ad)
        self.tally.note(job_id, ad, ctx)
        if job_id[0] in self.factories:
            self.changed_factories.add(job_id[0])
        if JobStatus(ad.evaluate("JobStatus", ctx)) == JobStatus.IDLE:
            domain = self.settings.accounting_domain
            self.index.add(submitter_of(ad, domain, ctx), priority_key(ad, job_id, ctx))
        else:
            self.index.discard(job_id)

    def _transition(self, job_id: JobId, event: JobEvent, ctx: EvalContext, now: float) -> ClassAd:
        ad = self.job(job_id)
        status = JobStatus(ad.evaluate("JobStatus", ctx))
        new = next_status(status, event)
        if self.moved is not None:
            self.moved.setdefault(job_id, status)
        ad["LastJobStatus"] = int(status)
        ad["JobStatus"] = int(new)
        ad["EnteredCurrentStatus"] = int(now)
        return ad

    def _leave(self, job_id: JobId, now: float) -> None:
        ad = self.jobs.pop(job_id)
        if self.moved is not None:
            self.moved.setdefault(job_id, JobStatus.REMOVED)  # gone: its claim is released whatever it was
        self.index.discard(job_id)
        self.tally.forget(job_id)
        self.owners.discard(str(ad.get("Owner", "")))
        self.store.delete_job(job_id)
        self.store.append_history(ad)
        factory = self.factories.get(job_id[0])
        if factory is not None:
            factory.live.discard(job_id[1])
            materialize(self, factory, now)

    def restore(self, jobs: dict[JobId, ClassAd], now: float) -> None:
        """Take back the jobs a store kept (a restarted schedd, at ``now``): queued and indexed,
        nothing written but the jobs ``quarantine`` holds."""
        ctx = self.context(now)
        domain = self.settings.accounting_domain
        quarantine(jobs, ctx, self.store, now, self.warnings)  # invalid ads held, not fatal
        for job_id, ad in jobs.items():
            self.jobs[job_id] = ad
            self.owners.add(str(ad.get("Owner", "")))
            self.tally.note(job_id, ad, ctx)
            if JobStatus(ad.evaluate("JobStatus", ctx)) == JobStatus.IDLE:
                self.index.add(submitter_of(ad, domain, ctx), priority_key(ad, job_id, ctx))

    # -- submission
    def reserve_cluster(self, owner: str, now: float) -> int:
        """A new cluster id for ``owner``'s next ``submit`` (condor_submit's NewCluster)."""
        stale = [c for c, (_, when) in self.reservations.items() if now - when > RESERVATION_LIFETIME]
        for c in stale:
            del self.reservations[c]
        cluster = self.next_cluster
        self.next_cluster += 1
        self.store.save_next_cluster(self.next_cluster)
        self.reservations[cluster] = (owner, now)
        return cluster

    def _claim_reservation(self, owner: str, cluster: int) -> None:
        held = self.reservations.get(cluster)
        if held is None or held[0] != owner:
            raise SubmitRejected(f"cluster {cluster} is not reserved for {owner} (a reservation lasts "
                                 f"{RESERVATION_LIFETIME:.0f} s and does not survive a schedd "
                                 "restart); submit again")
        del self.reservations[cluster]

    def submit(self, owner: str, jobs: list[ClassAd], now: float, cluster: int = 0,
               extra: tuple[tuple[str, Node], ...] = ()) -> tuple[int, list[str]]:
        """Queue a cluster; returns (cluster id, warnings). Raises SubmitRejected.

        ``cluster`` is an id ``reserve_cluster`` gave ``owner`` (used once, even when the
        cluster is rejected); 0 takes the next id. ``extra``: attributes set on every job
        (name, expression), as ``ClusterId`` is."""
        if len(jobs) < LARGE_RUN:
            return self._submit(owner, jobs, now, cluster, extra)
        with paused_gc():  # many new ads, no cycles: docs/performance.md, "Submit and schedd"
            return self._submit(owner, jobs, now, cluster, extra)

    def _submit(self, owner: str, jobs: list[ClassAd], now: float, cluster: int,
                extra: tuple[tuple[str, Node], ...]) -> tuple[int, list[str]]:
        if cluster:
            self._claim_reservation(owner, cluster)
        else:
            cluster = self.next_cluster
        check_submission(self.settings.limits, len(self.jobs), self.owners.of(owner), len(jobs))
        ctx = self.context(now)
        admitted = admit(jobs, cluster, owner, now, transforms=self.settings.transforms,
                         requirements=self.settings.submit_requirements, schedd_ad=self.schedd_ad,
                         context=ctx, accounting_domain=self.settings.accounting_domain,
                         protection=protection_of(self.settings), extra=extra)
        self.warnings.extend(admitted.transform_errors)
        warnings = admitted.warnings
        if cluster >= self.next_cluster:
            self.next_cluster = cluster + 1
            self.store.save_next_cluster(self.next_cluster)
        host = self.settings.schedd_address
        shown = tuple(warnings)
        self.owners.add(owner, len(admitted.ads))
        save, add, events, queued = self.store.save_job, self.index.add, self.events, self.jobs
        note, note_like = self.tally.note, self.tally.note_like
        submitted = ev.like(ev.LogEvent(ev.SUBMIT, cluster, 0, now, host=host, warnings=shown))
        plain = idle = False  # proc 0's: no cron attributes; Idle (its copies' are the same nodes)
        copies: list[tuple[int, ClassAd]] = []
        for proc, (ad, submitter, key, copy) in enumerate(zip(admitted.ads, admitted.submitters, admitted.keys,
                                                                admitted.copies, strict=True)):
            job_id = (cluster, proc)
            queued[job_id] = ad
            if copy and plain:  # proc 0's copy (``admission.CopyOf``): stored, counted and indexed as proc 0
                copies.append((proc, ad))
                note_like(job_id, (cluster, 0))
                if idle:
                    add(submitter, key)
            elif not ad._exprs.keys().isdisjoint(_CRON_KEYS):
                self._schedule_cron(job_id, ad, ctx, now)
                self._save(job_id, ad, ctx)
            else:
                save(job_id, ad)
                note(job_id, ad, ctx)
                status = ad._exprs.get("jobstatus")
                is_idle = status is not None and (status.value if type(status) is Literal  # read, not evaluated
                                                  else ad._evaluate_node(status, None, ctx)) == JobStatus.IDLE
                if is_idle:
                    add(submitter, key)
                if not proc:
                    plain, idle = True, is_idle
            events.append(submitted(proc))
        if copies:
            self.store.save_copies(cluster, admitted.ads[0], copies)
        return cluster, [*warnings, *admitted.transform_errors]  # the submitter sees failed transforms too

    # -- late materialization (``factory``: what is made, when)
    def submit_factory(self, owner: str, cluster_ad: ClassAd, digest: dict, now: float,
                       cluster: int = 0) -> tuple[int, list[str]]:
        """Queue a factory: its cluster ad is admitted (transforms, submit requirements) as a
        job would be, and its first jobs are made at once. Returns (cluster id, warnings);
        raises SubmitRejected."""
        if not self.settings.allow_late_materialize:
            raise SubmitRejected("this schedd does not take late materialization factories "
                                 "(SCHEDD_ALLOW_LATE_MATERIALIZE is false)")
        if cluster:
            self._claim_reservation(owner, cluster)
        else:
            cluster = self.next_cluster
        materializer = open_digest(digest)
        if materializer.digest.cluster != cluster:
            raise SubmitRejected(f"the factory's digest was made for cluster {materializer.digest.cluster}, "
                                 f"not {cluster}")
        limits = materializer.limits
        before = cluster_ad.copy()
        admitted = admit([cluster_ad], cluster, owner, now, transforms=self.settings.transforms,
                         requirements=self.settings.submit_requirements, schedd_ad=self.schedd_ad,
                         context=self.context(now), accounting_domain=self.settings.accounting_domain,
                         protection=protection_of(self.settings))
        self.warnings.extend(admitted.transform_errors)
        overrides, deleted = changes(before, admitted.ads[0])
        if cluster >= self.next_cluster:
            self.next_cluster = cluster + 1
            self.store.save_next_cluster(self.next_cluster)
        user = cluster_ad.get("User", "")
        factory = Factory(cluster, owner, int(now), materializer.total, dict(digest), overrides, deleted,
                          limits.max_materialize, limits.max_idle, user=str(user) if isinstance(user, str) else "",
                          materializer=materializer)
        self.factories[cluster] = factory
        self.store.save_factory(cluster, factory.to_json())
        announce(self, factory, now)
        materialize(self, factory, now)
        return cluster, [*admitted.warnings, *admitted.transform_errors]

    def enqueue(self, job_id: JobId, ad: ClassAd, now: float) -> None:
        """Put one new job in the queue (a factory's): stored, indexed, its submit event logged."""
        ctx = self.context(now)
        self.jobs[job_id] = ad
        self.owners.add(str(ad.get("Owner", "")))
        if any(name in ad._exprs for name in _CRON_KEYS):
            self._schedule_cron(job_id, ad, ctx, now)
        self._save(job_id, ad, ctx)
        self._event(ev.SUBMIT, job_id, now, host=self.settings.schedd_address, warnings=())
        self.materialized.append(job_id)

    def take_materialized(self) -> list[tuple[JobId, ClassAd]]:
        """The jobs the factories made since the last call that are still queued, with their ads."""
        made, self.materialized = self.materialized, []
        return [(job_id, self.jobs[job_id]) for job_id in made if job_id in self.jobs]

    def drop_factory(self, cluster: int) -> None:
        """The factory leaves the queue (done, or removed); its jobs in the queue stay."""
        if self.factories.pop(cluster, None) is not None:
            self.store.delete_factory(cluster)
        self.changed_factories.discard(cluster)

    # -- user commands
    def hold(self, job_id: JobId, user: str | None, now: float, reason: str = "",
             code: int = HOLD_USER, subcode: int = 0) -> None:
        ad = self.job(job_id)
        self.authorize(ad, user)
        ctx = self.context(now)
        was = JobStatus(ad.evaluate("JobStatus", ctx))
        self._transition(job_id, JobEvent.HOLD, ctx, now)
        if was in ACTIVE:
            end_run(ad, ctx, now, committed=False)
        reason = reason or f"via condor_hold (by user {user or 'condor'})"
        ad["HoldReason"] = reason
        ad["HoldReasonCode"] = code
        ad["HoldReasonSubCode"] = subcode
        ad["NumHolds"] = as_int(ad.evaluate("NumHolds", ctx)) + 1
        if code != HOLD_USER:
            ad["NumSystemHolds"] = as_int(ad.evaluate("NumSystemHolds", ctx)) + 1
        self._save(job_id, ad, ctx)
        self._event(ev.HELD, job_id, now, reason=reason, hold_code=code, hold_subcode=subcode)

    def release(self, job_id: JobId, user: str | None, now: float, reason: str = "") -> None:
        ad = self.job(job_id)
        self.authorize(ad, user)
        ctx = self.context(now)
        self._transition(job_id, JobEvent.RELEASE, ctx, now)
        ad["LastHoldReason"] = ad.evaluate("HoldReason", ctx) if "HoldReason" in ad else ""
        for attr in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
            if attr in ad:
                del ad[attr]
        ad["NumJobReleases"] = as_int(ad.evaluate("NumJobReleases", ctx)) + 1
        self._schedule_cron(job_id, ad, ctx, now)
        self._save(job_id, ad, ctx)
        self._event(ev.RELEASED, job_id, now, reason=reason or f"via condor_release (by user {user or 'condor'})")

    def remove(self, job_id: JobId, user: str | None, now: float, reason: str = "") -> None:
        ad = self.job(job_id)
        self.authorize(ad, user)
        ctx = self.context(now)
        was = JobStatus(ad.evaluate("JobStatus", ctx))
        self._transition(job_id, JobEvent.REMOVE, ctx, now)
        if was in ACTIVE:
            end_run(ad, ctx, now, committed=False)
        ad["RemoveReason"] = reason or f"via condor_rm (by user {user or 'condor'})"
        self._event(ev.ABORTED, job_id, now, reason=str(ad["RemoveReason"]))
        self._leave(job_id, now)

    def set_priority(self, job_id: JobId, user: str | None, prio: int, now: float) -> None:
        """condor_prio: Idle and Running jobs alike; a running job is not evicted."""
        ad = self.job(job_id)
        self.authorize(ad, user)
        ad["JobPrio"] = int(prio)
        self._save(job_id, ad, self.context(now))

    def vacate(self, job_id: JobId, user: str | None, now: float, reason: str = "") -> None:
        """condor_vacate_job (or preemption): the run ends without finishing, back to Idle. A run
        that had not begun on the execute point ends without an event (``not_begun``)."""
        ad = self.job(job_id)
        self.authorize(ad, user)
        if not self.has_begun(job_id):
            self.not_begun(job_id, now)
            return
        ctx = self.context(now)
        self._transition(job_id, JobEvent.EVICT, ctx, now)
        end_run(ad, ctx, now, committed=False)
        self._schedule_cron(job_id, ad, ctx, now)
        self._save(job_id, ad, ctx)
        self._event(ev.EVICTED, job_id, now, reason=reason)

    # -- the execution side
    def start(self, job_id: JobId, now: float, host: str = "", slot_name: str = "", *,
              began: bool = True) -> None:
        """The job is Running (HTCondor marks it so when its shadow starts: ``JobRunCount``);
        with ``began`` it has also begun on the execute point (``began``)."""
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.START, ctx, now)
        ad["JobCurrentStartDate"] = int(now)
        if "JobCurrentStartExecutingDate" in ad:  # set again when this run begins
            del ad["JobCurrentStartExecutingDate"]
        ad["JobRunCount"] = as_int(ad.evaluate("JobRunCount", ctx)) + 1
        ad["RemoteHost"] = slot_name or host
        ad["CurrentHosts"] = 1
        if began:
            self._began(job_id, ad, ctx, now, host, slot_name)
        else:
            self._save(job_id, ad, ctx)

    def began(self, job_id: JobId, now: float, host: str = "", slot_name: str = "") -> None:
        """The execute point started the Running job: ``NumJobStarts`` and the execute event."""
        self._began(job_id, self.job(job_id), self.context(now), now, host, slot_name)

    def _began(self, job_id: JobId, ad: ClassAd, ctx: EvalContext, now: float, host: str, slot_name: str) -> None:
        if "JobStartDate" not in ad:
            ad["JobStartDate"] = int(now)
        ad["JobCurrentStartExecutingDate"] = int(now)
        ad["NumJobStarts"] = as_int(ad.evaluate("NumJobStarts", ctx)) + 1
        self._save(job_id, ad, ctx)
        self._event(ev.EXECUTE, job_id, now, host=host, slot_name=slot_name)
        factory = self.factories.get(job_id[0])
        if factory is not None:  # one job fewer not running: max_idle may allow another
            materialize(self, factory, now)

    def has_begun(self, job_id: JobId) -> bool:
        """Whether the Running job's run has begun on the execute point (``began``): its start
        is stamped, or every run counted has begun (an ad stored before runs were split so)."""
        ad = self.job(job_id)
        if "JobCurrentStartExecutingDate" in ad:
            return True
        return as_int(ad.get("NumJobStarts", 0)) >= as_int(ad.get("JobRunCount", 0))

    def not_begun(self, job_id: JobId, now: float) -> None:
        """The execute point refused to start the Running job: back to Idle. It never ran, so
        no event is written and no run time counted."""
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.EVICT, ctx, now)
        for attr in ("JobCurrentStartDate", "RemoteHost", "ClaimId", "StartdAddress"):
            if attr in ad:
                del ad[attr]
        ad["CurrentHosts"] = 0
        self._save(job_id, ad, ctx)

    def suspend(self, job_id: JobId, now: float, processes: int = 1) -> None:
        """The execute point stopped the job (``processes``: how many of its processes)."""
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.SUSPEND, ctx, now)
        ad["LastSuspensionTime"] = int(now)
        ad["TotalSuspensions"] = as_int(ad.evaluate("TotalSuspensions", ctx)) + 1
        self._save(job_id, ad, ctx)
        self._event(ev.SUSPENDED, job_id, now, processes=processes)

    def unsuspend(self, job_id: JobId, now: float) -> None:
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.UNSUSPEND, ctx, now)
        close_suspension(ad, ctx, now)
        self._save(job_id, ad, ctx)
        self._event(ev.UNSUSPENDED, job_id, now)

    def finish(self, job_id: JobId, now: float, exit_code: int | None = 0,
               exit_signal: int | None = None) -> PolicyAction:
        """The job exited: OnExitHold / OnExitRemove decide hold, requeue or completion."""
        ad = self.job(job_id)
        ctx = self.context(now)
        status = JobStatus(ad.evaluate("JobStatus", ctx))
        if status not in ACTIVE:
            next_status(status, JobEvent.COMPLETE)
        ad["ExitBySignal"] = exit_signal is not None
        if exit_signal is None:
            ad["ExitCode"] = int(exit_code or 0)
        else:
            ad["ExitSignal"] = exit_signal
        ad["NumJobCompletions"] = as_int(ad.evaluate("NumJobCompletions", ctx)) + 1
        ad["CompletionDate"] = int(now)
        end_run(ad, ctx, now, committed=True)
        self._event(ev.TERMINATED, job_id, now, return_value=exit_code, signal=exit_signal)
        action = exit_action(ad, now, ctx, self.settings.system_max_releases, self.settings.system_policy)
        _POLICY[action.kind](self, job_id, action, now)
        return action

    # -- what a policy decision does (``_POLICY``)
    def _policy_hold(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        self.hold(job_id, None, now, action.reason, action.code, action.subcode)

    def _policy_release(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        self.release(job_id, None, now, action.reason)

    def _policy_remove(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        self.remove(job_id, None, now, action.reason)

    def _policy_vacate(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        self.vacate(job_id, None, now, action.reason)

    def _policy_requeue(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.REQUEUE, ctx, now)
        self._schedule_cron(job_id, ad, ctx, now, force=True)
        self._save(job_id, ad, ctx)

    def _policy_complete(self, job_id: JobId, action: PolicyAction, now: float) -> None:
        ctx = self.context(now)
        ad = self._transition(job_id, JobEvent.COMPLETE, ctx, now)
        if ad.evaluate("LeaveJobInQueue", ctx) is True:
            self._save(job_id, ad, ctx)
        else:
            self._leave(job_id, now)

    # -- order and timers
    def ordered_jobs(self, submitter: str) -> Iterator[JobId]:
        """Idle jobs of a submitter, best first (runnable deferral jobs included)."""
        return self.index.ordered(submitter)

    def next_job(self, submitter: str, can_match: Callable[[ClassAd], bool] | None = None) -> JobId | None:
        for job_id in self.index.ordered(submitter):
            if can_match is None or can_match(self.jobs[job_id]):
                return job_id
        return None

    def submitters(self) -> list[str]:
        return self.index.submitters()

    def _schedule_cron(self, job_id: JobId, ad: ClassAd, ctx: EvalContext, now: float,
                       force: bool = False) -> None:
        if JobStatus(ad.evaluate("JobStatus", ctx)) != JobStatus.IDLE:
            return
        fields = {name: str(ad.evaluate(name, ctx)) for name, _, _ in CRON_FIELDS if name in ad}
        if not fields:
            return
        current = ad.evaluate("DeferralTime", ctx)
        window = as_int(ad.evaluate("DeferralWindow", ctx))
        if not force and isinstance(current, int) and now <= current + window:
            return
        try:
            ad["DeferralTime"] = CronSchedule.from_fields(fields).next_run(now, self.settings.local_zone)
        except CronError as e:
            self.hold(job_id, None, now, f"Invalid cron schedule parameters: {e}", HOLD_INVALID_CRON)

    def handle_timer(self, now: float) -> dict[JobId, JobStatus]:
        """Periodic work: cron schedules, missed deferrals, the periodic policy expressions.

        Runs whenever it is called; ``next_deadline`` says when it is next due. Returns the jobs
        the pass moved or removed, each with its status before the pass."""
        self.moved = {}
        try:
            self._periodic_pass(now)
            return self.moved
        finally:
            self.moved = None

    def _periodic_pass(self, now: float) -> None:
        ctx = self.context(now)
        timing = self.settings.periodic_timing
        self._policy_now = timing.enabled and (self.policy_due is None or now >= self.policy_due)
        for job_id, ad in list(self.jobs.items()):
            try:
                self._periodic(job_id, ad, ctx, now)
            except ClassAdError as e:  # this job's expressions cannot be evaluated: the others go on
                self.warnings.append(f"job {job_id[0]}.{job_id[1]}: periodic evaluation failed: {e}")
        if self._policy_now:
            self.policy_due = now + policy_interval(timing, self.periodic_cost)
        pace = float(min(self.settings.schedd_interval, PERIODIC_INTERVAL_CAP))
        self.periodic_due = now + pace if self.policy_due is None else min(now + pace, self.policy_due)

    def _periodic(self, job_id: JobId, ad: ClassAd, ctx: EvalContext, now: float) -> None:
        """One job's share of ``handle_timer``."""
        status = JobStatus(ad.evaluate("JobStatus", ctx))
        if status == JobStatus.IDLE and "DeferralTime" in ad:
            if any(name in ad for name, _, _ in CRON_FIELDS):
                self._schedule_cron(job_id, ad, ctx, now)
                self._save(job_id, ad, ctx)
            elif missed(ad, now):
                self.hold(job_id, None, now, MISSED_DEFERRAL_REASON, HOLD_MISSED_DEFERRAL)
                return
        if not self._policy_now:  # not due (PERIODIC_EXPR_INTERVAL), or turned off (0)
            return
        action = periodic_action(ad, now, ctx, self.settings.system_max_releases, self.settings.system_policy)
        if action is not None:
            _POLICY[action.kind](self, job_id, action, now)

    def next_deadline(self, now: float) -> float:
        """When ``handle_timer`` is next due: at once before its first run."""
        return now if self.periodic_due is None else self.periodic_due


#: what each policy decision does to the job (exit policy and periodic expressions)
_POLICY: dict[PolicyKind, Callable[[JobQueue, JobId, PolicyAction, float], None]] = {
    PolicyKind.HOLD: JobQueue._policy_hold,
    PolicyKind.RELEASE: JobQueue._policy_release,
    PolicyKind.REMOVE: JobQueue._policy_remove,
    PolicyKind.VACATE: JobQueue._policy_vacate,
    PolicyKind.REQUEUE: JobQueue._policy_requeue,
    PolicyKind.COMPLETE: JobQueue._policy_complete,
}


__all__ = ["PERIODIC_INTERVAL_CAP", "JobQueue", "SubmitRejected"]
