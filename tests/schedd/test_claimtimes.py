"""The claims table's kept deadline against a walk over every claim (the uncached answer)."""

from __future__ import annotations

import random

from htcpool.classad import ClassAd
from htcpool.schedd.claims import Claim, ClaimState
from htcpool.schedd.claimtimes import ClaimTable


def walked(table: ClaimTable[Claim]) -> float | None:
    """What the schedd computed before the table kept a heap: every claim's deadlines, walked."""
    times: list[float] = []
    for claim in table.values():
        times.append(claim.last_heard + claim.lease)
        if claim.next_alive is not None:
            times.append(claim.next_alive)
        if claim.state is ClaimState.IDLE and claim.keep_idle_until is not None:
            times.append(claim.keep_idle_until)
    return min(times, default=None)


def test_empty_table_has_no_deadline() -> None:
    table: ClaimTable[Claim] = ClaimTable()
    assert table.earliest() is None
    table["c1"] = Claim("c1", ClassAd(), "u@d", None, last_heard=10.0, lease=5.0)
    assert table.earliest() == 15.0
    del table["c1"]
    assert table.earliest() is None


def test_a_deadline_moving_earlier_is_seen() -> None:
    table: ClaimTable[Claim] = ClaimTable()
    claim = Claim("c1", ClassAd(), "u@d", None, last_heard=0.0, lease=1000.0)
    table["c1"] = claim
    claim.next_alive = 300.0
    assert table.earliest() == 300.0
    claim.keep_idle_until = 50.0  # counts only while the claim is Idle
    assert table.earliest() == 300.0
    claim.state = ClaimState.IDLE
    assert table.earliest() == 50.0
    claim.state = ClaimState.BUSY
    assert table.earliest() == 300.0


def test_random_changes_match_the_walk() -> None:
    rng = random.Random(7)
    table: ClaimTable[Claim] = ClaimTable()
    states = list(ClaimState)
    for step in range(20_000):
        op = rng.random()
        ids = list(table)
        if op < 0.15 or not ids:
            cid = f"c{rng.randrange(200)}"
            table[cid] = Claim(cid, ClassAd(), "u@d", None, state=rng.choice(states),
                               last_heard=rng.uniform(0, 1000), lease=rng.uniform(0, 500))
        elif op < 0.25:
            del table[rng.choice(ids)]
        else:
            claim = table[rng.choice(ids)]
            field = rng.choice(["state", "last_heard", "lease", "next_alive", "keep_idle_until"])
            value: object = rng.choice(states) if field == "state" else (
                None if field in ("next_alive", "keep_idle_until") and rng.random() < 0.3
                else rng.uniform(0, 1500))
            setattr(claim, field, value)
        assert table.earliest() == walked(table), f"step {step}"
    assert table.entries <= 4 * len(table) + 65  # stale entries are dropped, not hoarded
