"""The negotiator daemon: the negotiation cycle and the accountant over the protocol.

A cycle runs every ``NEGOTIATOR_INTERVAL`` seconds and, after a ``Reschedule``
(new jobs, a freed claim), as soon as ``NEGOTIATOR_MIN_INTERVAL`` allows. It:

1. reads the slot ads (with their private claim ids) and the submitter ads
   from the collector;
2. asks each schedd for its submitters' idle jobs (``FetchRequests``) and folds
   them into autoclusters (``SIGNIFICANT_ATTRIBUTES``);
3. runs ``htcpool.negotiator.negotiate`` with the accountant;
4. sends every match to its schedd (``MatchInfo`` with the claim id: the slot's
   own for an idle slot or a partitionable slot, the pre-made preempting id for
   a Rank or priority preemption, plus the claim ids of dynamic slots a
   partitionable-slot preemption frees) and tells the startd (``MatchNotification``);
5. commits the accountant to SQLite (synchronous) and publishes the
   ``Negotiator`` ad with the cycle statistics.

``condor_userprio`` reads accounting records (``UserprioQuery``) and changes
them (``UserprioCommand``); every change is committed before the answer.
"""

from __future__ import annotations

import getpass
import logging
import time
from collections import defaultdict
from typing import Any

import httpx

from htcpool.classad import ClassAd
from htcpool.negotiator import (
    Accountant,
    AutoclusterTable,
    CycleStatsHistory,
    GroupTree,
    PreemptState,
    RoundRobinTimes,
    SubmitterAd,
    accounting_ads,
    negotiate,
    policy_from_config,
    resource_requests,
    significant_attributes,
)
from htcpool.negotiator.policy import autocluster_policy_from_config
from htcpool.protocol import (
    DaemonCommand,
    FetchRequests,
    IdleJobs,
    MatchInfo,
    Ok,
    QueryAds,
    Records,
    Reschedule,
    UpdateAd,
    UserprioCommand,
    UserprioQuery,
)
from htcpool.protocol.startd import MatchNotification
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
        self.round_robin = RoundRobinTimes()
        self.history = CycleStatsHistory(self.policy.cycle_stats_length)
        now = daemon.clock()
        self.next_cycle = now + 1.0
        self.last_cycle_end = 0.0
        self.host = daemon.config.get_str("FULL_HOSTNAME") or "localhost"
        self.started = daemon.clock()

    def _read_policy(self) -> None:
        config = self.daemon.config
        self.policy = policy_from_config(config)
        self.autocluster_policy = autocluster_policy_from_config(config)
        self.interval = float(config.get_int("NEGOTIATOR_INTERVAL") or 60)
        min_interval = config.get_float("NEGOTIATOR_MIN_INTERVAL")
        self.min_interval = float(min_interval) if min_interval is not None else 5.0
        self.groups = GroupTree(self.policy.groups) if self.policy.groups.groups else None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self._advertise({})

    async def stop(self, how: str) -> None:
        self.accountant.commit()
        self.store.close()

    def _advertise(self, stats: dict[str, Any]) -> None:
        name = self.daemon.config.get_str("NEGOTIATOR_NAME") or f"{getpass.getuser()}@{self.host}"
        ad = ClassAd({"MyType": "Negotiator", "Name": name, "Machine": self.host,
                      "NegotiatorIpAddr": self.daemon.sinful, "DaemonStartTime": int(self.started),
                      "MyAddress": self.daemon.url, "NegotiatorInterval": int(self.interval), **stats})
        self.daemon.to_collector(UpdateAd(ad))

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        now = self.daemon.clock()
        if isinstance(message, Reschedule):
            soonest = max(now, self.last_cycle_end + self.min_interval)
            if soonest < self.next_cycle:
                self.next_cycle = soonest
                self.daemon.poke()
            return Ok()
        if isinstance(message, UserprioQuery):
            self.accountant.update_priorities(now)
            self.accountant.commit()
            rows = accounting_ads(self.accountant, self.groups, now)
            return Records(tuple(rows))
        if isinstance(message, UserprioCommand):
            self._userprio(message, now)
            self.accountant.commit()
            return Ok()
        if isinstance(message, DaemonCommand):
            if message.command == "off":
                self.daemon.request_stop(message.how)
                return Ok()
            if message.command == "reconfig":
                self.daemon.config = _reread(self.daemon)
                self._read_policy()
                return Ok("reconfigured")
        raise RequestRefused(400, f"the negotiator does not take {type(message).__name__}")

    def _userprio(self, c: UserprioCommand, now: float) -> None:
        acc = self.accountant
        lease = {"now": now, "duration": c.duration} if c.duration > 0 else {}
        if c.op in ("setfactor", "setprio", "setaccum", "setbegin", "setlast", "setceiling", "setfloor",
                    "resetusage", "delete") and not c.name:
            raise RequestRefused(400, f"-{c.op} needs a user or group name")
        if c.op == "setfactor":
            if c.value < 1:
                raise RequestRefused(400, "The priority factor must be greater than or equal to 1.")
            acc.set_priority_factor(c.name, c.value, **lease)
        elif c.op == "setceiling":
            acc.set_ceiling(c.name, c.value, **lease)
        elif c.op == "setfloor":
            acc.set_floor(c.name, c.value, **lease)
        elif c.op == "setprio":
            if c.value < 0.5:
                raise RequestRefused(400, "The priority must be at least 0.5.")
            acc.set_priority(c.name, c.value)
        elif c.op == "setaccum":
            acc.set_accumulated_usage(c.name, c.value)
        elif c.op == "setbegin":
            acc.set_begin_usage_time(c.name, c.value)
        elif c.op == "setlast":
            acc.set_last_usage_time(c.name, c.value)
        elif c.op == "resetusage":
            acc.reset_usage(c.name, now)
        elif c.op == "resetall":
            acc.reset_all_usage(now)
        elif c.op == "delete":
            acc.delete(c.name)
        else:
            raise RequestRefused(400, f"unknown userprio operation {c.op!r}")

    # ------------------------------------------------------------------ the cycle
    def next_deadline(self) -> float | None:
        return self.next_cycle

    async def on_timer(self, now: float) -> None:
        if now < self.next_cycle:
            return
        self.next_cycle = now + self.interval
        try:
            await self.cycle(now)
        finally:
            self.last_cycle_end = self.daemon.clock()
            self.next_cycle = max(self.next_cycle, self.last_cycle_end + self.min_interval)

    async def _fetch(self, url: str, names: tuple[str, ...]) -> dict[str, list[ClassAd]]:
        """The idle jobs of a schedd's submitters, by submitter."""
        try:
            reply = await self.daemon.client.send(url, FetchRequests(names))
        except (httpx.HTTPError, OSError, RequestRefused) as e:
            log.warning("schedd %s did not answer: %s", url, e)
            return {}
        per: dict[str, list[ClassAd]] = defaultdict(list)
        if isinstance(reply, IdleJobs):
            for name, ad in zip(reply.submitters, reply.ads, strict=False):
                per[name].append(ad)
        return per

    async def cycle(self, now: float) -> int:
        """One negotiation cycle; returns the number of matches."""
        slots = await self.daemon.collector_query(QueryAds("Machine", private=True))
        submitter_ads = await self.daemon.collector_query(QueryAds("Submitter"))
        by_schedd: dict[str, list[ClassAd]] = defaultdict(list)
        for ad in submitter_ads:
            url = ad.get("MyAddress")
            if isinstance(url, str) and (_int(ad.get("IdleJobs")) > 0 or _int(ad.get("RunningJobs")) > 0):
                by_schedd[url].append(ad)
        table = AutoclusterTable(significant_attributes(slots, self.policy), self.autocluster_policy)
        submitters: list[SubmitterAd] = []
        for url, ads in by_schedd.items():
            names = tuple(str(a["Name"]) for a in ads)
            per = await self._fetch(url, names) if any(_int(a.get("IdleJobs")) for a in ads) else {}
            for ad in ads:
                name = str(ad["Name"])
                submitters.append(SubmitterAd(
                    name, schedd=url, requests=resource_requests(per.get(name, []), table),
                    running_jobs=_int(ad.get("RunningJobs"))))
        started = time.monotonic()
        outcome = negotiate(now, slots, submitters, self.accountant, self.policy, groups=self.groups,
                            timer=time.monotonic, round_robin=self.round_robin)
        self.round_robin = outcome.round_robin
        if outcome.groups is not None:
            self.groups = outcome.groups
        self.accountant.commit()
        by_name = {str(s.get("Name")): s for s in slots}
        for match in outcome.result.matches:
            self._send_match(match, by_name)
        self.history.record(outcome.stats)
        self._advertise(self.history.attributes())
        log.info("cycle: %d slots, %d submitters, %d matches in %.3f s", len(slots), len(submitters),
                 len(outcome.result.matches), time.monotonic() - started)
        return len(outcome.result.matches)

    def _send_match(self, match: Any, slots: dict[str, ClassAd]) -> None:
        slot = slots.get(match.slot)
        if slot is None:
            return
        preempting = match.reason != PreemptState.NONE and not match.preempted_dslots \
            and not _is_partitionable(slot)
        claim_id = slot.get("PreemptClaimId" if preempting else "ClaimId")
        startd = slot.get("MyAddress")
        if not isinstance(claim_id, str) or not isinstance(startd, str):
            log.warning("slot %s has no claim id or address; match dropped", match.slot)
            return
        freed = tuple(str(slots[d].get("ClaimId")) for d in match.preempted_dslots
                      if d in slots and isinstance(slots[d].get("ClaimId"), str))
        public = slot.copy()
        for attr in ("ClaimId", "PreemptClaimId"):
            if attr in public:
                del public[attr]
        self.daemon.outbox.post(startd, MatchNotification(claim_id))
        self.daemon.outbox.post(match.schedd, MatchInfo(claim_id, public, match.job[0], match.job[1],
                                                        match.submitter, freed))


def _is_partitionable(slot: ClassAd) -> bool:
    return slot.get("PartitionableSlot") is True


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _reread(daemon: Daemon) -> Any:
    from htcpool.runtime.daemon import daemon_config
    return daemon_config(daemon.layout, daemon.name.upper())
