"""A message about one claim unsettles only the slots it changes (``handlers.UNSETTLES_ITS_SLOTS``):
the next poll evaluates those and their p-slot, skips the other settled slots, and the machine
decides exactly what it decides when every message unsettles every slot."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from htcpool.protocol.startd import (
    Action,
    ActivateClaim,
    Alive,
    DeactivateClaim,
    MatchNotification,
    ReleaseClaim,
    RequestClaim,
    StarterExited,
)
from htcpool.startd import Startd
from htcpool.startd import machine as machine_module
from htcpool.startd.settle import MOVING_ATTRS
from htcpool.startd.states import State
from tests.startd.helpers import job
from tests.startd.test_quiet import PSLOT, STATIC, Step, _drive, _run

#: policies whose slots settle, some reading what a message to a sibling changes in a p-slot's ad
POLICIES = {
    "default": "",
    "p-slot owner by its children's activities": "IS_OWNER = member(\"Retiring\", ChildActivity)\n",
    "preempt reading the slot's own claim": "PREEMPT = RemoteUser =?= \"nobody\"\nWANT_VACATE = false\n",
    "p-slot owner by its dynamic slots' count": "IS_OWNER = NumDynamicSlots > 3\n",
}


def _state(s: Startd) -> list[object]:
    """Everything a poll can change but the moving attributes of the ads (a slot the poll skips
    is republished when it is sent: the ads sent are in the trace), per slot and for the machine."""
    slots = [(x.name, x.state.value, x.activity.value, tuple(x.load_samples), x.condor_load, x.owner_load,
              x.accounted_at, {k: str(v) for k, v in x.ad._exprs.items()
                               if k not in MOVING_ATTRS and not k.startswith("totaltime")})
             for x in s.slots]
    return [slots, s.last_load_time, s._next_poll, s._next_update, s.drain_totals.expected_at]


def _busy(s: Startd) -> list[str]:
    return sorted(x.id_str for x in s.slots if x.state is State.CLAIMED and x.parent is not None)


def _on_a_claim(kind: str, pick: float) -> Callable[[Startd, float], list[Action]]:
    """A message about the claim of one claimed dynamic slot (chosen by ``pick`` among them)."""
    def step(s: Startd, t: float) -> list[Action]:
        busy = _busy(s)
        if not busy:
            return []
        slot = s.slot(busy[int(pick * len(busy))])
        cid = slot.claim.id
        message = {"exit": StarterExited(slot.name), "deactivate": DeactivateClaim(cid),
                   "release": ReleaseClaim(cid), "alive": Alive(cid), "match": MatchNotification(cid)}[kind]
        return s.handle(message, t)
    return step


def _claim_part(cluster: int) -> Callable[[Startd, float], list[Action]]:
    """A job claims a core of the p-slot ``slot1`` and starts in the dynamic slot carved for it,
    when one is left."""
    def step(s: Startd, t: float) -> list[Action]:
        request = job(ClusterId=cluster, RequestMemory=64)
        before = {x.name for x in s.slots}
        out = s.handle(RequestClaim(s.slot("slot1").claim.id, request), t)
        for new in [x for x in s.slots if x.name not in before]:
            out += s.handle(ActivateClaim(new.claim.id, request), t)
        return out
    return step


def _random_steps(seed: int, count: int, end: float) -> list[Step]:
    rng = random.Random(seed)
    steps: list[Step] = []
    for n in range(count):
        at = round(rng.uniform(10, end - 200), 1)
        kind = rng.choice(("run", "run", "exit", "exit", "deactivate", "release", "alive", "match"))
        if kind == "run":
            steps.append((at, _claim_part(n + 1)))
        else:
            steps.append((at, _on_a_claim(kind, rng.random())))
    return steps


def _compare(text: str, cpus: int, steps: list[Step], end: float, monkeypatch: pytest.MonkeyPatch) -> int:
    """Drive the machine with and without the rule; the evaluations the rule saved."""
    evaluations = 0
    real = Startd.eval_slot

    def counted(self: Startd, slot: object, now: float, depth: int = 0) -> bool:
        nonlocal evaluations
        evaluations += 1
        return real(self, slot, now, depth)  # type: ignore[arg-type]

    monkeypatch.setattr(Startd, "eval_slot", counted)
    trace, states, _ = _drive(text, cpus, steps, end, _state)
    with_rule = evaluations
    evaluations = 0
    monkeypatch.setattr(machine_module, "UNSETTLES_ITS_SLOTS", frozenset())
    every_trace, every_states, _ = _drive(text, cpus, steps, end, _state)
    assert trace == every_trace
    assert states == every_states
    return evaluations - with_rule


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("seed", range(3))
def test_random_claims_on_a_partitionable_slot_decide_the_same(policy: str, seed: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    steps = _random_steps(seed, 40, 3000)
    saved = _compare(PSLOT + POLICIES[policy] + "MAXJOBRETIREMENTTIME = 60\n", 6, steps, 3000, monkeypatch)
    assert saved > 0


def test_static_slots_claimed_and_released_decide_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    def release(slot: str) -> Callable[[Startd, float], list[Action]]:
        return lambda s, t: s.handle(ReleaseClaim(s.slot(slot).claim.id), t)

    def exited(slot: str) -> Callable[[Startd, float], list[Action]]:
        return lambda s, t: s.handle(StarterExited(s.slot(slot).name), t)

    steps: list[Step] = [
        (10, _run("slot1", 1)), (20, _run("slot2", 2)), (30, _run("slot3", 3)),
        (700, exited("slot2")), (900, release("slot2")), (1200, _run("slot2", 4)),
        (1500, release("slot1")), (1800, exited("slot3")),
    ]
    assert _compare(STATIC, 3, steps, 2500, monkeypatch) > 0


@pytest.mark.parametrize("policy", list(POLICIES))
def test_slots_a_poll_published_are_not_published_again_by_its_flush(policy: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """At a periodic update every slot is sent; a slot the poll just published and evaluated to
    nothing new (``Startd._fresh``) is sent as published, not published a second time: the same
    ads and decisions as publishing it again, with fewer publications."""
    from htcpool.startd import dynamic

    published = 0
    real_publish = dynamic.publish_dynamic

    def counted(startd: Startd, slot: object, now: float) -> None:
        nonlocal published
        published += 1
        real_publish(startd, slot, now)  # type: ignore[arg-type]

    monkeypatch.setattr(dynamic, "publish_dynamic", counted)
    text = PSLOT + POLICIES[policy] + "MAXJOBRETIREMENTTIME = 60\nUPDATE_INTERVAL = 120\n"
    steps = _random_steps(11, 30, 3000)
    trace, states, _ = _drive(text, 6, steps, 3000, _state)
    with_skip = published
    published = 0
    real_flush = Startd._flush

    def flush_publishing_all(self: Startd, now: float) -> list[Action]:
        self._fresh = frozenset()
        return real_flush(self, now)

    monkeypatch.setattr(Startd, "_flush", flush_publishing_all)
    again_trace, again_states, _ = _drive(text, 6, steps, 3000, _state)
    assert trace == again_trace
    assert states == again_states
    assert with_skip < published
