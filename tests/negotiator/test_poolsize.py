"""The pool's size for shares and quotas (HTCondor 25 ``sumSlotWeights``, ``negotiationTime``), the
manual's NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT (GROUP_DYNAMIC_MACH_CONSTRAINT) entry."""

from __future__ import annotations

from htcpool.classad import EvalContext, fixed_clock
from htcpool.negotiator import (
    Accountant,
    AccountantPolicy,
    GroupPolicy,
    GroupSettings,
    NegotiatorPolicy,
    negotiate,
    policy_from_config,
)
from htcpool.negotiator.poolsize import pool_size
from tests.negotiator.helpers import START, count_by, many_jobs, slot, submitters
from tests.negotiator.test_policy import FakeConfig

NORMAL = "IsXferSlot =!= True"
AT_START = EvalContext(clock=fixed_clock(START))


def _pool() -> list:
    """Eight ordinary slots and eight special (file-transfer) slots that take jobs too."""
    return [slot(f"s{i}@m") for i in range(8)] + [slot(f"x{i}@m", IsXferSlot=True) for i in range(8)]


def _accountant() -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    return acct


def test_constraint_limits_the_pie_not_the_slots() -> None:
    """``negotiationTime``: with NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT only the slots that satisfy
    it make the pie, so a lone submitter's share is 8 slots of the 16 it could match; without it,
    16."""
    slots = _pool()
    jobs = {"u@d": many_jobs(20)}
    out = negotiate(START, slots, submitters(slots, jobs), _accountant(), NegotiatorPolicy())
    assert len(out.result.matches) == 16
    pol = NegotiatorPolicy(slot_poolsize_constraint=NORMAL)
    out = negotiate(START, slots, submitters(slots, jobs, pol), _accountant(), pol)
    assert len(out.result.matches) == 8
    assert out.result.shares["u@d"].limit == 8


def test_constraint_sizes_group_quotas() -> None:
    """The manual: "only normal slots should be counted when computing how big each group's share
    of the pool should be": a dynamic quota of 0.5 is 4 of the 8 normal slots, not 8 of 16."""
    groups = GroupPolicy((GroupSettings("group_a", dynamic_quota=0.5), GroupSettings("group_b", dynamic_quota=0.5)))
    slots = _pool()
    jobs = {"group_a.u@d": many_jobs(20)}
    for constraint, quota in (("", 8), (NORMAL, 4)):
        pol = NegotiatorPolicy(groups=groups, slot_poolsize_constraint=constraint)
        out = negotiate(START, slots, submitters(slots, jobs, pol), _accountant(), pol)
        assert out.groups is not None and out.groups.get("group_a").quota == quota  # type: ignore[union-attr]
        assert count_by(out.result.matches) == {"group_a.u@d": quota}
        assert out.stats.candidate_slots == (16 if not constraint else 8)  # the pool-size count


def test_no_slot_satisfies_the_constraint() -> None:
    """``negotiationTime``: when no slot matches the constraint all sizes are 0, so nobody has a
    share."""
    slots = _pool()
    pol = NegotiatorPolicy(slot_poolsize_constraint="False")
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(5)}, pol), _accountant(), pol)
    assert out.result.matches == []
    size = pool_size(slots, [1.0] * 16, use_slot_weights=True, context=AT_START, constraint="False")
    assert (size.slots, size.weighted, size.effective, size.min_slot_weight) == (0, 0.0, 0, 1.0)


def test_ghost_multiplier_and_effective_size() -> None:
    """``sumSlotWeights`` (GhostMultiplier multiplies a slot's weight in the pool-size sum only, the
    minimum slot weight included) and ``negotiationTime`` (the effective size counts a p-slot as its
    Cpus; group quotas use it when slot weights are off)."""
    ghost = slot("offline@m", Cpus=2, GhostMultiplier=10, Offline=True)
    pslot = slot("p@m", Cpus=8, PartitionableSlot=True)
    slots = [slot("a@m"), ghost, pslot]
    size = pool_size(slots, [1.0, 2.0, 8.0], use_slot_weights=True, context=AT_START)
    assert (size.slots, size.weighted, size.effective, size.min_slot_weight) == (3, 29.0, 10, 1.0)
    assert size.quota_total(True) == 29.0 and size.quota_total(False) == 10.0
    unweighted = pool_size(slots, [1.0, 1.0, 1.0], use_slot_weights=False, context=AT_START)
    assert unweighted.weighted == 3.0 and unweighted.min_slot_weight == 1.0


def test_unweighted_group_quotas_count_pslot_cpus() -> None:
    """``GroupEntry.cpp``: the total quota is the weighted pool size when weights are used, else the
    effective size:
    with NEGOTIATOR_USE_SLOT_WEIGHTS false, one 8-core p-slot makes a quota base of 8."""
    groups = GroupPolicy((GroupSettings("group_a", dynamic_quota=0.5),))
    pol = NegotiatorPolicy(groups=groups, accountant=AccountantPolicy(use_slot_weights=False))
    slots = [slot("p@m", Cpus=8, Memory=8192, PartitionableSlot=True)]
    out = negotiate(START, slots, submitters(slots, {"group_a.u@d": many_jobs(1)}, pol), _accountant(), pol)
    assert out.groups is not None and out.groups.get("group_a").quota == 4  # type: ignore[union-attr]


def test_constraint_knob_and_its_old_name() -> None:
    """param_info.in: NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT (default empty), alias
    GROUP_DYNAMIC_MACH_CONSTRAINT."""
    assert policy_from_config(FakeConfig()).slot_poolsize_constraint == ""
    assert policy_from_config(FakeConfig(NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT=NORMAL)).slot_poolsize_constraint == NORMAL
    assert policy_from_config(FakeConfig(GROUP_DYNAMIC_MACH_CONSTRAINT=NORMAL)).slot_poolsize_constraint == NORMAL
