"""Issue 4, Performance: the whole-policy poll stays linear in the slot count - for N static
slots and for one partitionable slot with N dynamic slots. Counted in Python function calls per
slot-evaluation (``benchmarks/bench_startd.py``), which, unlike time, other load cannot disturb."""

from __future__ import annotations

import pytest
from benchmarks.bench_startd import calls_per_slot_eval


@pytest.mark.parametrize("partitionable", [False, True], ids=["static", "dynamic"])
def test_policy_poll_is_linear_in_slot_count(partitionable: bool) -> None:
    small, large = calls_per_slot_eval(16, partitionable), calls_per_slot_eval(128, partitionable)
    assert large <= small * 1.1, (small, large)  # per-slot cost flat: the poll is O(N), not O(N^2)
