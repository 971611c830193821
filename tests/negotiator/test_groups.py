"""Hierarchical group quotas: the HTCondor manual's "Group Accounting" and "Accounting Groups with
Hierarchical Group Quotas", with the numbers of its examples."""

from __future__ import annotations

import pytest

from htcpool.negotiator import (
    Accountant,
    GroupPolicy,
    GroupSettings,
    GroupTree,
    NegotiatorPolicy,
    accounting_ads,
    negotiate,
)
from tests.negotiator.helpers import START, count_by, many_jobs, slot, submitters

PHYS_CHEM = (GroupSettings("group_physics", 20), GroupSettings("group_chemistry", 10))


def _run(groups: GroupPolicy, nslots: int, demand: dict[str, int]) -> tuple[dict[str, int], GroupTree]:
    pol = NegotiatorPolicy(groups=groups)
    slots = [slot(f"s{i}@m") for i in range(nslots)]
    jobs = {name: many_jobs(n, i + 1) for i, (name, n) in enumerate(demand.items())}
    acct = Accountant()
    acct.update_priorities(START)
    out = negotiate(START, slots, submitters(slots, jobs, pol), acct, pol)
    assert out.groups is not None
    by_group: dict[str, int] = {}
    for name, n in count_by(out.result.matches).items():
        g = out.groups.assigned_group(name)
        by_group[g] = by_group.get(g, 0) + n
    return by_group, out.groups


def test_static_quotas_20_10() -> None:
    """Group quotas: thirty slots, physics limited to 20 and chemistry to 10."""
    got, tree = _run(GroupPolicy(PHYS_CHEM), 30, {"group_physics.einstein@d": 50, "group_chemistry.curie@d": 50})
    assert got == {"group_physics": 20, "group_chemistry": 10}


def test_power_failure_scales_quotas_to_10_5() -> None:
    """Group quotas: fifteen slots left scale physics to 10 and chemistry to 5 (oversubscription
    off, because HTCondor 25 defaults NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION to true)."""
    got, tree = _run(GroupPolicy(PHYS_CHEM, allow_quota_oversubscription=False), 15,
                     {"group_physics.einstein@d": 50, "group_chemistry.curie@d": 50})
    assert got == {"group_physics": 10, "group_chemistry": 5}
    assert tree.get("group_physics").quota == 10  # type: ignore[union-attr]


def test_doubled_pool_keeps_20_10() -> None:
    """Group quotas: sixty slots do not scale static quotas up: still 20 and 10."""
    got, _ = _run(GroupPolicy(PHYS_CHEM), 60, {"group_physics.einstein@d": 50, "group_chemistry.curie@d": 50})
    assert got == {"group_physics": 20, "group_chemistry": 10}


def test_dynamic_quotas_066_033() -> None:
    """Group quotas: dynamic quotas of 0.66 and 0.33 of a 100-slot pool."""
    groups = GroupPolicy((GroupSettings("group_physics", dynamic_quota=0.66),
                          GroupSettings("group_chemistry", dynamic_quota=0.33)))
    got, tree = _run(groups, 100, {"group_physics.a@d": 200, "group_chemistry.b@d": 200})
    assert got == {"group_physics": 66, "group_chemistry": 33}
    tree.assign_quotas(200)
    assert tree.get("group_chemistry").quota == pytest.approx(66)  # type: ignore[union-attr]


def test_dynamic_quotas_over_one_are_scaled_down() -> None:
    """Group quotas: fractions summing past 1 are scaled so they sum to 1."""
    tree = GroupTree(GroupPolicy((GroupSettings("a", dynamic_quota=0.8), GroupSettings("b", dynamic_quota=0.8))))
    tree.assign_quotas(100)
    assert tree.get("a").quota == pytest.approx(50)  # type: ignore[union-attr]


HEP_LEP = (
    GroupSettings("group_physics", 20),
    GroupSettings("group_physics.hep", 15, accept_surplus=True),
    GroupSettings("group_physics.lep", 5, accept_surplus=True),
    GroupSettings("group_chemistry", 10),
)


def test_hep_lep_without_surplus() -> None:
    """Group quotas: subgroups hep 15 and lep 5; without surplus hep stops at 15 though lep is
    idle."""
    plain = tuple(GroupSettings(g.name, g.static_quota) for g in HEP_LEP)
    got, _ = _run(GroupPolicy(plain, allow_quota_oversubscription=False), 40,
                  {"group_physics.hep.higgs@d": 100, "group_chemistry.c@d": 100})
    assert got == {"group_physics.hep": 15, "group_chemistry": 10}


def test_hep_lep_with_surplus_capped_by_parent() -> None:
    """Group quotas: hep and lep accept surplus, physics does not: hep may take lep's 5 but not
    beyond 20."""
    got, _ = _run(GroupPolicy(HEP_LEP, allow_quota_oversubscription=False), 40,
                  {"group_physics.hep.higgs@d": 100, "group_chemistry.c@d": 100})
    assert got == {"group_physics.hep": 20, "group_chemistry": 10}


def test_surplus_through_an_accepting_parent() -> None:
    """Group quotas: if physics accepts surplus too, its subgroups are no longer limited by
    quota."""
    groups = tuple(g if g.name != "group_physics" else GroupSettings("group_physics", 20, accept_surplus=True)
                   for g in HEP_LEP)
    got, _ = _run(GroupPolicy(groups, allow_quota_oversubscription=False), 40,
                  {"group_physics.hep.higgs@d": 100})
    assert got == {"group_physics.hep": 40}


def test_strict_priority_via_oversubscription_and_huge_quota() -> None:
    """Group quotas: physics quota 1,000,000 with oversubscription: physics first, chemistry gets
    leftovers."""
    groups = GroupPolicy((GroupSettings("group_physics", 1_000_000), GroupSettings("group_chemistry", 1000)),
                         allow_quota_oversubscription=True)
    got, _ = _run(groups, 30, {"group_physics.a@d": 25, "group_chemistry.b@d": 100})
    assert got == {"group_physics": 25, "group_chemistry": 5}
    got, _ = _run(groups, 30, {"group_physics.a@d": 100, "group_chemistry.b@d": 100})
    assert got == {"group_physics": 30}


def test_starvation_order_and_group_sort_expr() -> None:
    """Group quotas: the group using the smallest fraction of its quota goes first; <none> goes
    last; GROUP_SORT_EXPR replaces the order."""
    tree = GroupTree(GroupPolicy(PHYS_CHEM))
    pol = NegotiatorPolicy(groups=GroupPolicy(PHYS_CHEM))
    slots = [slot(f"s{i}@m") for i in range(5)]
    jobs = {"group_physics.a@d": many_jobs(10, 1), "group_chemistry.b@d": many_jobs(10, 2), "c@d": many_jobs(10, 3)}
    acct = Accountant()
    acct.update_priorities(START)
    out = negotiate(START, slots, submitters(slots, jobs, pol), acct, pol, groups=tree)
    assert {m.submitter for m in out.result.matches[:5]} == {"group_physics.a@d"}
    by_name = GroupPolicy(PHYS_CHEM, sort_expr='ifThenElse(AccountingGroup == "group_chemistry", 1, 2)')
    pol = NegotiatorPolicy(groups=by_name)
    acct = Accountant()
    acct.update_priorities(START)
    out = negotiate(START, slots, submitters(slots, jobs, pol), acct, pol)
    assert {m.submitter for m in out.result.matches} == {"group_chemistry.b@d"}


def test_group_placement_case_insensitive_and_userprio_quotas() -> None:
    """Group accounting and quotas: names are case-insensitive; unknown subgroups map to the deepest
    known group; condor_userprio -quotas shows effective, config and subtree quota, surplus and
    requested."""
    tree = GroupTree(GroupPolicy(HEP_LEP))
    assert tree.assigned_group("GROUP_PHYSICS.HEP.higgs@d") == "group_physics.hep"
    assert tree.assigned_group("group_physics.unknown.bob@d") == "group_physics"
    assert tree.assigned_group("alice@d") == "<none>"
    got, tree = _run(GroupPolicy(HEP_LEP, allow_quota_oversubscription=False), 30,
                     {"group_physics.hep.a@d": 60, "group_physics.lep.b@d": 60})
    acct = Accountant()
    ads = {a["Name"]: a for a in accounting_ads(acct, tree, START)}
    hep = ads["group_physics.hep"]
    assert (hep["EffectiveQuota"], hep["ConfigQuota"], hep["SubtreeQuota"], hep["Requested"]) == (15, 15, 15, 60)
    assert hep["SurplusPolicy"] == "byquota" and ads["group_chemistry"]["SurplusPolicy"] == "no"


def test_group_demand_is_the_weighted_job_counts_of_submitter_ads() -> None:
    """``hgq_prepare_for_matchmaking``: a group's demand ("Weighted Requested" in condor_userprio
    -quotas) is the sum of its submitter ads' WeightedRunningJobs + WeightedIdleJobs; without them,
    or with NEGOTIATOR_USE_WEIGHTED_DEMAND false, RunningJobs + IdleJobs."""
    from dataclasses import replace

    def requested(use_weighted: bool) -> dict[str, float]:
        pol = NegotiatorPolicy(groups=GroupPolicy(PHYS_CHEM, use_weighted_demand=use_weighted))
        slots = [slot(f"s{i}@m") for i in range(2)]
        subs = submitters(slots, {"group_physics.a@d": many_jobs(3, 1), "group_chemistry.b@d": many_jobs(3, 2)},
                          pol, running={"group_physics.a@d": 2, "group_chemistry.b@d": 1})
        # physics' schedd weighs its jobs (4 running cores, 12 idle cores); chemistry's does not
        subs[0] = replace(subs[0], weighted_running_jobs=4.0, weighted_idle_jobs=12.0)
        acct = Accountant()
        acct.update_priorities(START)
        out = negotiate(START, slots, subs, acct, pol)
        return {a["Name"]: a["Requested"] for a in accounting_ads(acct, out.groups, START) if "Requested" in a}

    got = requested(True)
    assert got["group_physics"] == 16 and got["group_chemistry"] == 4
    got = requested(False)
    assert got["group_physics"] == 5 and got["group_chemistry"] == 4


def test_remainder_recovery_round_robin_across_cycles() -> None:
    """``hgq_recover_remainders`` (remainder recovery, unweighted slots): three slots split by
    dynamic quotas of 0.5 give each group 1.5; the two halves make one whole slot, handed
    round-robin. The first cycle serves ``group_a`` (tie: tree order); the round-robin times
    returned by it make the next cycle serve ``group_b``, the least recently served. Without
    recovery only two slots match."""
    from htcpool.negotiator import AccountantPolicy, RoundRobinTimes

    groups = GroupPolicy((GroupSettings("group_a", dynamic_quota=0.5, accept_surplus=True),
                          GroupSettings("group_b", dynamic_quota=0.5, accept_surplus=True)))
    pol = NegotiatorPolicy(groups=groups, accountant=AccountantPolicy(use_slot_weights=False))
    slots = [slot(f"s{i}@m") for i in range(3)]
    jobs = {"group_a.u@d": many_jobs(5, 1), "group_b.u@d": many_jobs(5, 2)}

    def cycle(now: float, rr: RoundRobinTimes | None) -> tuple[dict[str, int], RoundRobinTimes]:
        acct = Accountant(pol.accountant)
        acct.update_priorities(now)
        out = negotiate(now, slots, submitters(slots, jobs, pol), acct, pol, round_robin=rr)
        return count_by(out.result.matches), out.round_robin

    first, rr = cycle(START, None)
    assert first == {"group_a.u@d": 2, "group_b.u@d": 1}
    assert rr.get("group_a") == START and rr.get("group_b") == 0.0
    second, rr = cycle(START + 60, rr)
    assert second == {"group_a.u@d": 1, "group_b.u@d": 2}
    assert rr.get("group_b") == START + 60
