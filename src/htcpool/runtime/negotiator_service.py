"""The negotiator daemon: the negotiation cycle and the accountant over the protocol.

The cycle's times come from the core's ``CycleSchedule``: every
``NEGOTIATOR_INTERVAL`` seconds and, after a ``Reschedule`` (new jobs, a freed
claim), as soon as ``NEGOTIATOR_MIN_INTERVAL`` allows; the service arms its
timer for ``next_deadline`` and runs the cycle when it is due. A cycle:

1. reads the slot ads (with their private claim ids) and the submitter ads
   from the collector;
2. asks each schedd for its submitters' idle jobs (``FetchRequests``) and folds
   them into autoclusters (``SIGNIFICANT_ATTRIBUTES``);
3. runs ``htcpool.negotiator.negotiate`` with the accountant, and logs what the
   cycle passed over because an expression could not be evaluated (its ``failures``);
4. sends what each match becomes (``negotiator.exchange.match_messages``):
   ``MatchInfo`` to the schedd and ``MatchNotification`` to the startd;
5. commits the accountant to SQLite (synchronous) and publishes the
   ``Negotiator`` ad with the cycle statistics.

Group quota knobs that cannot be used (a group without a quota, a quota that is not a number, a
missing parent …) are logged as warnings naming the knob whenever the configuration is read; the
other groups negotiate as configured.

``condor_userprio`` reads accounting records (``UserprioQuery``) and changes
them (``UserprioCommand``, carried out by the core's ``apply_userprio``); every
change is committed before the answer, and a change the accountant refuses is
answered with 400. Messages and administrative commands are dispatched by table.
"""

from __future__ import annotations

import getpass
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from htcpool.classad import ClassAd
from htcpool.negotiator import (
    Accountant,
    AutoclusterTable,
    CycleSchedule,
    CycleStatsHistory,
    GroupTree,
    NegotiatorUsageError,
    RoundRobinTimes,
    SubmitterAd,
    accounting_ads,
    apply_userprio,
    negotiate,
    policy_from_config,
    significant_attributes,
)
from htcpool.negotiator.exchange import (
    fetch_request,
    match_messages,
    submitter_entries,
    submitters_by_schedd,
)
from htcpool.negotiator.policy import autocluster_policy_from_config
from htcpool.protocol import (
    Command,
    DaemonCommand,
    FetchRequests,
    How,
    IdleJobs,
    Ok,
    QueryAds,
    Records,
    Reschedule,
    UpdateAd,
    UserprioCommand,
    UserprioQuery,
)
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.store import SqliteAccountantStore

log = logging.getLogger("htcpool.negotiator")


class NegotiatorService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._read_policy()
        daemon.layout.spool.mkdir(parents=True, exist_ok=True)
        self.store = SqliteAccountantStore(str(daemon.layout.spool / "accountant.db"))
        self.accountant = Accountant(self.policy.accountant, store=self.store)
        for problem in self.store.problems:  # damaged or unusable records: skipped or put back
            log.warning("accountant: %s", problem)
        self.round_robin = RoundRobinTimes()
        self.history = CycleStatsHistory(self.policy.cycle_stats_length)
        self.started = daemon.clock()
        self.schedule = CycleSchedule(self.started, self.policy.interval, self.policy.min_interval)
        self.handlers: dict[type, Callable[[Any, float], Awaitable[Any]]] = {
            Reschedule: self._reschedule,
            UserprioQuery: self._userprio_query,
            UserprioCommand: self._userprio_command,
            DaemonCommand: self._command,
        }
        self.commands: dict[Command, Callable[[DaemonCommand], Awaitable[Ok]]] = {
            Command.OFF: self._off,
            Command.RECONFIG: self._reconfig,
        }

    def _read_policy(self) -> None:
        config = self.daemon.config
        self.policy = policy_from_config(config)
        self.autocluster_policy = autocluster_policy_from_config(config)
        self.groups = GroupTree(self.policy.groups) if self.policy.groups.groups else None
        problems = self.groups.problems if self.groups is not None else self.policy.groups.problems
        for problem in problems:  # the groups that can be used still negotiate
            log.warning("group quotas: %s", problem)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self._advertise({})

    async def stop(self, how: How) -> None:
        self.accountant.commit()
        self.store.close()

    def _advertise(self, stats: dict[str, Any]) -> None:
        host = self.daemon.host
        name = self.daemon.config.get_str("NEGOTIATOR_NAME") or f"{getpass.getuser()}@{host}"
        ad = ClassAd({"MyType": "Negotiator", "Name": name, "Machine": host,
                      "NegotiatorIpAddr": self.daemon.sinful, "DaemonStartTime": int(self.started),
                      "MyAddress": self.daemon.url, "NegotiatorInterval": int(self.policy.interval), **stats})
        self.daemon.to_collector(UpdateAd(ad))

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        handler = self.handlers.get(type(message))
        if handler is None:
            raise RequestRefused(400, f"the negotiator does not take {type(message).__name__}")
        return await handler(message, self.daemon.clock())

    async def _reschedule(self, message: Reschedule, now: float) -> Ok:
        if self.schedule.reschedule(now):
            self.daemon.poke()
        return Ok()

    async def _userprio_query(self, message: UserprioQuery, now: float) -> Records:
        self.accountant.update_priorities(now)
        self.accountant.commit()
        return Records(tuple(accounting_ads(self.accountant, self.groups, now)))

    async def _userprio_command(self, message: UserprioCommand, now: float) -> Ok:
        try:
            apply_userprio(self.accountant, message, now)
        except NegotiatorUsageError as e:
            raise RequestRefused(400, str(e)) from None
        finally:
            self.accountant.commit()
        return Ok()

    async def _command(self, message: DaemonCommand, now: float) -> Ok:
        return await self.daemon.command_handler(self.commands, message)(message)

    async def _off(self, message: DaemonCommand) -> Ok:
        return self.daemon.stop_on_command(message)

    async def _reconfig(self, message: DaemonCommand) -> Ok:
        self.daemon.reread_config()
        self._read_policy()
        self.schedule.reconfigure(self.policy.interval, self.policy.min_interval)
        return Ok("reconfigured")

    # ------------------------------------------------------------------ the cycle
    def next_deadline(self) -> float | None:
        return self.schedule.next_deadline(self.daemon.clock())

    async def on_timer(self, now: float) -> None:
        if not self.schedule.due(now):
            return
        self.schedule.begin(now)
        try:
            await self.cycle(now)
        finally:
            self.schedule.end(self.daemon.clock())

    async def _fetch(self, url: str, request: FetchRequests) -> IdleJobs | None:
        """A schedd's answer to ``request``; None when it does not answer."""
        try:
            reply = await self.daemon.client.send(url, request)
        except (OSError, RequestRefused) as e:
            log.warning("schedd %s did not answer: %s", url, e)
            return None
        return reply if isinstance(reply, IdleJobs) else None

    async def _submitters(self, slots: list[ClassAd], now: float) -> list[SubmitterAd]:
        """Every submitter with work, its idle jobs fetched from its schedd."""
        by_schedd = submitters_by_schedd(await self.daemon.collector_query(QueryAds("Submitter")))
        table = AutoclusterTable(significant_attributes(slots, self.policy), self.autocluster_policy)
        submitters: list[SubmitterAd] = []
        for url, ads in by_schedd.items():
            request = fetch_request(ads)
            idle = await self._fetch(url, request) if request is not None else None
            submitters += submitter_entries(url, ads, idle, table, now)
        return submitters

    async def cycle(self, now: float) -> int:
        """One negotiation cycle; returns the number of matches."""
        slots = await self.daemon.collector_query(QueryAds("Machine", private=True))
        submitters = await self._submitters(slots, now)
        started = time.monotonic()
        outcome = negotiate(now, slots, submitters, self.accountant, self.policy, groups=self.groups,
                            timer=time.monotonic, round_robin=self.round_robin)
        self.round_robin = outcome.round_robin
        for failure in outcome.result.failures:
            log.warning("cycle: %s", failure)
        if outcome.groups is not None:
            self.groups = outcome.groups
        self.accountant.commit()
        by_name = outcome.slot_ads
        handed_out: set[str] = set()  # the ClaimIdList entries this cycle's matches took
        for match in outcome.result.matches:
            messages = match_messages(match, by_name, handed_out)
            if messages is None:
                log.warning("slot %s has no claim id or address; match dropped", match.slot)
                continue
            self.daemon.outbox.post(messages.startd, messages.notification)
            self.daemon.outbox.post(messages.schedd, messages.info)
        self.history.record(outcome.stats)
        self._advertise(self.history.attributes())
        log.info("cycle: %d slots, %d submitters, %d matches in %.3f s", len(slots), len(submitters),
                 len(outcome.result.matches), time.monotonic() - started)
        return len(outcome.result.matches)
