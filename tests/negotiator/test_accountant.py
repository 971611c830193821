"""The accountant and condor_userprio, after the HTCondor manual's "User Priorities and
Negotiation": its "Real User Priority (RUP)", "Effective User Priority (EUP)" and "Priority
Calculation"."""

from __future__ import annotations

import pytest

from htcpool.negotiator import Accountant, AccountantPolicy, MemoryStore, NegotiatorUsageError
from tests.negotiator.helpers import DAY, START, claimed, slot


def test_half_life_decay_10_5_2_5() -> None:
    """RUP: a RUP of 10 with no running jobs is 5 one half-life later, 2.5 two later."""
    acct = Accountant()
    acct.update_priorities(START)
    acct.set_priority("u@d", 10)
    acct.update_priorities(START + DAY)
    assert acct.real_priority("u@d") == pytest.approx(5.0)
    for h in range(1, 25):  # the second day in hourly steps: β composes over uneven intervals
        acct.update_priorities(START + DAY + h * 3600)
    assert acct.real_priority("u@d") == pytest.approx(2.5, rel=1e-5)


def test_halflife_knob_and_minimum() -> None:
    """Priority Calculation: β = 0.5^(δt/h) with h = PRIORITY_HALFLIFE; the RUP never drops below
    0.5."""
    acct = Accountant(AccountantPolicy(priority_halflife=3600))
    acct.update_priorities(START)
    acct.set_priority("u@d", 4)
    acct.update_priorities(START + 7200)
    assert acct.real_priority("u@d") == pytest.approx(1.0)
    acct.update_priorities(START + 10 * 7200)
    assert acct.real_priority("u@d") == 0.5


def test_steady_state_rup_equals_resources_used() -> None:
    """RUP: a user continuously using ten resources stabilises at a RUP of ten."""
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
    """EUP: DEFAULT_PRIO_FACTOR, nice users, remote users, per-user factors; EUP = RUP × factor."""
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


def test_ceiling_floor_and_factor_leases() -> None:
    """``Accountant.cpp``'s leases: a lease keeps the value it replaces and an absolute expiry;
    setting one fails for a duration that is not positive, an invalid value, or while another lease
    runs; records never leased carry no lease attributes; a store reloads leases without loss."""
    store = MemoryStore()
    acct = Accountant(store=store)
    acct.set_floor("u@d", 2)
    assert "FloorLeaseExpiration" not in acct.records["u@d"].to_dict()
    acct.set_floor("u@d", 5, now=START, duration=600)
    acct.set_ceiling("u@d", 3, now=START, duration=3600)
    acct.set_priority_factor("u@d", 7, now=START, duration=60)
    rec = acct.records["u@d"]
    assert (rec.floor, rec.floor_pre_lease_value, rec.floor_lease_expiration) == (5, 2, START + 600)
    assert (rec.ceiling, rec.ceiling_pre_lease_value) == (3, -1)
    assert rec.to_dict()["CeilingLeaseExpiration"] == START + 3600
    with pytest.raises(NegotiatorUsageError, match="already"):
        acct.set_ceiling("u@d", 4, now=START + 10, duration=60)
    for bad in (lambda: acct.set_ceiling("v@d", 4, now=START, duration=0),
                lambda: acct.set_floor("v@d", -1, now=START, duration=60),
                lambda: acct.set_priority_factor("v@d", 0.5, now=START, duration=60)):
        with pytest.raises(NegotiatorUsageError):
            bad()
    assert Accountant(store=store).records["u@d"] == rec  # persisted
    acct.expire_leases(START + 600)  # the factor's and the floor's are over, the ceiling's not
    assert (rec.priority_factor, rec.floor, rec.ceiling) == (1000, 2, 3)
    assert rec.floor_lease_expiration == 0 and rec.ceiling_lease_expiration == START + 3600
    acct.cancel_lease("u@d", "ceiling")
    assert rec.ceiling == -1
    with pytest.raises(NegotiatorUsageError):
        acct.cancel_lease("u@d", "ceiling")
    acct.set_ceiling("u@d", 1, now=START + 700, duration=60)  # no lease runs: allowed again
    assert rec.ceiling == 1


def test_lease_expires_at_the_start_of_a_cycle() -> None:
    """``negotiationTime``: each cycle first expires leases; a leased ceiling of 3 caps the
    submitter until its hour is up, then the ceiling before it (none) applies again."""
    from htcpool.negotiator import negotiate
    from tests.negotiator.helpers import many_jobs, submitters

    slots = [slot(f"s{i}@m") for i in range(10)]
    acct = Accountant()
    acct.update_priorities(START)
    acct.set_ceiling("u@d", 3, now=START, duration=3600)
    subs = submitters(slots, {"u@d": many_jobs(10)})
    assert len(negotiate(START + 60, slots, subs, acct).result.matches) == 3
    assert len(negotiate(START + 3600, slots, subs, acct).result.matches) == 10
    assert acct.records["u@d"].ceiling == -1


def test_frequent_updates_lose_no_usage() -> None:
    """Priority Calculation: RUP is recomputed "over non-uniform time intervals without affecting
    the calculation"; a slot used for 8 s accumulates 8 slot-seconds however often the accountant
    updates (every 0.9 s here: each update counts whole seconds and carries the fraction over)."""
    acct = Accountant()
    busy = [claimed("s@m", "u@d")]
    t = START + 0.25
    acct.update_priorities(t)
    acct.check_matches(busy, t)
    for _ in range(9):
        t += 0.9
        acct.update_priorities(t)
        acct.check_matches(busy, t)
    acct.update_priorities(START + 0.25 + 8.1)
    assert acct.records["u@d"].accumulated_usage == 8
