"""The whole-machine howto's "Accounting and Monitoring" notes, on the accountant core.

An 8-core machine set up by examples/whole-machine/static-slots.config advertises slots 1-8
(one core each) and slot 9 (all eight cores). The howto says: suspended time is charged unless
NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES, and SlotWeight counts cores, so the whole-machine slot
counts eight times a single-core slot in condor_userprio's usage.
"""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.negotiator import Accountant
from htcpool.negotiator.policy import accountant_policy_from_config
from tests.negotiator.helpers import START, claimed

HOUR = 3600


def _accountant(config: str = "") -> Accountant:
    return Accountant(accountant_policy_from_config(Config.from_text(config, subsystem="NEGOTIATOR")))


def _hour_of(acct: Accountant, slots: list[ClassAd]) -> None:
    acct.update_priorities(START)
    acct.check_matches(slots, START)
    acct.update_priorities(START + HOUR)


def test_the_whole_machine_slot_counts_eight_single_core_slots() -> None:
    whole = claimed("slot9@node", "whole@d", Cpus=8, CAN_RUN_WHOLE_MACHINE=True)
    single = claimed("slot1@node", "single@d", Cpus=1, CAN_RUN_WHOLE_MACHINE=False)
    acct = _accountant()
    _hour_of(acct, [whole, single])
    assert acct.weighted_usage("whole@d") == 8 and acct.weighted_usage("single@d") == 1
    assert acct.records["whole@d"].weighted_accumulated_usage == pytest.approx(8 * HOUR)
    assert acct.records["single@d"].weighted_accumulated_usage == pytest.approx(HOUR)


@pytest.mark.parametrize(("config", "charged"), [
    ("", 8 * HOUR),                                                # the default: charged
    ("NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES = True\n", 0.0),     # the knob: not charged
])
def test_a_suspended_whole_machine_job_is_charged_unless_discounted(config: str, charged: float) -> None:
    suspended = claimed("slot9@node", "whole@d", Cpus=8, Activity="Suspended")
    acct = _accountant(config)
    _hour_of(acct, [suspended])
    record = acct.records.get("whole@d")  # a discounted user is never charged: no record at all
    assert (record.weighted_accumulated_usage if record else 0.0) == pytest.approx(charged)
