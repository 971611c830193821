"""What a negotiation cycle reads of a slot's own state, once per version of its ad.

Every pass of a cycle over the pool's slots (the Name check, the accountant's recount, the
pool's size, the concurrency limits' count, the trim of step 3 and the placing of settled claims in the slot table) reads a
few attributes of each slot: its state and activity, whether it is partitionable or dynamic,
its user, its rank, its retirement. ``SlotState`` holds what those reads give, worked out by
the very functions the passes call (``literal``, ``current_rank``, ``settled_claim`` …).

``slot_state`` keeps it in the ad's ``SlotFacts`` (``slotmemo``) when every attribute it reads
is a literal: it is then a pure function of the ad, and the memo hands an unchanged ad back as
the same object, so the next cycle reads it without looking at the ad again. A slot with an
expression among those attributes (its value may follow the clock) is read afresh each cycle,
as before. Most slots of a busy pool are claims that change only when their job does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from htcpool.classad import ClassAd, EvalContext
from htcpool.negotiator.accountant import CLAIMED_LIKE, remote_user_of
from htcpool.negotiator.exprinfo import literal, number
from htcpool.negotiator.limits import consumes_limits
from htcpool.negotiator.poolsize import effective_cpus, ghost_multiplier
from htcpool.negotiator.slotclasses import SlotTable, current_rank, remote_user_for_preemption
from htcpool.negotiator.slotmemo import UNKNOWN, SlotFacts, literal_only

__all__ = ["READ_NAMES", "SlotState", "charged_customer", "read_state", "slot_state", "slot_states"]

#: every (lower-cased) attribute ``read_state`` reads
READ_NAMES = (
    "name", "state", "activity", "partitionableslot", "dynamicslot", "retirementtimeremaining", "numclaims",
    "preemptingrank", "preemptinguser", "preemptingaccountinggroup", "currentrank", "rank",
    "accountinggroup", "remoteuser", "ghostmultiplier", "cpus",
)


class SlotState(NamedTuple):
    named: bool  # its Name is a string (a cycle leaves out the others)
    state: object  # State
    activity: object  # Activity
    claimed: bool  # State is claimed-like (Claimed, Preempting)
    pslot: bool  # PartitionableSlot
    dslot: bool  # DynamicSlot
    retiring: bool  # RetirementTimeRemaining above 0
    no_claims: bool  # NumClaims (1 when absent) at most 0
    pending: bool  # a preemption is pending (Preempting… attributes)
    current_rank: float  # ``slotclasses.current_rank``
    settled: bool  # ``SlotTable.settled_claim`` with that rank
    preempt_user: str | None  # ``slotclasses.remote_user_for_preemption``
    customer: str | None  # ``accountant.remote_user_of``
    multiplier: int  # GhostMultiplier (``poolsize``)
    effective: int  # the cpus a p-slot counts for in the pool's size (``poolsize``)
    limits: bool  # it has an attribute that concurrency limits are counted from (``limits``)
    #: a claim running a job, no p-slot, no preemption pending, settled, with a user: a cycle that
    #: matches settled claims as the collector gave them counts it (``NegotiationCycle._trim``)
    counted: bool


def read_state(ad: ClassAd, context: EvalContext) -> SlotState:
    """The slot's state, read now (expressions evaluated in ``context``, the cycle's)."""
    exprs = ad._exprs
    state = literal(ad, "State", context)
    activity = literal(ad, "Activity", context)
    rank = current_rank(ad, context)
    claimed = state in CLAIMED_LIKE
    pslot = literal(ad, "PartitionableSlot", context) is True
    pending = "preemptingrank" in exprs or "preemptinguser" in exprs or "preemptingaccountinggroup" in exprs
    settled = SlotTable.settled_claim(ad, rank)
    preempt_user = remote_user_for_preemption(ad, context)
    return SlotState(
        named=type(literal(ad, "Name", context)) is str,
        state=state,
        activity=activity,
        claimed=claimed,
        pslot=pslot,
        dslot=literal(ad, "DynamicSlot", context) is True,
        retiring=(number(literal(ad, "RetirementTimeRemaining", context, 0)) or 0) > 0,
        no_claims=(number(literal(ad, "NumClaims", context, 1)) or 0) <= 0,
        pending=pending,
        current_rank=rank,
        settled=settled,
        preempt_user=preempt_user,
        customer=remote_user_of(ad, context),
        multiplier=ghost_multiplier(ad, context),
        effective=effective_cpus(ad, context),
        limits=consumes_limits(ad),
        counted=claimed and not pslot and not (state == "Claimed" and activity == "Idle") and not pending
        and settled and preempt_user is not None,
    )


def slot_state(facts: SlotFacts, context: EvalContext) -> SlotState:
    """The state of the ad of ``facts``: kept there when it follows from the ad's literals alone."""
    found = facts.state
    if found is UNKNOWN:
        found = read_state(facts.ad, context)
        if literal_only(facts.ad, READ_NAMES):
            facts.state = found
    return found


def slot_states(facts: Sequence[SlotFacts], context: EvalContext) -> list[SlotState]:
    """``slot_state`` of each of ``facts``, in one loop."""
    out = []
    for f in facts:
        found = f.state
        out.append(slot_state(f, context) if found is UNKNOWN else found)
    return out


def charged_customer(state: SlotState, discount_suspended: bool) -> str | None:
    """Whom the accountant charges for the slot (``accountant.is_claimed`` and
    ``remote_user_of``), or None."""
    if not state.claimed:  # claimed-like: State is one of the (string) claimed-like states
        return None
    if discount_suspended and type(state.activity) is str and state.activity.lower() == "suspended":
        return None
    return state.customer
