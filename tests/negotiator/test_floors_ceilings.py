"""Submitter floors and ceilings in the units the condor_userprio manual page gives them ("the sum of
the SlotWeight of all running jobs"), with NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES and the
whole-machine howto's SlotWeight note. HTCondor 25 has no configuration default for either: a
record starts with no ceiling (-1) and no floor (0) and only ``condor_userprio -setceiling`` /
``-setfloor`` (optionally as a lease, ``-duration``) change them."""

from __future__ import annotations

from htcpool.config import Config
from htcpool.negotiator import Accountant, negotiate
from htcpool.negotiator.policy import accountant_policy_from_config, policy_from_config
from tests.negotiator.helpers import START, claimed, count_by, many_jobs, slot, submitters


def _accountant(config: str = "") -> Accountant:
    acct = Accountant(accountant_policy_from_config(Config.from_text(config, subsystem="NEGOTIATOR")))
    acct.update_priorities(START)
    return acct


def test_a_new_record_has_no_ceiling_and_no_floor() -> None:
    rec = _accountant().record("u@d")
    assert (rec.ceiling, rec.floor) == (-1.0, 0.0)


def test_the_ceiling_counts_slot_weight_not_jobs() -> None:
    """Ceiling 4 with 2-core jobs on 2-core slots (SlotWeight = Cpus): two jobs, not four."""
    slots = [slot(f"s{i}@m", Cpus=2) for i in range(6)]
    acct = _accountant()
    acct.set_ceiling("u@d", 4)
    out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(6, RequestCpus=2)}), acct)
    assert len(out.result.matches) == 2 and acct.weighted_usage("u@d") == 4


def test_running_jobs_count_against_the_ceiling_unless_suspended_and_discounted() -> None:
    """A suspended whole-machine job (8 cores) fills a ceiling of 8 by default; with
    NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES it is not charged, so the submitter may start 8
    single-core jobs besides it."""
    busy = claimed("slot9@m", "u@d", Cpus=8, Activity="Suspended")
    free = [slot(f"slot{i}@m") for i in range(1, 9)]
    for config, expected in (("", 0), ("NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES = True\n", 8)):
        cfg = Config.from_text(config, subsystem="NEGOTIATOR")
        pol = policy_from_config(cfg)
        acct = _accountant(config)
        acct.set_ceiling("u@d", 8)
        slots = [busy, *free]
        out = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(8)}, pol, running={"u@d": 1}), acct, pol)
        assert len(out.result.matches) == expected, config


def test_the_floor_is_weighted_too() -> None:
    """A floor of 4 with 2-core jobs: the floor round gives the poor submitter two 2-core slots
    before anyone else, whatever its priority."""
    slots = [slot(f"s{i}@m", Cpus=2) for i in range(4)]
    jobs = {"good@d": many_jobs(8, 1, RequestCpus=2), "poor@d": many_jobs(8, 2, RequestCpus=2)}
    acct = _accountant()
    acct.set_priority_factor("good@d", 1)
    acct.set_priority_factor("poor@d", 1)
    acct.set_priority("poor@d", 1000)
    acct.set_floor("poor@d", 4)
    out = negotiate(START, slots, submitters(slots, jobs), acct)
    assert [m.submitter for m in out.result.matches[:2]] == ["poor@d"] * 2
    assert count_by(out.result.matches) == {"poor@d": 2, "good@d": 2}


def test_a_ceiling_lease_ends_at_the_first_cycle_after_it() -> None:
    """``-setceiling u 1 -duration 60``: one job while the lease runs; the cycle after it ends
    restores the ceiling it replaced (none), and the rest start."""
    slots = [slot(f"s{i}@m") for i in range(4)]
    acct = _accountant()
    acct.set_ceiling("u@d", 1, now=START, duration=60)
    first = negotiate(START, slots, submitters(slots, {"u@d": many_jobs(4)}), acct)
    assert len(first.result.matches) == 1
    later = negotiate(START + 61, slots, submitters(slots, {"u@d": many_jobs(4)}), acct)
    assert acct.records["u@d"].ceiling == -1 and len(later.result.matches) == 4
