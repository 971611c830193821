"""The schedd daemon: the schedd core (``htcpool.schedd.Schedd``) over HTTP, with its queue
in SQLite and its job events in the users' logs.

Every decision is the core's: what a submit, a query, a job action, a match or a
startd's report does, which jobs are offered, when to ask the negotiator for a cycle,
what to advertise, how a restarted schedd finds its running jobs. This driver:

* decodes requests and hands them to the core with the time (``_REQUESTS`` for what
  the driver answers itself: the history, which is on disk, and administrative
  commands; everything in ``REQUEST_TYPES`` goes to the core); a ``ScheddError`` is
  answered 400 with its message;
* carries out the core's actions in order (``_carry``, a table from action type to
  carrier): messages to a claim's startd and to the negotiator go through the outbox,
  ads to the collector; a keep-alive answered ``unknown claim`` (a restarted startd)
  comes back to the core as the startd's release notice; a question to a startd (``AskStartd``, reconnection) is sent
  and its answer, or ``StartdUnreachable``, handed back to the core;
* makes every queue change durable before the request is answered and before any of
  the core's actions is carried out: each call into the core is one transaction
  (``_in_one_transaction``; a submitted cluster is one too), so an acknowledged submit
  survives a crash, a job is recorded Running on its claim before its activation is sent
  (a restarted schedd reconnects to it instead of running it again), and a finished job
  leaves the queue and enters the history at once;
* writes the core's job events to each job's user log (``UserLogWriter``), also for
  jobs that have just left the queue, and the factories' events to ``SCHEDD_MATERIALIZE_LOG``
  when it is set (``MaterializeLog``), and logs the core's warnings (a job whose
  periodic expressions cannot be evaluated, a transform that failed);
* flocking (``schedd/flocking.py`` decides, ``runtime/flock_ads.py`` addresses): sends each
  Submitter ad also to the other pools' collectors its submitter's flock level reaches, so that
  those pools' negotiators ask this schedd for its jobs;
* arms the daemon's timer from the core's ``next_deadline`` and calls its
  ``handle_timer``;
* runs the local and scheduler universe jobs the core starts (``StartLocalJob``,
  ``StopLocalJob``) with the execute point's starters (``runtime/local_universe.py``),
  handing their reports back to the core one at a time, in order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd, quote
from htcpool.clock import local_zone
from htcpool.config import Config
from htcpool.gcpause import paused_gc
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    HistoryQuery,
    JobEvent,
    JobUpdate,
    Ok,
    QueryAds,
    ReconnectReply,
    Reschedule,
    Submit,
)
from htcpool.protocol.schedd import QueueCounts, QueueTotals, SubmitFactory
from htcpool.protocol.startd import (
    UNKNOWN_CLAIM,
    ActivateClaim,
    Alive,
    ClaimReply,
    Notice,
    NotifySchedd,
    RequestClaim,
)
from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.flock_ads import FlockAdvertiser
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.joblog import MaterializeLog, UserLogWriter
from htcpool.runtime.local_names import local_schedd_name, spool_dir
from htcpool.runtime.local_universe import LocalUniverse
from htcpool.runtime.store import SqliteQueueStore
from htcpool.schedd import (
    Action,
    AskStartd,
    LocalJobReport,
    Outcome,
    Schedd,
    ScheddError,
    ScheddSettings,
    StartdUnreachable,
    StartLocalJob,
    StopLocalJob,
    ToCollector,
    ToNegotiator,
    ToStartd,
)
from htcpool.schedd import settings_from_config as schedd_settings
from htcpool.schedd.claims import STARTD_FORGOT_REASON
from htcpool.schedd.commands import public
from htcpool.schedd.core import REQUEST_TYPES
from htcpool.schedd.shadow import NOT_SYNCED
from htcpool.schedd.store import JobId
from htcpool.schedd.totals import queue_totals
from htcpool.startd.claim_ids import without_secret

log = logging.getLogger("htcpool.schedd")
RECONNECT_TIMEOUT = 3.0  # seconds to wait for a startd's answer about a claim


class RecordingStore:
    """The SQLite store, remembering the ads of jobs that leave for their last log events."""

    def __init__(self, store: SqliteQueueStore, logs: UserLogWriter) -> None:
        self.store = store
        self.logs = logs

    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        self.store.save_job(job_id, ad)

    def save_copies(self, cluster: int, first: ClassAd, copies: list[tuple[int, ClassAd]]) -> None:
        self.store.save_copies(cluster, first, copies)

    def delete_job(self, job_id: JobId) -> None:
        self.store.delete_job(job_id)

    def append_history(self, ad: ClassAd) -> None:
        self.logs.remember(ad)
        self.store.append_history(ad)

    def save_next_cluster(self, n: int) -> None:
        self.store.save_next_cluster(n)

    def save_factory(self, cluster_id: int, state: dict[str, Any]) -> None:
        self.store.save_factory(cluster_id, state)

    def delete_factory(self, cluster_id: int) -> None:
        self.store.delete_factory(cluster_id)


class ScheddService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        host = config.get_str("FULL_HOSTNAME") or "localhost"
        # several schedds under one master (SCHEDD_B = $(SCHEDD)): each its name and queue
        self.name = local_schedd_name(config, daemon.local_name)
        self.zone = local_zone()
        spool = spool_dir(daemon.layout, config, daemon.local_name)
        spool.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.store = SqliteQueueStore(str(spool / "job_queue.db"))
        self.logs = UserLogWriter(self.zone, as_owner=os.geteuid() == 0  # written as each job's owner
                                  and not config.get_bool("DISABLE_SETUID", default=False))
        materialize_log = config.get_str("SCHEDD_MATERIALIZE_LOG")
        self.materialize_log = MaterializeLog(materialize_log, self.zone) if materialize_log else None
        jobs, next_cluster = self.store.load()
        for problem in self.store.problems:  # rows that could not be read are set aside
            log.warning("job queue: %s", problem)
        self.core = Schedd(settings_for_schedd(config, self.name, "", self.zone), daemon.clock(),
                           store=RecordingStore(self.store, self.logs), jobs=jobs,
                           next_cluster=next_cluster, host=host, schedd_is_root=os.geteuid() == 0,
                           factories=self.store.load_factories())
        self.flocking = FlockAdvertiser(config, self.core.settings.schedd_interval)
        self.local = LocalUniverse(_local_execute(daemon, spool), daemon.layout.log / "LocalStarterLog",
                                   self._local_report, daemon.clock)
        self._local_reports: asyncio.Queue[LocalJobReport] = asyncio.Queue()
        self._local_task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.stopping = False
        self._requests: dict[type, Callable[[Any, float], Awaitable[Any]]] = {
            **{message_type: self._to_core for message_type in REQUEST_TYPES},
            Submit: self._submit,
            SubmitFactory: self._submit,
            HistoryQuery: self._history,
            QueueTotals: self._totals,
            DaemonCommand: self._command,
            JobUpdate: self._job_update,
        }
        self._commands: dict[Command, Callable[[DaemonCommand, float], Awaitable[Any]]] = {
            Command.OFF: self._off,
            Command.RECONFIG: self._reconfigure,
            Command.RESCHEDULE: self._reschedule,
        }
        self._carriers: dict[type, Callable[[Any], Awaitable[None]]] = {
            ToStartd: self._to_startd,
            ToNegotiator: self._to_negotiator,
            ToCollector: self._to_collector,
            AskStartd: self._ask_startd,
            StartLocalJob: self._start_local,
            StopLocalJob: self._stop_local,
        }

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self._local_task = asyncio.get_running_loop().create_task(self._local_reports_to_core())
        outcome = self._in_one_transaction(self.core.start, self.daemon.clock(), self.daemon.url,
                                           self.daemon.sinful)
        await self._carry(outcome.actions)
        self._log_problems()
        self._flush_logs()
        self.ready.set()

    async def stop(self, how: str) -> None:
        self.stopping = True
        await self.local.close()
        if self._local_task is not None:
            self._local_task.cancel()
        await self._carry(self.core.stop().actions)
        await asyncio.sleep(0.1)
        self.store.close()

    # ------------------------------------------------------------------ requests
    async def handle(self, message: Any) -> Any:
        await self.ready.wait()
        if self.stopping:  # the queue is closing: the sender's outbox tries again later
            raise RequestRefused(503, "the schedd is shutting down")
        handler = self._requests.get(type(message))
        if handler is None:
            raise RequestRefused(400, f"the schedd does not take {type(message).__name__}")
        try:
            return await handler(message, self.daemon.clock())
        except ScheddError as e:
            raise RequestRefused(400, str(e)) from None
        finally:
            self._flush_logs()
            self.daemon.poke()

    async def _to_core(self, message: Any, now: float) -> Any:
        outcome = self._in_one_transaction(self.core.handle, message, now, synced=type(message) not in NOT_SYNCED)
        await self._carry(outcome.actions)
        return outcome.reply

    async def _job_update(self, message: JobUpdate, now: float) -> Any:
        """A startd's report on a job. An exit on a claim the startd keeps open (``claim_open``)
        is answered with the claim's next activation itself, when the core makes one: one
        message fewer between a job's end and the next one's start."""
        outcome = self._in_one_transaction(self.core.handle, message, now)
        reply, actions = outcome.reply, outcome.actions
        if message.claim_open and message.event is JobEvent.EXITED:
            reply, actions = answered_with_activation(reply, actions, message.claim_id)
        await self._carry(actions)
        return reply

    def _in_one_transaction(self, step: Callable[..., Outcome], *args: Any, synced: bool = True) -> Outcome:
        """One step of the core with all its queue writes in one transaction, committed before
        any of its actions leaves: a job's Running status and claim before its activation, a
        finished job's removal from the queue together with its history entry; synced to disk
        unless ``synced`` is false (``shadow.NOT_SYNCED``). A step that fails keeps what it
        wrote, as each write on its own did (a refused submit is the exception: ``_submit``
        rolls its cluster back)."""
        failure: Exception | None = None
        with self.store.batch(synced=synced):
            try:
                outcome = step(*args)
            except Exception as e:  # committed all the same, then raised
                failure = e
        if failure is not None:
            raise failure
        return outcome

    async def _submit(self, message: Submit | SubmitFactory, now: float) -> Any:
        with self.store.batch(), paused_gc():  # the whole cluster is one durable transaction
            outcome = self.core.handle(message, now)
        try:  # committed: telling the collector and negotiator cannot turn it into a failure
            await self._carry(outcome.actions)
        except Exception:
            log.exception("submit of cluster %s committed, but passing on its news failed",
                          getattr(outcome.reply, "cluster", "?"))
        return outcome.reply

    async def _history(self, message: HistoryQuery, now: float) -> AdList:
        try:
            ads = self.store.history(message.constraint or None, message.limit or None,
                                     context=self.core.queue.context(now))
        except Exception as e:
            raise RequestRefused(400, str(e)) from None
        return AdList(tuple(public(ad) for ad in ads))

    async def _totals(self, message: QueueTotals, now: float) -> QueueCounts:
        """condor_q -totals: counts by state, no ads (``schedd/totals.py``); nothing changes."""
        return queue_totals(self.core.queue, message, now)

    async def _command(self, message: DaemonCommand, now: float) -> Any:
        return await self.daemon.command_handler(self._commands, message)(message, now)

    async def _off(self, message: DaemonCommand, now: float) -> Ok:
        return self.daemon.stop_on_command(message)

    async def _reconfigure(self, message: DaemonCommand, now: float) -> Ok:
        """Re-read the configuration: the queue's policies and the schedd's intervals."""
        config = self.daemon.config = daemon_config(self.daemon.layout, "SCHEDD")
        settings = self.core.settings
        self.core.reconfigure(settings_for_schedd(config, settings.schedd_name, settings.schedd_address, self.zone),
                              now)
        self.flocking.reconfigure(config, self.core.settings.schedd_interval)
        problems = self._log_problems()
        return Ok("reconfigured" + "".join(f"\nWARNING: {problem}" for problem in problems))

    async def _reschedule(self, message: DaemonCommand, now: float) -> Any:
        return await self._to_core(Reschedule("condor_reschedule"), now)

    # ------------------------------------------------------------------ the core's actions
    async def _carry(self, actions: list[Action]) -> None:
        for action in actions:
            await self._carriers[type(action)](action)

    async def _to_startd(self, action: ToStartd) -> None:
        if not action.address:
            log.warning("no startd known for claim %s", action.message.claim_id)
            return
        message = action.message
        answered = self._alive_answered(message.claim_id) if isinstance(message, Alive) \
            else self._claim_answered if isinstance(message, RequestClaim) else None
        claim = self.core.claims.claims.get(message.claim_id)
        slot = claim.slot_ad.get("Name") if claim is not None else None
        self.daemon.outbox.post(claim_key(action.address, message.claim_id), message,
                                self._resolver(action.address, slot), on_reply=answered)

    def _resolver(self, address: str, slot: object) -> Callable[[], Awaitable[str | None]]:
        """Where to send to a claim's startd: its recorded address first; when that fails, the
        address its slot ads give now (a restarted startd listens elsewhere, and it is the one
        that can say the claim is gone)."""
        tries = 0

        async def resolve() -> str | None:
            nonlocal tries
            tries += 1
            if tries == 1 or not isinstance(slot, str):
                return address
            return await self._startd_address(address, slot)

        return resolve

    async def _startd_address(self, old: str, slot: str) -> str:
        """The address the startd named in ``slot`` (``slotN@<startd>``) advertises now; ``old``
        when the collector has none."""
        startd = slot.split("@", 1)[1] if "@" in slot else ""
        if not startd:
            return old
        ads = await self.daemon.collector_query(QueryAds("Machine", f"Machine == {quote(startd)}", ("MyAddress",)))
        return next((str(ad["MyAddress"]) for ad in ads if isinstance(ad.get("MyAddress"), str)), old)

    async def _claim_answered(self, reply: Any) -> None:
        """A startd may answer a claim request with its claim reply itself, when it decided at
        once (one message fewer for each claim of a partitionable slot's carving): taken as if it
        had come on its own. A startd that decides later (a slot to vacate first) answers ``Ok``
        and posts its reply then."""
        if self.stopping or not isinstance(reply, ClaimReply):
            return
        try:
            await self._to_core(reply, self.daemon.clock())
        finally:
            self._flush_logs()
            self.daemon.poke()

    def _alive_answered(self, claim_id: str) -> Callable[[Any], Awaitable[None]]:
        """What to do with a startd's answer to a keep-alive: ``unknown claim`` (the startd
        restarted and never knew it) is the startd saying the claim is gone, as its release
        notice would."""

        async def answered(reply: Any) -> None:
            if self.stopping or not (isinstance(reply, Ok) and reply.detail == UNKNOWN_CLAIM):
                return
            notice = NotifySchedd(self.name, claim_id, Notice.RELEASE, STARTD_FORGOT_REASON)
            now = self.daemon.clock()
            try:
                await self._carry(self._in_one_transaction(self.core.handle, notice, now).actions)
            finally:
                self._flush_logs()
                self.daemon.poke()

        return answered

    async def _to_negotiator(self, action: ToNegotiator) -> None:
        # after the ads: a cycle that ran before the collector had the new submitter ad would find
        # nothing to do, and the jobs would wait for the next one (NEGOTIATOR_INTERVAL)
        self.daemon.to_negotiator(action.message, after_ads=True)

    async def _to_collector(self, action: ToCollector) -> None:
        self.daemon.to_collector(action.message)
        for url, message in self.flocking.sends(action.message, self.daemon.clock()):  # flocking
            self.daemon.outbox.post(url, message, self.flocking.resolver(url))

    async def _ask_startd(self, action: AskStartd) -> None:
        claim_id = action.message.claim_id
        address = action.address
        try:
            try:
                reply = await self.daemon.client.send(address, action.message, timeout=RECONNECT_TIMEOUT)
            except OSError:  # a restarted startd may listen elsewhere now
                entry = self.core.reconnection.jobs.get(claim_id)
                ad = self.core.queue.jobs.get(entry.job_id) if entry is not None else None
                slot = ad.get("RemoteHost") if ad is not None else None
                moved = await self._startd_address(address, slot) if isinstance(slot, str) else address
                if moved == address:
                    raise
                address = moved
                reply = await self.daemon.client.send(address, action.message, timeout=RECONNECT_TIMEOUT)
        except (OSError, RequestRefused) as e:
            log.info("claim %s: startd %s unreachable (%s); waiting for the job's lease",
                     claim_id, address, e)
            reply = None
        answer = reply if isinstance(reply, ReconnectReply) else StartdUnreachable(claim_id)
        if isinstance(answer, ReconnectReply) and answer.alive:
            log.info("claim %s still alive on %s: reconnecting", claim_id, answer.slot)
        now = self.daemon.clock()
        await self._carry(self._in_one_transaction(self.core.handle, answer, now).actions)

    async def _start_local(self, action: StartLocalJob) -> None:
        self.local.start(action)

    async def _stop_local(self, action: StopLocalJob) -> None:
        await self.local.stop(action)

    def _local_report(self, report: LocalJobReport) -> None:
        self._local_reports.put_nowait(report)

    async def _local_reports_to_core(self) -> None:
        """Hand the local runs' reports to the core, in the order the starters wrote them."""
        while True:
            report = await self._local_reports.get()
            now = self.daemon.clock()
            try:
                await self._carry(self._in_one_transaction(self.core.handle, report, now).actions)
            except ScheddError as e:
                log.warning("local run %s: %s", report.update.claim_id, e)
            finally:
                self._flush_logs()
                self.daemon.poke()

    def _flush_logs(self) -> None:
        # a queued job without a log has nothing to write; each log is opened once per flush
        events = self.core.take_log_events()
        if self.materialize_log is not None:
            self.materialize_log.write(events)
        self.logs.write_all((event, ad) for event, ad in events if ad is None or "UserLog" in ad)
        for warning in self.core.take_warnings():
            log.warning("%s", warning)

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        return self.core.next_deadline(self.daemon.clock())

    async def on_timer(self, now: float) -> None:
        await self.ready.wait()
        if self.stopping:
            return
        try:
            periodic_due = now >= self.core.queue.next_deadline(now)
            started = time.perf_counter()
            outcome = self._in_one_transaction(self.core.handle_timer, now)
            if periodic_due:  # PERIODIC_EXPR_TIMESLICE: the core spaces its passes by their cost
                self.core.note_periodic_cost(time.perf_counter() - started)
            await self._carry(outcome.actions)
        finally:
            self._flush_logs()

    def _log_problems(self) -> list[str]:
        """Log the knobs the schedd could not use (it runs on with their defaults)."""
        problems = self.core.configuration_problems()
        for problem in problems:
            log.warning("configuration: %s", problem)
        return problems


def settings_for_schedd(config: Config, name: str, address: str, zone: int) -> ScheddSettings:
    """The schedd core's settings from the configuration (subsystem SCHEDD, HTCondor's defaults)."""

    def get(knob: str) -> str | None:
        return config.get_str(knob, subsystem="SCHEDD") if config.is_defined(knob, subsystem="SCHEDD") \
            else config.table_default(knob, subsystem="SCHEDD")

    def raw(knob: str) -> str | None:  # transform bodies: $(MY.attr) is the schedd's to expand
        return config.raw(knob, subsystem="SCHEDD")

    settings = schedd_settings(get, _read_file, raw)
    settings.schedd_name, settings.schedd_address, settings.local_zone = name, address, zone
    return settings


def claim_key(address: str, claim_id: str) -> str:
    """The outbox queue of a claim's messages to its startd: one per claim, so that a claim waits
    only for its own earlier messages (a partitionable slot's next claim does not queue behind the
    activation of the one before), named by the startd's address and the claim id without its
    secret (the key shows in the outbox's log lines)."""
    return f"{address} {without_secret(claim_id)}"


def answered_with_activation(reply: Any, actions: list[Action], claim_id: str) -> tuple[Any, list[Action]]:
    """The core's activation of ``claim_id`` taken out of ``actions`` to be the reply instead."""
    for i, action in enumerate(actions):
        if isinstance(action, ToStartd) and isinstance(action.message, ActivateClaim) \
                and action.message.claim_id == claim_id:
            return action.message, actions[:i] + actions[i + 1:]
    return reply, actions


def _local_execute(daemon: Daemon, spool: Path) -> Path:
    """Where local runs get their scratch directories: ``LOCAL_UNIV_EXECUTE``, by default
    ``local_univ_execute`` in the schedd's spool directory."""
    configured = daemon.config.get_str("LOCAL_UNIV_EXECUTE") \
        if daemon.config.is_defined("LOCAL_UNIV_EXECUTE") else None
    return Path(configured) if configured else spool / "local_univ_execute"


def _read_file(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


__all__ = ["RecordingStore", "ScheddService", "settings_for_schedd"]
