"""How big the pool is, for the pie and for group quotas.

Rules (HTCondor 25 ``negotiationTime``, ``sumSlotWeights``, ``count_effective_slots``):

* Every slot fetched counts, whatever its state, before trimming.
* A slot's weight for the pool size is its ``SlotWeight`` (1 with NEGOTIATOR_USE_SLOT_WEIGHTS
  false) times its integer ``GhostMultiplier`` (default 1: an offline ad can stand for many
  slots). The smallest such weight over all slots is the cycle's minimum slot weight.
* The *weighted* size is the sum of those weights, or the number of slots when weights are not
  used; the *effective* size counts a partitionable slot as its ``Cpus`` and any other slot as 1.
  The pie is the weighted size; group quotas share the weighted size, or the effective size when
  weights are not used.
* NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT (the obsolete name GROUP_DYNAMIC_MACH_CONSTRAINT is read too)
  restricts all three counts to the slots for which it evaluates to true (a non-zero number
  counts as true); when no slot satisfies it, all three are 0. The minimum slot weight still
  comes from every slot. The constraint changes only the sizes: every slot can still be matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.negotiator.exprinfo import literal, number
from htcpool.negotiator.slotclasses import truth

__all__ = ["PoolSize", "effective_cpus", "ghost_multiplier", "pool_size"]


@dataclass(frozen=True)
class PoolSize:
    slots: int  # slots counted (HTCondor's cPoolsize)
    weighted: float  # the pie: weightedPoolsize
    effective: int  # effectivePoolsize: p-slots by their Cpus
    min_slot_weight: float  # over every slot, constraint or not

    def quota_total(self, use_slot_weights: bool) -> float:
        """What group quotas are shares of (``hgq_total_quota``)."""
        return self.weighted if use_slot_weights else float(self.effective)


def ghost_multiplier(slot: ClassAd, context: EvalContext) -> int:
    """The slot's ``GhostMultiplier`` (1 when it has none)."""
    v = number(literal(slot, "GhostMultiplier", context))
    return int(v) if v is not None else 1


def effective_cpus(slot: ClassAd, context: EvalContext) -> int:
    """What the slot counts for in the effective size: a p-slot its ``Cpus``, any other 1."""
    if literal(slot, "PartitionableSlot", context) is not True:
        return 1
    v = number(literal(slot, "Cpus", context))
    return int(v) if v is not None else 1


def pool_size(slots: Sequence[ClassAd], weights: Sequence[float], *, use_slot_weights: bool,
              context: EvalContext, constraint: str = "", multipliers: Sequence[int] | None = None,
              effective: Sequence[int] | None = None) -> PoolSize:
    """The pool's sizes; ``weights`` are the slots' ``SlotWeight`` (1.0 each without weights);
    expressions are evaluated in ``context``, the cycle's. ``multipliers`` and ``effective``: each
    slot's ``ghost_multiplier`` and ``effective_cpus``, when the caller has them."""
    if multipliers is None:
        multipliers = [ghost_multiplier(s, context) for s in slots]
    ghost = [w * m for w, m in zip(weights, multipliers, strict=True)]
    smallest = min(ghost) if ghost else 1.0
    if constraint:
        keep = ExprTree(constraint)
        counted = [i for i, s in enumerate(slots) if truth(keep.evaluate(s, None, context))]
    else:
        counted = list(range(len(slots)))
    if not counted:
        return PoolSize(0, 0.0, 0, smallest)
    weighted = sum(ghost[i] for i in counted) if use_slot_weights else float(len(counted))
    if effective is None:
        total = sum(effective_cpus(slots[i], context) for i in counted)
    else:
        total = sum(effective[i] for i in counted)
    return PoolSize(len(counted), weighted, total, smallest)
