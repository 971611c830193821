"""The simulated central manager: the collector (``htcpool.collector.AdStore``) and the negotiator
(``htcpool.negotiator``), each doing what its live service does (``runtime/collector_service.py``,
``runtime/negotiator_service.py``) on the virtual clock.

Collector: ``UpdateAd`` and ``InvalidateAd`` change the store, ``QueryAds`` is answered from it,
ads expire at the store's ``next_deadline`` and the collector advertises itself every
``COLLECTOR_UPDATE_INTERVAL`` (at most ``CLASSAD_LIFETIME``).

Negotiator: the core's ``CycleSchedule`` says when a cycle runs (``NEGOTIATOR_INTERVAL``, and
``NEGOTIATOR_MIN_INTERVAL`` after a ``Reschedule``). A cycle reads the slot ads with their claim
ids (as the collector's shared snapshots, one object per version of an ad, so the negotiator's
``SlotMemo`` keeps what it worked out from the unchanged ones) and the submitter ads from the collector, asks each schedd for its submitters' idle jobs,
runs ``negotiate`` with the accountant and the group tree, and sends what each match becomes
(``negotiator.exchange``: ``MatchNotification`` to the startd, ``MatchInfo`` to the schedd). A
cycle takes no virtual time (its timer reads zero, so ``NEGOTIATOR_MAX_TIME_PER_*`` limits never
cut a cycle short, and the run stays deterministic). Observers (``on_cycle``) see each cycle's
outcome. The accountant starts empty, as on a new pool, or with the records of
``condor_userprio -long`` output (``--userprio``, read by ``userprio_file``), as the live pool's
accountant had them. Priority factors can also be set with the simulator's knob
``SIM_PRIORITY_FACTORS`` (``name:factor, …``; a name without ``@`` is a user at the accounting
domain, or a group), applied through ``apply_userprio`` as ``condor_userprio -setfactor`` would
after that state: a shortcut for sweeps over a factor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.classad import ClassAd
from htcpool.collector import AdStore
from htcpool.config import Config
from htcpool.negotiator import (
    Accountant,
    AutoclusterTable,
    CycleOutcome,
    CycleSchedule,
    GroupTree,
    RoundRobinTimes,
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
from htcpool.negotiator.records import AccountantSnapshot
from htcpool.negotiator.slotmemo import SlotMemo
from htcpool.protocol import (
    AdList,
    IdleJobs,
    InvalidateAd,
    Ok,
    QueryAds,
    Reschedule,
    UpdateAd,
    UserprioCommand,
)
from htcpool.protocol.negotiator import UserprioOp
from htcpool.sim.errors import SimInputError
from htcpool.sim.events import EventLoop
from htcpool.sim.transport import Transport

COLLECTOR = "sim://collector"
NEGOTIATOR = "sim://negotiator"


class CollectorDriver:
    def __init__(self, loop: EventLoop, transport: Transport, config: Config) -> None:
        self.loop = loop
        lifetime = float(config.get_int("CLASSAD_LIFETIME") or 900)
        self.store = AdStore(default_lifetime=lifetime)
        self.update_interval = max(1.0, min(float(config.get_int("COLLECTOR_UPDATE_INTERVAL") or 900), lifetime))
        self.started = loop.now
        self.next_advert = loop.now
        transport.register(COLLECTOR, self.receive)
        self.on_timer(loop.now)

    def receive(self, message: Any) -> Any:
        now = self.loop.now
        if isinstance(message, UpdateAd):
            self.store.update(message.ad, now, private=message.private)
        elif isinstance(message, InvalidateAd):
            self.store.invalidate(message.my_type, message.name or None, message.constraint or None, now=now)
        elif isinstance(message, QueryAds):
            return AdList(tuple(self.store.query(message.my_type, message.constraint or None,
                                                 list(message.projection) or None, now=now,
                                                 include_private=message.private, shared=message.private)))
        self.arm()
        return Ok()

    def arm(self) -> None:
        expiry = self.store.next_deadline()
        self.loop.arm(self, self.next_advert if expiry is None else min(expiry, self.next_advert), self.on_timer)

    def on_timer(self, now: float) -> None:
        if now >= self.next_advert:
            self.store.update(ClassAd({"MyType": "Collector", "Name": "collector@sim", "Machine": "sim",
                                       "MyAddress": COLLECTOR, "DaemonStartTime": int(self.started)}), now)
            self.next_advert = now + self.update_interval
        self.store.expire(now)
        self.arm()


class NegotiatorDriver:
    def __init__(self, loop: EventLoop, transport: Transport, config: Config, accounting_domain: str,
                 userprio: AccountantSnapshot | None = None) -> None:
        self.loop = loop
        self.transport = transport
        self.policy = policy_from_config(config)
        self.autocluster_policy = autocluster_policy_from_config(config)
        self.groups = GroupTree(self.policy.groups) if self.policy.groups.groups else None
        self.accountant = Accountant(self.policy.accountant)
        if userprio is not None:
            self.accountant.restore(userprio)
        self.round_robin = RoundRobinTimes()
        self.memo = SlotMemo()
        self.schedule = CycleSchedule(loop.now, self.policy.interval, self.policy.min_interval)
        self.cycles = 0
        self.matches = 0
        self.on_cycle: list[Callable[[float, CycleOutcome], None]] = []
        self._set_factors(config, accounting_domain)
        transport.register(NEGOTIATOR, self.receive)
        self.arm()

    def _set_factors(self, config: Config, domain: str) -> None:
        text = config.get_str("SIM_PRIORITY_FACTORS") or ""
        groups = {g.name.lower() for g in self.policy.groups.groups}
        for item in text.replace(",", " ").split():
            name, _, value = item.rpartition(":")
            try:
                factor = float(value)
            except ValueError:
                raise SimInputError("SIM_PRIORITY_FACTORS", None, f"{item!r} is not name:factor") from None
            if not name or factor < 1:
                raise SimInputError("SIM_PRIORITY_FACTORS", None, f"{item!r}: a name and a factor of at least 1")
            if "@" not in name and name.lower() not in groups and domain:
                name = f"{name}@{domain}"
            apply_userprio(self.accountant, UserprioCommand(UserprioOp.SETFACTOR, name, factor), self.loop.now)

    def receive(self, message: Any) -> Ok:
        if isinstance(message, Reschedule) and self.schedule.reschedule(self.loop.now):
            self.arm()
        return Ok()

    def arm(self) -> None:
        self.loop.arm(self, self.schedule.next_deadline(self.loop.now), self.on_timer)

    def on_timer(self, now: float) -> None:
        if self.schedule.due(now):
            self.schedule.begin(now)
            self.cycle(now)
            self.schedule.end(now)
        self.arm()

    def cycle(self, now: float) -> None:
        """One negotiation cycle (see the module docstring)."""
        slots = list(self._ask(QueryAds("Machine", private=True)))
        submitters = []
        self.memo.begin()
        table = AutoclusterTable(significant_attributes(slots, self.policy, self.memo), self.autocluster_policy)
        for url, ads in submitters_by_schedd(self._ask(QueryAds("Submitter"))).items():
            request = fetch_request(ads)
            idle = self.transport.ask(url, request) if request is not None else None
            submitters += submitter_entries(url, ads, idle if isinstance(idle, IdleJobs) else None, table, now)
        outcome = negotiate(now, slots, submitters, self.accountant, self.policy, groups=self.groups,
                            round_robin=self.round_robin, memo=self.memo)
        self.round_robin = outcome.round_robin
        if outcome.groups is not None:
            self.groups = outcome.groups
        by_name = outcome.slot_ads
        handed_out: set[str] = set()  # the ClaimIdList entries this cycle's matches took
        for match in outcome.result.matches:
            messages = match_messages(match, by_name, handed_out)
            if messages is None:
                continue
            self.transport.send(messages.startd, messages.notification)
            self.transport.send(messages.schedd, messages.info)
        self.cycles += 1
        self.matches += len(outcome.result.matches)
        for observer in self.on_cycle:
            observer(now, outcome)

    def _ask(self, query: QueryAds) -> tuple[ClassAd, ...]:
        reply = self.transport.ask(COLLECTOR, query)
        return reply.ads if isinstance(reply, AdList) else ()


__all__ = ["COLLECTOR", "NEGOTIATOR", "CollectorDriver", "NegotiatorDriver"]
