"""The accountant: real and effective user priorities, usage, and the records behind them.

Rules of this module (HTCondor 25's ``Accountant.cpp``; the HTCondor manual's "Priority
Calculation" in "User Priorities and Negotiation"):

* One ``CustomerRecord`` per submitter (``user@domain``, or ``group.user@domain``) and per
  accounting group (its full name, ``<none>`` for the root). Names are case-sensitive keys.
* Times are whole seconds, as HTCondor's clock counts them: ``now`` is rounded down, so updates a
  fraction of a second apart lose nothing (the next whole second is counted by the next update)
  and a match is charged from the whole second it was made in.
* ``update_priorities(now)`` is the half-life step: with Δ = now − last update and
  β = 0.5^(Δ/PRIORITY_HALFLIFE), RUP' = max(0.5, β·RUP + (1−β)·ρ), where ρ is the weighted usage
  charged for the interval (a group uses its hierarchical usage). Accumulated usage grows by
  usage·Δ; ``BeginUsageTime``/``LastUsageTime`` are stamped. A Δ ≤ 0 changes nothing.
* ``check_matches(slots, now)`` recounts usage from the claimed slots of the pool, every cycle:
  a slot in a claimed-like state (``CLAIMED_LIKE``: Claimed or Preempting) with ``AccountingGroup``
  or ``RemoteUser`` is charged its ``SlotWeight`` (suspended slots too, unless
  NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES).
  ``ResourcesUsed`` and ``HierWeightedResourcesUsed`` are recounted as well (HTCondor only ever
  grows them, a defect not copied).
* ``add_match`` charges a match made during the cycle at once, so shares see live usage.
* EUP = RUP × factor; the factor is chosen once per record (nice user, group factor, remote user,
  default, in that order) and then sticks, as in HTCondor.
* Ceiling, floor and priority factor can be leased for a duration (``-duration``): the value
  replaced is kept and comes back when ``expire_leases(now)`` finds the lease over (each cycle
  starts with it); a second lease while one runs is refused (``Accountant.cpp``'s lease setters).
* Every change is committed to the ``AccountantStore`` (if any) as one transaction, so a live
  driver can persist the state and reload it without loss (``records.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from htcpool.classad import ClassAd, EvalContext, ExprTree, as_number, fixed_clock
from htcpool.classad.nodes import AttrRef, Literal, Node
from htcpool.negotiator.errors import NegotiatorUsageError
from htcpool.negotiator.exprinfo import literal
from htcpool.negotiator.records import LEASED, AccountantSnapshot, AccountantStore, CustomerRecord
from htcpool.negotiator.settings import ROOT_GROUP, AccountantPolicy
from htcpool.startd import CLAIMED_LIKE as CLAIMED_LIKE_STATES

MIN_PRIORITY = 0.5  # HTCondor's constant minimum RUP; not configurable
#: the largest size of a number a record may hold (a factor, weighted seconds, a time): about 30
#: million years of one core, far past any real pool and far below where EUP = RUP x factor would
#: overflow to infinity (the pie's 1/EUP would then be 0)
MAX_RECORD_VALUE = 1e15
#: the slot states (``State`` of a slot ad) in which a slot holds a claim: the accountant charges
#: such a slot to its user, and the cycle considers it only for preemption. The startd core's
#: one definition, as the names its slot ads carry.
CLAIMED_LIKE = frozenset(state.value for state in CLAIMED_LIKE_STATES)


def remote_user_of(slot: ClassAd, context: EvalContext) -> str | None:
    """The customer a claimed slot is charged to: ``AccountingGroup``, else ``RemoteUser``."""
    for attr in ("AccountingGroup", "RemoteUser"):
        v = literal(slot, attr, context)
        if type(v) is str and v:
            return v
    return None


def is_claimed(slot: ClassAd, discount_suspended: bool, context: EvalContext) -> bool:
    """Whether the accountant charges this slot (``Accountant::IsClaimed``)."""
    state = literal(slot, "State", context)
    if type(state) is not str or state not in CLAIMED_LIKE:
        return False
    if discount_suspended:
        activity = slot.evaluate("Activity", context)
        if type(activity) is str and activity.lower() == "suspended":
            return False
    return remote_user_of(slot, context) is not None


def _own_weight(exprs: dict[str, Node]) -> Node | None:
    """A slot's own ``SlotWeight`` node; the startd's ``SlotWeight = Cpus`` as the literal it names."""
    own = exprs.get("slotweight")
    if type(own) is AttrRef and own.base is None and not own.absolute:
        named = exprs.get(own.key)
        if type(named) is Literal:
            return named
    return own


class SlotWeigher:
    """``SlotWeight`` of a slot ad, with the negotiator's fallback to ``SLOT_WEIGHT``."""

    def __init__(self, policy: AccountantPolicy, context: EvalContext) -> None:
        self.use = policy.use_slot_weights
        self.force = policy.force_negotiator_slot_weight
        self.expr = ExprTree(policy.slot_weight)
        self.context = context
        node = self.expr.node
        #: SLOT_WEIGHT as a plain attribute name (``Cpus``), read directly when the slot defines it
        self.attribute = (
            node.key if type(node) is AttrRef and node.base is None and not node.absolute else None
        )
        #: what tells this weigher's results from another's (``SlotFacts.weight`` keeps one under it)
        self.key = (self.use, self.force, policy.slot_weight)

    def literal_only(self, slot: ClassAd) -> bool:
        """Whether ``self(slot)`` follows from the slot's literals alone: it evaluates nothing, so
        it is the same at any time for the same ad (``__call__``'s branches, without reading)."""
        if not self.use:
            return True
        exprs = slot._exprs
        own = None if self.force else _own_weight(exprs)
        if own is not None:
            if type(own) is not Literal:
                return False
            if as_number(own.value) is not None:
                return True
        return type(exprs.get(self.attribute) if self.attribute is not None else None) is Literal

    def __call__(self, slot: ClassAd) -> float:
        if not self.use:
            return 1.0
        exprs = slot._exprs
        v = None
        own = None if self.force else _own_weight(exprs)
        if own is not None:
            v = as_number(own.value if type(own) is Literal else slot.evaluate("SlotWeight", self.context))
        if v is None:
            node = exprs.get(self.attribute) if self.attribute is not None else None
            if type(node) is Literal:
                v = as_number(node.value)
            else:
                v = as_number(self.expr.evaluate(slot, None, self.context))
        if v is None or v < 0:
            return 1.0
        return float(v)


class Accountant:
    """The table of customer records and the operations on it. All times are passed in."""

    def __init__(
        self,
        policy: AccountantPolicy | None = None,
        store: AccountantStore | None = None,
        assigned_group: Callable[[str], str] | None = None,
    ) -> None:
        self.policy = policy or AccountantPolicy()
        self.store = store
        self.records: dict[str, CustomerRecord] = {}
        self.last_update_time = 0.0
        #: maps a submitter name to its group (``<none>`` if ungrouped); set by the group tree
        self.assigned_group: Callable[[str], str] = assigned_group or (lambda name: ROOT_GROUP)
        self._dirty: set[str] = set()
        self._deleted: set[str] = set()
        if store is not None:
            self.restore(store.load())

    # ----------------------------------------------------------- persistence
    def snapshot(self) -> AccountantSnapshot:
        return AccountantSnapshot(self.last_update_time, tuple(r.copy() for r in self.records.values()))

    def restore(self, snap: AccountantSnapshot) -> None:
        self.last_update_time = snap.last_update_time
        self.records = {r.name: r.copy() for r in snap.records}

    def commit(self) -> None:
        """Hand the changes since the last commit to the store, as one transaction."""
        if self.store is not None and (self._dirty or self._deleted):
            changed = [self.records[n].copy() for n in sorted(self._dirty) if n in self.records]
            self.store.commit(self.last_update_time, changed, sorted(self._deleted - self._dirty))
        self._dirty.clear()
        self._deleted.clear()

    def _touch(self, rec: CustomerRecord) -> None:
        self._dirty.add(rec.name)

    # ----------------------------------------------------------- records and factors
    def record(self, name: str) -> CustomerRecord:
        """The record of ``name``, created with defaults on first use (``GetPriority``)."""
        rec = self.records.get(name)
        if rec is None:
            rec = CustomerRecord(name)
            self.records[name] = rec
            self._touch(rec)
        if rec.priority_factor < 1.0:
            rec.priority_factor = self.default_factor(name)
            self._touch(rec)
        if rec.priority < MIN_PRIORITY:
            rec.priority = MIN_PRIORITY
            self._touch(rec)
        return rec

    def default_factor(self, name: str) -> float:
        """The factor a new record gets: nice user, group factor, remote user, default; never
        more than ``MAX_RECORD_VALUE`` whatever the configuration says."""
        return min(self._configured_factor(name), MAX_RECORD_VALUE)

    def _configured_factor(self, name: str) -> float:
        p = self.policy
        if name.startswith(p.nice_user_prefix):
            return p.nice_user_prio_factor
        group = name if "@" not in name else self.assigned_group(name)
        g = p.group_prio_factors.get(group.lower(), 0.0)
        if g:
            return g
        if p.accountant_local_domain and "@" in name:
            if name.rsplit("@", 1)[1] != p.accountant_local_domain:
                return p.remote_prio_factor
        return p.default_prio_factor

    def priority_factor(self, name: str) -> float:
        return self.record(name).priority_factor

    def real_priority(self, name: str) -> float:
        return self.record(name).priority

    def effective_priority(self, name: str) -> float:
        """EUP = RUP × factor."""
        rec = self.record(name)
        return rec.priority * rec.priority_factor

    def weighted_usage(self, name: str) -> float:
        rec = self.records.get(name)
        return rec.weighted_resources_used if rec is not None else 0.0

    # ----------------------------------------------------------- condor_userprio operations
    def set_priority_factor(self, name: str, factor: float, *, now: float | None = None,
                            duration: float | None = None) -> None:
        """``-setfactor``: values below 1 are raised to 1. With ``duration`` (``-duration``), a
        lease: the factor holds until ``now + duration``, then the previous one comes back."""
        if duration is not None:
            if factor < 1:
                raise NegotiatorUsageError(f"a leased priority factor must be at least 1: {factor}")
            self._lease(name, "priority_factor", float(factor), now, duration)
            return
        self.record(name).priority_factor = max(1.0, float(factor))
        self._dirty.add(name)
        self.commit()

    def set_priority(self, name: str, priority: float) -> None:
        """``-setprio``: writes the RUP; reads clamp it to at least 0.5."""
        rec = self.records.get(name) or self.record(name)
        rec.priority = float(priority)
        self._dirty.add(name)
        self.commit()

    def set_accumulated_usage(self, name: str, usage: float) -> None:
        """``-setaccum``: sets ``WeightedAccumulatedUsage`` (seconds) only."""
        if usage < 0:
            raise NegotiatorUsageError(f"accumulated usage must not be negative: {usage}")
        self.record(name).weighted_accumulated_usage = float(usage)
        self._dirty.add(name)
        self.commit()

    def set_begin_usage_time(self, name: str, t: float) -> None:
        self.record(name).begin_usage_time = float(t)
        self._dirty.add(name)
        self.commit()

    def set_last_usage_time(self, name: str, t: float) -> None:
        self.record(name).last_usage_time = float(t)
        self._dirty.add(name)
        self.commit()

    def set_ceiling(self, name: str, ceiling: float, *, now: float | None = None,
                    duration: float | None = None) -> None:
        """``-setceiling``: the most weighted usage the submitter may reach (-1: no ceiling);
        with ``duration``, a lease (see ``set_priority_factor``)."""
        if ceiling < -1:
            raise NegotiatorUsageError(f"ceiling must be -1 (none) or more: {ceiling}")
        if duration is not None:
            self._lease(name, "ceiling", float(ceiling), now, duration)
            return
        self.record(name).ceiling = float(ceiling)
        self._dirty.add(name)
        self.commit()

    def set_floor(self, name: str, floor: float, *, now: float | None = None,
                  duration: float | None = None) -> None:
        """``-setfloor``: the weighted usage the submitter is brought up to in a floor round first;
        with ``duration``, a lease."""
        if floor < 0:
            raise NegotiatorUsageError(f"floor must not be negative: {floor}")
        if duration is not None:
            self._lease(name, "floor", float(floor), now, duration)
            return
        self.record(name).floor = float(floor)
        self._dirty.add(name)
        self.commit()

    # ----------------------------------------------------------- leases (Accountant.cpp)
    def _lease(self, name: str, what: str, value: float, now: float | None, duration: float) -> None:
        if now is None:
            raise NegotiatorUsageError("a lease needs the time it starts")
        if duration <= 0:
            raise NegotiatorUsageError(f"a lease needs a positive duration: {duration}")
        rec = self.record(name)
        expiry_field, prior_field = LEASED[what]
        expiry = getattr(rec, expiry_field)
        if expiry and expiry > now:
            raise NegotiatorUsageError(f"{name} already has a {what.replace('_', ' ')} lease until {expiry:.0f}")
        setattr(rec, prior_field, getattr(rec, what))
        setattr(rec, expiry_field, float(now + duration))
        setattr(rec, what, value)
        self._dirty.add(name)
        self.commit()

    def cancel_lease(self, name: str, what: str) -> None:
        """End a lease on ``what`` (``ceiling``, ``floor`` or ``priority_factor``) now: the value
        before it comes back."""
        rec = self.records.get(name)
        expiry_field, prior_field = LEASED[what]
        if rec is None or not getattr(rec, expiry_field):
            raise NegotiatorUsageError(f"{name} has no {what.replace('_', ' ')} lease")
        self._end_lease(rec, what)
        self.commit()

    def _end_lease(self, rec: CustomerRecord, what: str) -> None:
        expiry_field, prior_field = LEASED[what]
        prior = getattr(rec, prior_field)
        if prior is not None:
            setattr(rec, what, prior)
        setattr(rec, expiry_field, 0.0)
        self._dirty.add(rec.name)

    def expire_leases(self, now: float) -> None:
        """Leases whose time is up give back the values they replaced (at the start of a cycle)."""
        for rec in self.records.values():
            for what, (expiry_field, _) in LEASED.items():
                expiry = getattr(rec, expiry_field)
                if expiry and expiry <= now:
                    self._end_lease(rec, what)
        self.commit()

    def reset_usage(self, name: str, now: float) -> None:
        """``-resetusage``: zero both accumulated usages, ``BeginUsageTime = now``; RUP untouched."""
        rec = self.record(name)
        rec.accumulated_usage = 0.0
        rec.weighted_accumulated_usage = 0.0
        rec.begin_usage_time = now
        self._dirty.add(name)
        self.commit()

    def reset_all_usage(self, now: float) -> None:
        """``-resetall``."""
        for name in list(self.records):
            rec = self.records[name]
            rec.accumulated_usage = 0.0
            rec.weighted_accumulated_usage = 0.0
            rec.begin_usage_time = now
            self._dirty.add(name)
        self.commit()

    def delete(self, name: str) -> None:
        """``-delete``: drop the record; it is recreated with defaults on the next read."""
        if name not in self.records:
            raise NegotiatorUsageError(f"no accountant record for {name!r}")
        del self.records[name]
        self._dirty.discard(name)
        self._deleted.add(name)
        self.commit()

    # ----------------------------------------------------------- the periodic update
    def update_priorities(self, now: float) -> None:
        """The half-life step over every record (``UpdatePriorities``)."""
        now = float(math.floor(now))  # HTCondor's clock: whole seconds
        delta = int(now - self.last_update_time) if self.last_update_time else 0
        if not self.last_update_time:
            self.last_update_time = now
            self.commit()
            return
        if delta == 0:
            return
        if delta < 0:
            self.last_update_time = now
            return
        halflife = max(self.policy.priority_halflife, 1e-5)
        beta = math.pow(0.5, delta / halflife)
        self.last_update_time = now
        for rec in self.records.values():
            p = max(rec.priority, MIN_PRIORITY)
            recent_w = rec.weighted_resources_used + rec.weighted_uncharged_time / delta
            if "@" not in rec.name:  # a group: its whole subtree's usage
                recent_w = rec.hier_weighted_resources_used + rec.weighted_uncharged_time / delta
            recent = rec.resources_used + rec.uncharged_time / delta
            new_p = max(MIN_PRIORITY, beta * p + (1.0 - beta) * recent_w)
            rec.priority = round(new_p, 6)
            rec.accumulated_usage += rec.resources_used * delta + rec.uncharged_time
            rec.weighted_accumulated_usage += (
                rec.weighted_resources_used * delta + rec.weighted_uncharged_time
            )
            if rec.accumulated_usage > 0 and not rec.begin_usage_time:
                rec.begin_usage_time = now
            if recent > 0:
                rec.last_usage_time = now
            rec.uncharged_time = 0.0
            rec.weighted_uncharged_time = 0.0
            self._dirty.add(rec.name)
        self.commit()

    # ----------------------------------------------------------- charging
    def check_matches(self, slots: Iterable[ClassAd], now: float, weights: Sequence[float] | None = None,
                      customers: Sequence[str | None] | None = None) -> None:
        """Recount every record's usage from the claimed slots of the pool (``CheckMatches``).
        ``weights``: the slots' ``SlotWeigher`` values at ``now``, when the caller has them;
        ``customers``: whom each slot is charged to (``is_claimed`` and ``remote_user_of``; None:
        nobody), when the caller has them."""
        for rec in self.records.values():
            if rec.resources_used or rec.weighted_resources_used or rec.hier_weighted_resources_used:
                rec.resources_used = 0
                rec.weighted_resources_used = 0.0
                rec.hier_weighted_resources_used = 0.0
                self._dirty.add(rec.name)
        context = EvalContext(clock=fixed_clock(now))
        weigh = SlotWeigher(self.policy, context)
        discount = self.policy.discount_suspended_resources
        elapsed = self._elapsed(now)
        #: per customer, the records a charge of theirs adds to (``_charge``), looked up once
        targets: dict[str, tuple[list[CustomerRecord], list[CustomerRecord]]] = {}
        for i, slot in enumerate(slots):
            if customers is not None:
                customer = customers[i]
                if customer is None:
                    continue
            elif is_claimed(slot, discount, context):
                customer = remote_user_of(slot, context)
                assert customer is not None
            else:
                continue
            weight = weigh(slot) if weights is None else weights[i]
            charged = targets.get(customer)
            if charged is None:
                charged = targets[customer] = self._targets(customer)
            self._add(charged, weight, elapsed)
        self.commit()

    def add_match(self, customer: str, weight: float, now: float) -> None:
        """Charge a match made now to ``customer`` and its groups (``AddMatch``)."""
        self._charge(customer, weight, now)

    def _charge(self, customer: str, weight: float, now: float) -> None:
        self._add(self._targets(customer), weight, self._elapsed(now))

    def _elapsed(self, now: float) -> float:
        return max(0.0, math.floor(now) - self.last_update_time) if self.last_update_time else 0.0

    def _targets(self, customer: str) -> tuple[list[CustomerRecord], list[CustomerRecord]]:
        """The records a charge of ``customer`` adds to: the customer's and its group's, and the
        group and its parents for the hierarchical usage (created on first use, in that order)."""
        group = customer if "@" not in customer else self.assigned_group(customer)
        direct = [self.record(customer)]
        if group != customer:
            direct.append(self.record(group))
        for rec in direct:
            self._dirty.add(rec.name)
        if group == ROOT_GROUP:
            return direct, [self.record(ROOT_GROUP)]
        parts = group.split(".")
        hier = []
        for i in range(len(parts), 0, -1):
            hier.append(self.record(".".join(parts[:i])))
            self._dirty.add(".".join(parts[:i]))
        return direct, hier

    @staticmethod
    def _add(targets: tuple[list[CustomerRecord], list[CustomerRecord]], weight: float, elapsed: float) -> None:
        direct, hier = targets
        for rec in direct:
            rec.resources_used += 1
            rec.weighted_resources_used += weight
            rec.uncharged_time -= elapsed
            rec.weighted_uncharged_time -= elapsed * weight
        for rec in hier:
            rec.hier_weighted_resources_used += weight

    # ----------------------------------------------------------- reporting
    def usage_by_name(self) -> Mapping[str, float]:
        return {n: r.weighted_resources_used for n, r in self.records.items()}
