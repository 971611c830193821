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
  ads to the collector; a question to a startd (``AskStartd``, reconnection) is sent
  and its answer, or ``StartdUnreachable``, handed back to the core;
* makes every queue change durable before the request is answered (the core writes
  through ``SqliteQueueStore``; a submitted cluster is one transaction), so an
  acknowledged submit survives a crash;
* writes the core's job events to each job's user log (``UserLogWriter``), also for
  jobs that have just left the queue, and logs the core's warnings (a job whose
  periodic expressions cannot be evaluated, a transform that failed);
* arms the daemon's timer from the core's ``next_deadline`` and calls its
  ``handle_timer``;
* runs the local and scheduler universe jobs the core starts (``StartLocalJob``,
  ``StopLocalJob``) with the execute point's starters (``runtime/local_universe.py``),
  handing their reports back to the core one at a time, in order.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from htcpool.classad import ClassAd
from htcpool.clock import local_zone
from htcpool.config import Config
from htcpool.gcpause import paused_gc
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    HistoryQuery,
    Ok,
    ReconnectReply,
    Reschedule,
    Submit,
)
from htcpool.protocol.schedd import SubmitFactory
from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.joblog import UserLogWriter
from htcpool.runtime.local_universe import LocalUniverse
from htcpool.runtime.store import SqliteQueueStore
from htcpool.schedd import (
    Action,
    AskStartd,
    LocalJobReport,
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
from htcpool.schedd.commands import public
from htcpool.schedd.core import REQUEST_TYPES
from htcpool.schedd.store import JobId

log = logging.getLogger("htcpool.schedd")
RECONNECT_TIMEOUT = 3.0  # seconds to wait for a startd's answer about a claim


class RecordingStore:
    """The SQLite store, remembering the ads of jobs that leave for their last log events."""

    def __init__(self, store: SqliteQueueStore, logs: UserLogWriter) -> None:
        self.store = store
        self.logs = logs

    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        self.store.save_job(job_id, ad)

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
        self.name = config.get_str("SCHEDD_NAME") or f"{getpass.getuser()}@{host}"
        self.zone = local_zone()
        daemon.layout.spool.mkdir(parents=True, exist_ok=True)
        self.store = SqliteQueueStore(str(daemon.layout.spool / "job_queue.db"))
        self.logs = UserLogWriter(self.zone)
        jobs, next_cluster = self.store.load()
        self.core = Schedd(settings_for_schedd(config, self.name, "", self.zone), daemon.clock(),
                           store=RecordingStore(self.store, self.logs), jobs=jobs,
                           next_cluster=next_cluster, host=host, schedd_is_root=os.geteuid() == 0,
                           factories=self.store.load_factories())
        self.local = LocalUniverse(_local_execute(daemon), daemon.layout.log / "LocalStarterLog",
                                   self._local_report, daemon.clock)
        self._local_reports: asyncio.Queue[LocalJobReport] = asyncio.Queue()
        self._local_task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self._requests: dict[type, Callable[[Any, float], Awaitable[Any]]] = {
            **{message_type: self._to_core for message_type in REQUEST_TYPES},
            Submit: self._submit,
            SubmitFactory: self._submit,
            HistoryQuery: self._history,
            DaemonCommand: self._command,
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
        outcome = self.core.start(self.daemon.clock(), self.daemon.url, self.daemon.sinful)
        await self._carry(outcome.actions)
        self._log_problems()
        self._flush_logs()
        self.ready.set()

    async def stop(self, how: str) -> None:
        await self.local.close()
        if self._local_task is not None:
            self._local_task.cancel()
        await self._carry(self.core.stop().actions)
        await asyncio.sleep(0.1)
        self.store.close()

    # ------------------------------------------------------------------ requests
    async def handle(self, message: Any) -> Any:
        await self.ready.wait()
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
        outcome = self.core.handle(message, now)
        await self._carry(outcome.actions)
        return outcome.reply

    async def _submit(self, message: Submit | SubmitFactory, now: float) -> Any:
        with self.store.batch(), paused_gc():  # the whole cluster is one durable transaction
            outcome = self.core.handle(message, now)
        await self._carry(outcome.actions)
        return outcome.reply

    async def _history(self, message: HistoryQuery, now: float) -> AdList:
        try:
            ads = self.store.history(message.constraint or None, message.limit or None,
                                     context=self.core.queue.context(now))
        except Exception as e:
            raise RequestRefused(400, str(e)) from None
        return AdList(tuple(public(ad) for ad in ads))

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
        self.daemon.outbox.post(action.address, action.message)

    async def _to_negotiator(self, action: ToNegotiator) -> None:
        url = self.daemon.address_of("negotiator")
        if url is not None:
            self.daemon.outbox.post(url, action.message)

    async def _to_collector(self, action: ToCollector) -> None:
        self.daemon.to_collector(action.message)

    async def _ask_startd(self, action: AskStartd) -> None:
        claim_id = action.message.claim_id
        try:
            reply = await self.daemon.client.send(action.address, action.message, timeout=RECONNECT_TIMEOUT)
        except (httpx.HTTPError, OSError, RequestRefused) as e:
            log.info("claim %s: startd %s unreachable (%s); waiting for the job's lease",
                     claim_id, action.address, e)
            reply = None
        answer = reply if isinstance(reply, ReconnectReply) else StartdUnreachable(claim_id)
        if isinstance(answer, ReconnectReply) and answer.alive:
            log.info("claim %s still alive on %s: reconnecting", claim_id, answer.slot)
        await self._carry(self.core.handle(answer, self.daemon.clock()).actions)

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
            try:
                await self._carry(self.core.handle(report, self.daemon.clock()).actions)
            except ScheddError as e:
                log.warning("local run %s: %s", report.update.claim_id, e)
            finally:
                self._flush_logs()
                self.daemon.poke()

    def _flush_logs(self) -> None:
        # a queued job without a log has nothing to write; each log is opened once per flush
        self.logs.write_all((event, ad) for event, ad in self.core.take_log_events()
                            if ad is None or "UserLog" in ad)
        for warning in self.core.take_warnings():
            log.warning("%s", warning)

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> float | None:
        return self.core.next_deadline(self.daemon.clock())

    async def on_timer(self, now: float) -> None:
        await self.ready.wait()
        try:
            periodic_due = now >= self.core.queue.next_deadline(now)
            started = time.perf_counter()
            outcome = self.core.handle_timer(now)
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


def _local_execute(daemon: Daemon) -> Path:
    """Where local runs get their scratch directories: ``LOCAL_UNIV_EXECUTE``, by default
    ``local_univ_execute`` in the spool directory."""
    configured = daemon.config.get_str("LOCAL_UNIV_EXECUTE") \
        if daemon.config.is_defined("LOCAL_UNIV_EXECUTE") else None
    return Path(configured) if configured else daemon.layout.spool / "local_univ_execute"


def _read_file(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


__all__ = ["RecordingStore", "ScheddService", "settings_for_schedd"]
