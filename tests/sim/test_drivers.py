"""Pieces the simulated daemons share with the live ones, and a machine's modelled job."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.runtime.startd_ads import FreedSlots


def test_freed_slots_fire_only_on_a_change_to_unclaimed() -> None:
    freed = FreedSlots()
    seen = [freed.freed("slot1", ClassAd({"State": state}))
            for state in ("Unclaimed", "Claimed", "Claimed", "Unclaimed", "Unclaimed", "Owner", "Unclaimed")]
    assert seen == [False, False, False, True, False, False, True]
