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


def _change_at_random(rng: random.Random, table: ClaimTable[Claim], keys: int) -> None:
    """One random change: a claim added (or one replaced, among ``keys`` ids), removed, or one of
    the fields that decide its deadline set."""
    states = list(ClaimState)
    op = rng.random()
    ids = list(table)
    if op < 0.15 or not ids:
        cid = f"c{rng.randrange(keys)}"
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


def test_random_changes_match_the_walk() -> None:
    rng = random.Random(7)
    table: ClaimTable[Claim] = ClaimTable()
    for step in range(20_000):
        _change_at_random(rng, table, 200)
        assert table.earliest() == walked(table), f"step {step}"
    assert table.entries <= 4 * len(table) + 65  # stale entries are dropped, not hoarded


def reserved_walk(table: ClaimTable[Claim]) -> set[object]:
    """What the schedd walked every claim for before the table kept it: the jobs activated or run."""
    return {c.job for c in table.values() if c.job is not None and c.state in (ClaimState.ACTIVATING, ClaimState.BUSY)}


def test_reserved_and_held_jobs_match_the_walk_over_random_changes() -> None:
    rng = random.Random(11)
    table: ClaimTable[Claim] = ClaimTable()
    states = list(ClaimState)
    gone: list[Claim] = []
    for step in range(20_000):
        op = rng.random()
        ids = list(table)
        job = (rng.randrange(30), 0) if rng.random() < 0.8 else None
        if op < 0.15 or not ids:
            cid = f"c{rng.randrange(60)}"  # sometimes replaces a held claim
            table[cid] = Claim(cid, ClassAd(), "u@d", job, state=rng.choice(states))
        elif op < 0.22:
            gone.append(table.pop(rng.choice(ids)))
        elif op < 0.27:
            del table[rng.choice(ids)]
        elif op < 0.30 and gone:
            rng.choice(gone).state = rng.choice(states)  # a claim no longer held changes nothing
        else:
            claim = table[rng.choice(ids)]
            if rng.random() < 0.5:
                claim.state = rng.choice(states)
            else:
                claim.job = job
        assert set(table.reserved_jobs()) == reserved_walk(table), f"step {step}"
        assert set(table.held_jobs()) == {c.job for c in table.values() if c.job is not None}, f"step {step}"
    assert table.pop("nothing", None) is None


def due_walk(table: ClaimTable[Claim], now: float) -> list[str]:
    """What ``ClaimManager.handle_timer`` walked every claim for: in the dict's order, those with a
    lease run out or a keep-alive due (their deadline come) and the idle ones."""
    return [c.claim_id for c in table.values() if c.deadline() <= now or c.state is ClaimState.IDLE]


def test_due_claims_match_the_walk_in_its_order_over_random_changes() -> None:
    rng = random.Random(5)
    table: ClaimTable[Claim] = ClaimTable()
    for step in range(20_000):
        _change_at_random(rng, table, 150)  # a replaced claim keeps its place in the order
        now = rng.uniform(0, 1500)
        assert [c.claim_id for c in table.due(now)] == due_walk(table, now), f"step {step}"
