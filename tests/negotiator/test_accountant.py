"""The accountant: seed "User Priorities and Negotiation" 3.6.1, 3.6.2, 3.6.4 and condor_userprio."""

from __future__ import annotations

import pytest

from htcpool.negotiator import Accountant, AccountantPolicy, MemoryStore, NegotiatorUsageError
from tests.negotiator.helpers import DAY, START, claimed, slot


def test_half_life_decay_10_5_2_5() -> None:
    """3.6.1: a RUP of 10 with no running jobs is 5 one half-life later, 2.5 two later."""
    acct = Accountant()
    acct.update_priorities(START)
    acct.set_priority("u@d", 10)
    acct.update_priorities(START + DAY)
    assert acct.real_priority("u@d") == pytest.approx(5.0)
    for h in range(1, 25):  # the second day in hourly steps: β composes over uneven intervals
        acct.update_priorities(START + DAY + h * 3600)
    assert acct.real_priority("u@d") == pytest.approx(2.5, rel=1e-5)


def test_halflife_knob_and_minimum() -> None:
    """3.6.4: β = 0.5^(δt/h) with h = PRIORITY_HALFLIFE; the RUP never drops below 0.5."""
    acct = Accountant(AccountantPolicy(priority_halflife=3600))
    acct.update_priorities(START)
    acct.set_priority("u@d", 4)
    acct.update_priorities(START + 7200)
    assert acct.real_priority("u@d") == pytest.approx(1.0)
    acct.update_priorities(START + 10 * 7200)
    assert acct.real_priority("u@d") == 0.5


def test_steady_state_rup_equals_resources_used() -> None:
    """3.6.1: a user continuously using ten resources stabilises at a RUP of ten."""
    acct = Accountant()
    slots = [claimed(f"s{i}@m", "u@d") for i in range(10)]
    t = START
    acct.update_priorities(t)
    for _ in range(24 * 20):
        acct.check_matches(slots, t)
        t += 3600
        acct.update_priorities(t)
    assert acct.real_priority("u@d") == pytest.approx(10.0, rel=1e-4)
    assert acct.records["u@d"].weighted_accumulated_usage == pytest.approx(10 * 24 * 20 * 3600)
    assert acct.records["u@d"].begin_usage_time == START + 3600
    assert acct.records["u@d"].last_usage_time == t


def test_usage_weighted_by_slot_weight_and_suspension() -> None:
    """SLOT_WEIGHT (default Cpus) weighs usage; suspended slots count unless discounted."""
    s4 = claimed("a@m", "u@d", Cpus=4)
    susp = claimed("b@m", "u@d", Cpus=2, Activity="Suspended")
    acct = Accountant()
    acct.check_matches([s4, susp], START)
    assert acct.weighted_usage("u@d") == 6
    acct = Accountant(AccountantPolicy(discount_suspended_resources=True))
    acct.check_matches([s4, susp], START)
    assert acct.weighted_usage("u@d") == 4
    acct = Accountant(AccountantPolicy(slot_weight="Memory / 1024", force_negotiator_slot_weight=True))
    acct.check_matches([s4], START)
    assert acct.weighted_usage("u@d") == 1


def test_factors_default_nice_remote_and_per_user() -> None:
    """3.6.2: DEFAULT_PRIO_FACTOR, nice users, remote users, per-user factors; EUP = RUP × factor."""
    acct = Accountant(AccountantPolicy(accountant_local_domain="cs.wisc.edu"))
    assert acct.priority_factor("alice@cs.wisc.edu") == 1000
    assert acct.priority_factor("nice-user.bob@cs.wisc.edu") == 1e10
    assert acct.priority_factor("carol@physics.org") == 1e7
    acct.set_priority_factor("alice@cs.wisc.edu", 3)
    acct.set_priority("alice@cs.wisc.edu", 7)
    assert acct.effective_priority("alice@cs.wisc.edu") == 21
    acct.set_priority_factor("alice@cs.wisc.edu", 0.2)  # raised to 1
    assert acct.priority_factor("alice@cs.wisc.edu") == 1
    groups = Accountant(AccountantPolicy(group_prio_factors={"group_a": 50.0}), assigned_group=lambda n: "group_a")
    assert groups.priority_factor("group_a.x@d") == 50


def test_userprio_operations_and_persistence_round_trip() -> None:
    """condor_userprio -setaccum, -resetusage, -delete; a store reloads the state without loss."""
    store = MemoryStore()
    acct = Accountant(store=store)
    acct.update_priorities(START)
    acct.check_matches([claimed("s@m", "u@d", Cpus=2)], START)
    acct.update_priorities(START + 600)
    acct.set_accumulated_usage("u@d", 7200)
    assert acct.records["u@d"].weighted_accumulated_usage == 7200
    acct.reset_usage("u@d", START + 700)
    rec = acct.records["u@d"]
    assert (rec.weighted_accumulated_usage, rec.accumulated_usage, rec.begin_usage_time) == (0, 0, START + 700)
    acct.set_priority("v@d", 3)
    acct.delete("v@d")
    with pytest.raises(NegotiatorUsageError):
        acct.delete("v@d")
    acct.commit()
    again = Accountant(store=store)
    assert sorted(again.snapshot().records, key=lambda r: r.name) == sorted(acct.snapshot().records, key=lambda r: r.name)
    assert again.last_update_time == acct.last_update_time
    assert "v@d" not in again.records


def test_group_records_charge_hierarchically() -> None:
    """Groups are keyed by their full name; a match charges the submitter, its group and prefixes."""
    acct = Accountant(assigned_group=lambda n: "group_physics.hep")
    acct.check_matches([claimed("s@m", "group_physics.hep.higgs@d")], START)
    assert acct.weighted_usage("group_physics.hep.higgs@d") == 1
    assert acct.weighted_usage("group_physics.hep") == 1
    assert acct.records["group_physics"].hier_weighted_resources_used == 1
    acct.check_matches([slot("s@m")], START)  # recount: nothing claimed any more
    assert acct.records["group_physics"].hier_weighted_resources_used == 0
