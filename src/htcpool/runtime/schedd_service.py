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
* the requests of users are in ``schedd_commands``, the startds' reports in ``shadow`` and the
  reconnection after a restart in ``schedd_reconnect``;
* matched pieces of partitionable slots come back with the leftover resources
  and their claim id; the schedd claims them for further idle jobs of the same
  submitter at once (``CLAIM_PARTITIONABLE_LEFTOVERS``, default true).
"""

from __future__ import annotations

import asyncio
import getpass
import logging
from dataclasses import replace
from typing import Any

from htcpool.classad import ClassAd, EvalContext, fixed_clock
from htcpool.classad.match import requirements_hold
from htcpool.clock import local_zone
from htcpool.config import Config
from htcpool.protocol import (
    AdList,
    DaemonCommand,
    FetchRequests,
    HistoryQuery,
    IdleJobs,
    InvalidateAd,
    JobAction,
    MatchInfo,
    Ok,
    QueueQuery,
    Reschedule,
    Submit,
    UpdateAd,
)
from htcpool.protocol import startd as m
from htcpool.runtime import schedd_commands, schedd_reconnect, shadow
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.joblog import UserLogWriter
from htcpool.runtime.store import SqliteQueueStore
from htcpool.schedd import ClaimManager, JobQueue, JobStatus, ScheddError, ScheddSettings
from htcpool.schedd import settings_from_config as schedd_settings
from htcpool.schedd.claims import ClaimState
from htcpool.schedd.priority import submitter_of
from htcpool.schedd.states import ACTIVE

log = logging.getLogger("htcpool.schedd")


class ScheddService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        host = config.get_str("FULL_HOSTNAME") or "localhost"
        self.name = config.get_str("SCHEDD_NAME") or f"{getpass.getuser()}@{host}"
        self.host = host
        self.started = daemon.clock()
        zone = self.zone = local_zone()
        self.settings = _settings(config, self.name, "", zone)
        self.claim_leftovers = config.get_bool("CLAIM_PARTITIONABLE_LEFTOVERS")
        self.claim_leftovers = True if self.claim_leftovers is None else bool(self.claim_leftovers)
        daemon.layout.spool.mkdir(parents=True, exist_ok=True)
        self.store = SqliteQueueStore(str(daemon.layout.spool / "job_queue.db"))
        self.logs = UserLogWriter(zone)
        jobs, next_cluster = self.store.load()
        self.queue = JobQueue(self.settings, self._recording_store(), next_cluster=next_cluster)
        self.queue.restore(jobs)
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
        fresh = _settings(config, self.settings.schedd_name, self.settings.schedd_address, self.zone)
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
        await schedd_reconnect.reconnect_all(self)
        self.ready.set()

    async def stop(self, how: str) -> None:
        self.daemon.to_collector(InvalidateAd("Scheduler", self.name))
        self.daemon.to_collector(InvalidateAd("Submitter", constraint=f'ScheddName == "{self.name}"'))
        await asyncio.sleep(0.1)
        self.store.close()


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
        if self.queue.submitters():  # only submitters with idle jobs are indexed
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
            return schedd_commands.submit(self, message, now)
        if isinstance(message, QueueQuery):
            return AdList(tuple(schedd_commands.query(self, message.constraint, message.projection, now)))
        if isinstance(message, HistoryQuery):
            try:
                ads = self.store.history(message.constraint or None, message.limit or None)
            except Exception as e:
                raise RequestRefused(400, str(e)) from None
            return AdList(tuple(schedd_commands.public(ad) for ad in ads))
        if isinstance(message, JobAction):
            return schedd_commands.job_action(self, message, now)
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
        return shadow.from_startd(self, message, now)


    def _jobs_on_claims(self) -> set[tuple[int, int]]:
        """Jobs a claim holds or is being requested for: not to be offered again."""
        return {c.job for c in self.claims.claims.values() if c.job is not None}

    def _idle_jobs(self, submitters: set[str], now: float) -> list[tuple[str, ClassAd]]:
        reserved = self._jobs_on_claims()
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
        reserved = self._jobs_on_claims()
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


    # ------------------------------------------------------------------ user commands


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
            await schedd_reconnect.retry_reconnects(self, now)
        if now >= self.next_advert:
            self._advertise(now)
        self._flush_logs()


def _settings(config: Config, name: str, address: str, zone: int) -> ScheddSettings:
    """The schedd core's settings from the configuration (subsystem SCHEDD, HTCondor's defaults)."""

    def get(knob: str) -> str | None:
        return config.get_str(knob, subsystem="SCHEDD") if config.is_defined(knob, subsystem="SCHEDD") \
            else config.table_default(knob, subsystem="SCHEDD")

    settings = schedd_settings(get, _read_file)
    settings.schedd_name, settings.schedd_address, settings.local_zone = name, address, zone
    settings.schedd_interval = int(config.get_int("SCHEDD_INTERVAL") or 300)
    return settings


def _read_file(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


__all__ = ["ClaimState", "ScheddService"]
