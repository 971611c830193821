"""The schedd daemon: the job queue and the claims, durable in SQLite, over the protocol.

Clients submit clusters of job ads (made by the submit core on their side),
query the queue and the history, and act on jobs. The negotiator fetches idle
jobs and sends matches; the schedd claims the matched slots, activates them
with jobs and keeps the claims alive (``htcpool.schedd.ClaimManager``); the
startds report what their starters did (``JobUpdate``). This module is the
shadow too: it turns those reports into queue changes and user-log events
(``UserLog`` of each job, HTCondor's text format).

Rules of the driver:

* every queue change is written through ``SqliteQueueStore`` before the
  request is answered, so an acknowledged submit survives a crash;
* a job's claim id, startd address and the time of the last word from its
  startd (``LastJobLeaseRenewal``) are kept in its ad, so a restarted schedd
  reconnects to jobs still running within their lease (``Reconnect``) and
  requeues the others once the lease has run out;
* a job with a ``DeferralTime`` is offered for matching once
  ``now + SCHEDD_INTERVAL >= DeferralTime - DeferralPrepTime`` (seed: job
  deferral); the startd waits for the deferral time before starting it;
* matched pieces of partitionable slots come back with the leftover resources
  and their claim id; the schedd claims them for further idle jobs of the same
  submitter at once (``CLAIM_PARTITIONABLE_LEFTOVERS``, default true).
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import time
from dataclasses import replace
from typing import Any

import httpx

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.classad.match import requirements_hold
from htcpool.protocol import (
    ActionResult,
    AdList,
    DaemonCommand,
    FetchRequests,
    HistoryQuery,
    IdleJobs,
    InvalidateAd,
    JobAction,
    JobUpdate,
    MatchInfo,
    Ok,
    QueueQuery,
    Reconnect,
    ReconnectReply,
    Reschedule,
    Submit,
    Submitted,
    UpdateAd,
)
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.joblog import UserLogWriter
from htcpool.runtime.jobtargets import select_jobs
from htcpool.runtime.store import SqliteQueueStore
from htcpool.schedd import ClaimManager, JobQueue, JobStatus, ScheddError, UnknownClaim
from htcpool.schedd import settings_from_config as schedd_settings
from htcpool.schedd.claims import ClaimState
from htcpool.schedd.priority import priority_key, submitter_of
from htcpool.schedd.queue import HOLD_MISSED_DEFERRAL, MISSED_DEFERRAL_REASON
from htcpool.schedd.states import ACTIVE
from htcpool.startd import messages as m

log = logging.getLogger("htcpool.schedd")
HOLD_STARTER_ERROR = 6  # HTCondor: the job could not be started
JOB_ACTIONS = ("hold", "release", "remove", "vacate", "prio")
RECONNECT_FAILED = "The job's execute point could not be reached within its lease."


class ScheddService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        host = config.get_str("FULL_HOSTNAME") or "localhost"
        self.name = config.get_str("SCHEDD_NAME") or f"{getpass.getuser()}@{host}"
        self.host = host
        self.started = daemon.clock()

        def get(name: str) -> str | None:
            return config.get_str(name, subsystem="SCHEDD") if config.is_defined(name, subsystem="SCHEDD") \
                else config.table_default(name, subsystem="SCHEDD")

        self.settings = schedd_settings(get, _read_file)
        self.settings.schedd_name = self.name
        self.settings.schedd_interval = int(config.get_int("SCHEDD_INTERVAL") or 300)
        zone = -time.altzone if time.localtime().tm_isdst > 0 else -time.timezone
        self.settings.local_zone = zone
        self.zone = zone
        self.claim_leftovers = config.get_bool("CLAIM_PARTITIONABLE_LEFTOVERS")
        self.claim_leftovers = True if self.claim_leftovers is None else bool(self.claim_leftovers)
        daemon.layout.spool.mkdir(parents=True, exist_ok=True)
        self.store = SqliteQueueStore(str(daemon.layout.spool / "job_queue.db"))
        self.logs = UserLogWriter(zone)
        jobs, next_cluster = self.store.load()
        self.queue = JobQueue(self.settings, self._recording_store(), next_cluster=next_cluster)
        for job_id, ad in jobs.items():
            self.queue.jobs[job_id] = ad
            if JobStatus(ad.evaluate("JobStatus")) == JobStatus.IDLE:
                self.queue.index.add(submitter_of(ad, self.settings.accounting_domain),
                                     priority_key(ad, job_id))
        self.claims = ClaimManager(self.queue)
        self.claim_startd: dict[str, str] = {}
        self.ready = asyncio.Event()
        self.next_periodic = daemon.clock()
        self.next_advert = daemon.clock()
        self.reconnecting: dict[tuple[int, int], str] = {}

    def _reconfigure(self) -> None:
        """Re-read the configuration: the queue's policies and the schedd's intervals."""
        from htcpool.runtime.daemon import daemon_config
        config = self.daemon.config = daemon_config(self.daemon.layout, "SCHEDD")

        def get(name: str) -> str | None:
            return config.get_str(name, subsystem="SCHEDD") if config.is_defined(name, subsystem="SCHEDD") \
                else config.table_default(name, subsystem="SCHEDD")

        fresh = schedd_settings(get, _read_file)
        fresh.schedd_name, fresh.schedd_address = self.settings.schedd_name, self.settings.schedd_address
        fresh.schedd_interval = int(config.get_int("SCHEDD_INTERVAL") or 300)
        fresh.local_zone = self.zone
        for name, value in vars(fresh).items():
            setattr(self.settings, name, value)  # the queue and the claims share this object

    def _recording_store(self) -> Any:
        logs = self.logs
        store = self.store

        class Recording:
            """The SQLite store, remembering the ads of jobs that leave for their last log events."""

            def save_job(self, job_id: Any, ad: ClassAd) -> None:
                store.save_job(job_id, ad)

            def delete_job(self, job_id: Any) -> None:
                store.delete_job(job_id)

            def append_history(self, ad: ClassAd) -> None:
                logs.remember(ad)
                store.append_history(ad)

            def save_next_cluster(self, n: int) -> None:
                store.save_next_cluster(n)

        return Recording()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self.settings.schedd_address = self.daemon.sinful
        self._advertise(self.daemon.clock())
        await self._reconnect_all()
        self.ready.set()

    async def stop(self, how: str) -> None:
        self.daemon.to_collector(InvalidateAd("Scheduler", self.name))
        self.daemon.to_collector(InvalidateAd("Submitter", constraint=f'ScheddName == "{self.name}"'))
        await asyncio.sleep(0.1)
        self.store.close()

    async def _reconnect_all(self) -> None:
        now = self.daemon.clock()
        for job_id, ad in list(self.queue.jobs.items()):
            if JobStatus(ad.evaluate("JobStatus")) not in ACTIVE:
                continue
            claim_id, startd = ad.get("ClaimId"), ad.get("StartdAddress")
            if not isinstance(claim_id, str) or not isinstance(startd, str):
                self._requeue(job_id, now, "The schedd restarted and the job's claim was unknown.")
                continue
            try:
                reply = await self.daemon.client.send(startd, Reconnect(claim_id, self.name), timeout=3.0)
            except (httpx.HTTPError, OSError, RequestRefused) as e:
                log.info("job %d.%d: startd unreachable (%s); waiting for its lease", *job_id, e)
                self.reconnecting[job_id] = claim_id
                continue
            if isinstance(reply, ReconnectReply) and reply.alive:
                slot_ad = ClassAd({"Name": reply.slot, "MyAddress": startd})
                self.claims.adopt(slot_ad, claim_id, job_id, now)
                self.claim_startd[claim_id] = startd
                log.info("job %d.%d reconnected on %s", *job_id, reply.slot)
            else:
                self._requeue(job_id, now, "The job's claim was gone when the schedd restarted.")
        self._flush_logs()

    def _requeue(self, job_id: tuple[int, int], now: float, reason: str) -> None:
        if job_id in self.queue.jobs and self.queue.status(job_id) in ACTIVE:
            self.queue.vacate(job_id, None, now, reason)

    # ------------------------------------------------------------------ helpers
    def _flush_logs(self) -> None:
        events, self.queue.events = self.queue.events, []
        for event in events:
            ad = self.queue.jobs.get((event.cluster, event.proc))
            self.logs.write(event, ad)

    def _ctx(self, now: float) -> EvalContext:
        return EvalContext(clock=fixed_clock(now))

    def _to_startd(self, claim_id: str, message: Any) -> None:
        url = self.claim_startd.get(claim_id)
        if url is None:
            log.warning("no startd known for claim %s", claim_id)
            return
        self.daemon.outbox.post(url, message)

    def _for_startd(self, action: Any) -> Any:
        """A claim request or activation carries the submitter's accounting name, as the startd
        advertises it (``AccountingGroup``, with the accounting domain) and charges it."""
        if isinstance(action, m.RequestClaim | m.ActivateClaim):
            claim = self.claims.claims.get(action.claim_id)
            job = action.request if isinstance(action, m.RequestClaim) else action.job
            if claim is not None and "AccountingGroup" in job and job.get("AccountingGroup") != claim.submitter:
                job = job.copy()
                job["AccountingGroup"] = claim.submitter
                return replace(action, request=job) if isinstance(action, m.RequestClaim) \
                    else replace(action, job=job)
        return action

    def _send_all(self, actions: list[Any]) -> None:
        for action in actions:
            action = self._for_startd(action)
            self._to_startd(action.claim_id, action)
            if isinstance(action, m.ReleaseClaim):
                self._reschedule("a claim was released")

    def _reschedule(self, reason: str) -> None:
        if any(self.queue.index.ordered(s) for s in self.queue.submitters()):
            url = self.daemon.address_of("negotiator")
            if url is not None:
                self.daemon.outbox.post(url, Reschedule(reason))

    def _advertise(self, now: float) -> None:
        url = self.daemon.url
        counts: dict[str, dict[str, int]] = {}
        totals = {"Idle": 0, "Running": 0, "Held": 0}
        for ad in self.queue.jobs.values():
            status = JobStatus(ad.evaluate("JobStatus"))
            sub = counts.setdefault(submitter_of(ad, self.settings.accounting_domain),
                                    {"IdleJobs": 0, "RunningJobs": 0, "HeldJobs": 0})
            if status == JobStatus.IDLE:
                sub["IdleJobs"] += 1
                totals["Idle"] += 1
            elif status in ACTIVE:
                sub["RunningJobs"] += 1
                totals["Running"] += 1
            elif status == JobStatus.HELD:
                sub["HeldJobs"] += 1
                totals["Held"] += 1
        ad = ClassAd({"MyType": "Scheduler", "Name": self.name, "Machine": self.host, "MyAddress": url,
                      "ScheddIpAddr": self.settings.schedd_address, "TotalIdleJobs": totals["Idle"],
                      "TotalRunningJobs": totals["Running"], "TotalHeldJobs": totals["Held"],
                      "DaemonStartTime": int(self.started), "ClassAdLifetime": 3 * self.settings.schedd_interval + 60})
        self.daemon.to_collector(UpdateAd(ad))
        for submitter, c in counts.items():
            if not submitter:
                continue
            sad = ClassAd({"MyType": "Submitter", "Name": submitter, "ScheddName": self.name,
                           "Machine": self.host,
                           "MyAddress": url, "ScheddIpAddr": self.settings.schedd_address,
                           "ClassAdLifetime": 3 * self.settings.schedd_interval + 60, **c})
            self.daemon.to_collector(UpdateAd(sad))
        self.next_advert = now + min(self.settings.schedd_interval, 60)

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        await self.ready.wait()
        now = self.daemon.clock()
        try:
            reply = await self._dispatch(message, now)
        finally:
            self._flush_logs()
            self.daemon.poke()
        return reply

    async def _dispatch(self, message: Any, now: float) -> Any:
        if isinstance(message, Submit):
            return self._submit(message, now)
        if isinstance(message, QueueQuery):
            return AdList(tuple(self._query(message.constraint, message.projection, now)))
        if isinstance(message, HistoryQuery):
            try:
                ads = self.store.history(message.constraint or None, message.limit or None)
            except Exception as e:
                raise RequestRefused(400, str(e)) from None
            return AdList(tuple(_public(ad) for ad in ads))
        if isinstance(message, JobAction):
            return self._job_action(message, now)
        if isinstance(message, FetchRequests):
            pairs = self._idle_jobs(set(message.submitters), now)
            return IdleJobs(tuple(s for s, _ in pairs), tuple(ad for _, ad in pairs))
        if isinstance(message, MatchInfo):
            self._match(message, now)
            return Ok()
        if isinstance(message, DaemonCommand):
            if message.command == "off":
                self.daemon.request_stop(message.how)
                return Ok("shutting down")
            if message.command == "reconfig":
                self._reconfigure()
                return Ok("reconfigured")
            if message.command == "reschedule":
                self._reschedule("condor_reschedule")
                return Ok()
            raise RequestRefused(400, f"unknown command {message.command!r}")
        return self._from_startd(message, now)

    def _submit(self, message: Submit, now: float) -> Submitted:
        if not message.ads:
            raise RequestRefused(400, "Submit: no job ads")
        ads = list(message.ads)
        user = f"{message.owner}@{self.settings.accounting_domain}" if self.settings.accounting_domain \
            else message.owner
        for ad in ads:
            ad["TotalSubmitProcs"] = len(ads)
            if "User" not in ad:
                ad["User"] = user
        try:
            with self.store.batch():
                cluster, warnings = self.queue.submit(message.owner, ads, now)
        except ScheddError as e:
            raise RequestRefused(400, str(e)) from None
        self._advertise(now)
        self._reschedule("new jobs")
        return Submitted(cluster, len(message.ads), tuple(warnings))

    def _query(self, constraint: str, projection: tuple[str, ...], now: float) -> list[ClassAd]:
        try:
            test = ExprTree(constraint) if constraint else None
        except ClassAdError as e:
            raise RequestRefused(400, f"the constraint {constraint!r} does not parse: {e}") from None
        out = []
        ctx = self._ctx(now)
        for _job_id, ad in sorted(self.queue.jobs.items()):
            if test is not None and test.evaluate(ad, None, ctx) is not True:
                continue
            if projection:
                out.append(ClassAd({a: ad.lookup(a) for a in projection
                                    if a in ad and a.lower() not in PRIVATE_JOB_ATTRS}))
            else:
                out.append(_public(ad))
        return out

    def _idle_jobs(self, submitters: set[str], now: float) -> list[tuple[str, ClassAd]]:
        reserved = {c.job for c in self.claims.claims.values() if c.job is not None}
        out = []
        for submitter in self.queue.submitters():
            if submitters and submitter not in submitters:
                continue
            for job_id in self.queue.ordered_jobs(submitter):
                if job_id in reserved:
                    continue
                ad = self.queue.jobs[job_id]
                if not self._deferral_ready(ad, now):
                    continue
                out.append((submitter, ad))
        return out

    def _deferral_ready(self, ad: ClassAd, now: float) -> bool:
        if "DeferralTime" not in ad:
            return True
        ctx = self._ctx(now)
        when = ad.evaluate("DeferralTime", ctx)
        prep = ad.evaluate("DeferralPrepTime", ctx) if "DeferralPrepTime" in ad else 0
        if not isinstance(when, int | float) or isinstance(when, bool):
            return True
        prep = prep if isinstance(prep, int | float) and not isinstance(prep, bool) else 0
        return now + self.settings.schedd_interval >= when - prep

    def _match(self, message: MatchInfo, now: float) -> None:
        job_id = (message.cluster, message.proc)
        url = message.slot_ad.get("MyAddress")
        if not isinstance(url, str):
            raise RequestRefused(400, "MatchInfo: the slot ad has no MyAddress")
        if job_id not in self.queue.jobs or self.queue.status(job_id) != JobStatus.IDLE \
                or message.claim_id in self.claims.claims:
            return
        self.claim_startd[message.claim_id] = url
        try:
            actions = self.claims.match(message.slot_ad, message.claim_id, job_id, now)
        except ScheddError as e:
            log.info("match for %d.%d dropped: %s", *job_id, e)
            return
        actions = [m.RequestClaim(a.claim_id, a.request, self.name, a.alive_interval,
                                  message.preempt_claim_ids) if isinstance(a, m.RequestClaim) else a
                   for a in actions]
        self._send_all(actions)

    def _claim_leftovers(self, reply: m.ClaimReply, submitter: str, now: float) -> None:
        leftovers = reply.leftovers
        if not self.claim_leftovers or leftovers is None:
            return
        claim_id, url = leftovers.get("ClaimId"), leftovers.get("MyAddress")
        if not isinstance(claim_id, str) or not isinstance(url, str) or claim_id in self.claims.claims:
            return
        reserved = {c.job for c in self.claims.claims.values() if c.job is not None}
        ctx = self._ctx(now)
        for job_id in self.queue.ordered_jobs(submitter):
            if job_id in reserved:
                continue
            job = self.queue.jobs[job_id]
            if not self._deferral_ready(job, now):
                continue
            if requirements_hold(job, leftovers, ctx) and requirements_hold(leftovers, job, ctx):
                self.claim_startd[claim_id] = url
                self._send_all([m.RequestClaim(a.claim_id, a.request, self.name, a.alive_interval)
                                if isinstance(a, m.RequestClaim) else a
                                for a in self.claims.match(leftovers, claim_id, job_id, now)])
                return

    # ------------------------------------------------------------------ from the startds
    def _renew(self, claim_id: str, now: float) -> tuple[int, int] | None:
        claim = self.claims.claims.get(claim_id)
        if claim is None or claim.job is None:
            return None
        claim.last_heard = now
        ad = self.queue.jobs.get(claim.job)
        if ad is not None:
            ad["LastJobLeaseRenewal"] = int(now)
        return claim.job

    def _from_startd(self, message: Any, now: float) -> Any:
        try:
            return self._startd_message(message, now)
        except UnknownClaim:
            return self._orphan(message, now)

    def _startd_message(self, message: Any, now: float) -> Any:
        if isinstance(message, m.ClaimReply):
            claim = self.claims.claim(message.claim_id)
            submitter = claim.submitter
            if message.accepted and message.slot and claim.slot_ad.get("Name") != message.slot:
                claim.slot_ad = claim.slot_ad.copy()  # a dynamic slot carved from the matched one
                claim.slot_ad["Name"] = message.slot
            self._send_all(self.claims.claim_reply(message, now))
            if message.accepted:
                self._claim_leftovers(message, submitter, now)
            return Ok()
        if isinstance(message, m.ActivateReply):
            claim = self.claims.claim(message.claim_id)
            job_id = claim.job
            self._send_all(self.claims.activate_reply(message, now))
            if message.accepted and job_id is not None and job_id in self.queue.jobs:
                ad = self.queue.jobs[job_id]
                ad["ClaimId"] = message.claim_id
                ad["StartdAddress"] = self.claim_startd.get(message.claim_id, "")
                ad["LastJobLeaseRenewal"] = int(now)
                self.store.save_job(job_id, ad)
            return Ok()
        if isinstance(message, m.DeactivateReply):
            self._send_all(self.claims.deactivate_reply(message, now))
            return Ok()
        if isinstance(message, m.NotifySchedd):
            if message.kind == "release":
                self.claims.startd_released(message.claim_id, now, message.reason)
                self._reschedule("a claim ended")
            return Ok()
        if isinstance(message, m.HoldJob):
            job_id = self._renew(message.claim_id, now)
            if job_id is not None and self.queue.status(job_id) in ACTIVE:
                self.queue.hold(job_id, None, now, message.reason, message.code, message.subcode)
            return Ok()
        if isinstance(message, JobUpdate):
            return self._job_update(message, now)
        raise RequestRefused(400, f"the schedd does not take {type(message).__name__}")

    def _job_update(self, u: JobUpdate, now: float) -> Any:
        job_id = self._renew(u.claim_id, now)
        if job_id is None:
            raise UnknownClaim(u.claim_id)
        ad = self.queue.jobs[job_id]
        status = self.queue.status(job_id)
        if u.event == "provisioned":
            for attr, value in u.resources.items():
                ad[attr] = value
            self.store.save_job(job_id, ad)
        elif u.event == "suspended" and status == JobStatus.RUNNING:
            self.queue.suspend(job_id, now)
        elif u.event == "continued" and status == JobStatus.SUSPENDED:
            self.queue.unsuspend(job_id, now)
        elif u.event == "usage":
            _record_usage(ad, u)
            self.store.save_job(job_id, ad)
            self.logs.image_size(ad, job_id, u, now)
        elif u.event == "missed_deferral":
            if status in ACTIVE:
                self.queue.hold(job_id, None, now, MISSED_DEFERRAL_REASON, HOLD_MISSED_DEFERRAL)
            self._send_all(self.claims.release(u.claim_id, now))
        elif u.event == "error":
            if status in ACTIVE:
                self.queue.hold(job_id, None, now, f"Error from starter: {u.message}", HOLD_STARTER_ERROR)
            self._send_all(self.claims.release(u.claim_id, now))
        elif u.event == "exited":
            _record_usage(ad, u)
            _record_run(ad, u)
            if not u.killed and status in ACTIVE:
                self._send_all(self.claims.job_exited(u.claim_id, now, u.exit_code, u.exit_signal))
        return Ok()

    def _orphan(self, message: Any, now: float) -> Any:
        """A startd's message about a claim this schedd no longer holds (or not yet, after a restart)."""
        if isinstance(message, JobUpdate) and message.event == "exited" and not message.killed:
            for job_id, ad in list(self.queue.jobs.items()):
                if ad.get("ClaimId") == message.claim_id and self.queue.status(job_id) in ACTIVE:
                    self.queue.finish(job_id, now, message.exit_code, message.exit_signal)
                    self.reconnecting.pop(job_id, None)
        elif isinstance(message, m.ClaimReply) and message.accepted:
            self.daemon.outbox.post(str(message.leftovers.get("MyAddress", "")) if message.leftovers
                                    else self.claim_startd.get(message.claim_id, ""),
                                    m.ReleaseClaim(message.claim_id))
        return Ok("unknown claim")

    # ------------------------------------------------------------------ user commands
    def _job_action(self, message: JobAction, now: float) -> ActionResult:
        if message.action not in JOB_ACTIONS:
            raise RequestRefused(400, f"JobAction.action: expected one of {', '.join(JOB_ACTIONS)}, "
                                      f"not {message.action!r}")
        if not message.targets and not message.constraint:
            raise RequestRefused(400, "JobAction: name jobs, clusters or users, or give a constraint")
        try:
            selected = select_jobs(self.queue.jobs, message.targets, message.constraint, self._ctx(now))
        except ValueError as e:
            raise RequestRefused(400, str(e)) from None
        done: list[str] = []
        errors: list[str] = []
        user = None if message.user in self.settings.queue_super_users else message.user
        for job_id in selected.jobs:
            try:
                self._act_on(job_id, message, user, now)
                done.append(f"{job_id[0]}.{job_id[1]}")
            except ScheddError as e:
                errors.append(f"Job {job_id[0]}.{job_id[1]}: {e}")
        errors.extend(selected.missing)
        if message.action in ("release",) and done:
            self._reschedule("jobs released")
        self._advertise(now)
        return ActionResult(tuple(done), tuple(errors))

    def _claim_of(self, job_id: tuple[int, int]) -> str | None:
        return next((cid for cid, c in self.claims.claims.items() if c.job == job_id), None)

    def _act_on(self, job_id: tuple[int, int], a: JobAction, user: str | None, now: float) -> None:
        claim_id = self._claim_of(job_id)
        if a.action == "remove":
            if claim_id is not None:
                self._send_all(self.claims.remove_job(job_id, user, now, a.reason))
            else:
                self.queue.remove(job_id, user, now, a.reason)
        elif a.action == "hold":
            self.queue.hold(job_id, user, now, a.reason or f"via condor_hold (by user {a.user})")
            if claim_id is not None:
                self._send_all(self.claims.release(claim_id, now))
        elif a.action == "release":
            self.queue.release(job_id, user, now, a.reason or f"via condor_release (by user {a.user})")
        elif a.action == "vacate":
            if claim_id is None or self.queue.status(job_id) not in ACTIVE:
                raise ScheddError("the job is not running")
            self.queue._authorize(self.queue.job(job_id), user)
            self._send_all(self.claims.release(claim_id, now))
        elif a.action == "prio":
            ad = self.queue.job(job_id)
            current = ad.evaluate("JobPrio")
            base = current if isinstance(current, int) and not isinstance(current, bool) else 0
            self.queue.set_priority(job_id, user, base + a.value if a.relative else a.value, now)
        else:
            raise RequestRefused(400, f"unknown job action {a.action!r}")

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        times = [self.next_periodic, self.next_advert]
        claims = self.claims.next_deadline()
        if claims is not None:
            times.append(claims)
        if self.reconnecting:
            times.append(self.daemon.clock() + 2.0)
        return min(times)

    async def on_timer(self, now: float) -> None:
        await self.ready.wait()
        self._send_all(self.claims.handle_timer(now))
        if now >= self.next_periodic:
            self.queue.handle_timer(now)
            self.next_periodic = now + min(self.settings.schedd_interval, 60)
            if any(self._deferral_ready(ad, now) and "DeferralTime" in ad
                   for ad in self.queue.jobs.values()
                   if JobStatus(ad.evaluate("JobStatus")) == JobStatus.IDLE):
                self._reschedule("deferred jobs are due")
        if self.reconnecting:
            await self._retry_reconnects(now)
        if now >= self.next_advert:
            self._advertise(now)
        self._flush_logs()

    async def _retry_reconnects(self, now: float) -> None:
        for job_id, claim_id in list(self.reconnecting.items()):
            ad = self.queue.jobs.get(job_id)
            if ad is None or self.queue.status(job_id) not in ACTIVE:
                self.reconnecting.pop(job_id)
                continue
            startd = str(ad.get("StartdAddress", ""))
            try:
                reply = await self.daemon.client.send(startd, Reconnect(claim_id, self.name), timeout=2.0)
            except (httpx.HTTPError, OSError, RequestRefused):
                reply = None
            if isinstance(reply, ReconnectReply):
                self.reconnecting.pop(job_id)
                if reply.alive and claim_id not in self.claims.claims:
                    self.claims.adopt(ClassAd({"Name": reply.slot, "MyAddress": startd}), claim_id, job_id, now)
                    self.claim_startd[claim_id] = startd
                else:
                    self._requeue(job_id, now, "The job's claim was gone when the schedd reconnected.")
                continue
            renewed = ad.get("LastJobLeaseRenewal")
            lease = ad.get("JobLeaseDuration")
            lease = lease if isinstance(lease, int) and lease > 0 else 2400
            if not isinstance(renewed, int) or now > renewed + lease:
                self.reconnecting.pop(job_id)
                self._requeue(job_id, now, RECONNECT_FAILED)


def _record_usage(ad: ClassAd, u: JobUpdate) -> None:
    if u.image_size_kb:
        ad["ImageSize"] = max(int(u.image_size_kb), _int(ad.get("ImageSize")))
    if u.rss_kb:
        ad["ResidentSetSize"] = int(u.rss_kb)
        ad["MemoryUsage"] = ExprTree("((ResidentSetSize + 1023) / 1024)")
    if u.user_cpu or u.sys_cpu:
        ad["RemoteUserCpu"] = float(u.user_cpu)
        ad["RemoteSysCpu"] = float(u.sys_cpu)


#: job attributes the schedd keeps for itself: a claim id is a capability (HTCondor shows only
#: PublicClaimId), the startd's address and lease renewal are the reconnection state
PRIVATE_JOB_ATTRS = frozenset({"claimid", "startdaddress"})


def _public(ad: ClassAd) -> ClassAd:
    if "ClaimId" not in ad and "StartdAddress" not in ad:
        return ad
    ad = ad.copy()
    for attr in ("ClaimId", "StartdAddress"):
        if attr in ad:
            del ad[attr]
    return ad


def _record_run(ad: ClassAd, u: JobUpdate) -> None:
    """A finished run's totals, as the shadow adds them to the job ad."""
    ad["ActivationExecutionDuration"] = int(u.wall)
    ad["ActivationDuration"] = int(u.wall)
    ad["CumulativeRemoteUserCpu"] = _number(ad.get("CumulativeRemoteUserCpu")) + float(u.user_cpu)
    ad["CumulativeRemoteSysCpu"] = _number(ad.get("CumulativeRemoteSysCpu")) + float(u.sys_cpu)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read_file(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


__all__ = ["ClaimState", "ScheddService"]
