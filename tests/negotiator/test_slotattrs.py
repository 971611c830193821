"""Ephemeral slot attributes (``addRemoteUserPrios``), NEGOTIATOR_CROSS_SLOT_PRIOS
(``slot<N>_RemoteUserPrio`` … for N = 1 to TotalSlots, prefix STARTD_RESOURCE_PREFIX) and their live
``…ResourcesInUse``."""

from __future__ import annotations

from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate, policy_from_config
from tests.negotiator.helpers import START, claimed, job, many_jobs, slot, submitters
from tests.negotiator.test_policy import FakeConfig

CROSS = NegotiatorPolicy(cross_slot_prios=True)


def _accountant() -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    acct.set_priority("bob@d", 10)  # EUP 10 x 1000
    return acct


def _machine(host: str, user: str, start: str, prefix: str = "slot") -> list:
    """slot1 runs ``user``'s job; slot2 is free and, as STARTD_SLOT_ATTRS makes it, names slot1's user."""
    return [
        claimed(f"{prefix}1@{host}", user, TotalSlots=2),
        slot(f"{prefix}2@{host}", TotalSlots=2, Start=f"={start}", **{f"{prefix}1_RemoteUser": user}),
    ]


def test_sibling_priority_is_published_only_with_the_knob() -> None:
    """With NEGOTIATOR_CROSS_SLOT_PRIOS slot2's ad carries slot1_RemoteUserPrio, the
    EUP of the user on slot1, so its START can depend on it; by default the attribute is absent."""
    slots = _machine("m", "bob@d", "slot1_RemoteUserPrio > 5000")
    subs = submitters(slots, {"alice@d": many_jobs(1)})
    assert negotiate(START, slots, subs, _accountant()).result.matches == []
    out = negotiate(START, slots, subs, _accountant(), CROSS)
    assert [m.slot for m in out.result.matches] == ["slot2@m"]


def test_prefix_follows_startd_resource_prefix() -> None:
    """The prefix is STARTD_RESOURCE_PREFIX (default ``slot``)."""
    slots = _machine("m", "bob@d", "vm1_RemoteUserPrio > 5000", prefix="vm")
    subs = submitters(slots, {"alice@d": many_jobs(1)})
    assert negotiate(START, slots, subs, _accountant(), CROSS).result.matches == []
    pol = NegotiatorPolicy(cross_slot_prios=True, startd_resource_prefix="vm")
    assert len(negotiate(START, slots, subs, _accountant(), pol).result.matches) == 1


def _three_shapes() -> list:
    """Three jobs of three autoclusters: each gets a fresh candidate list."""
    return [job(1, 0), job(2, 0, RequestMemory=600), job(3, 0, RequestMemory=700)]


def test_sibling_usage_is_live() -> None:
    """slot<N>_RemoteUserResourcesInUse follows the matches of the cycle. bob runs
    one job; two free slots accept jobs only while he uses fewer than two, so he gets one more."""
    slots = _machine("a", "bob@d", "slot1_RemoteUserResourcesInUse < 2")
    slots.append(slot("slot3@a", TotalSlots=2, Start="=slot1_RemoteUserResourcesInUse < 2", slot1_RemoteUser="bob@d"))
    subs = submitters(slots, {"bob@d": _three_shapes()}, running={"bob@d": 1})
    out = negotiate(START, slots, subs, _accountant(), CROSS)
    assert [m.slot for m in out.result.matches] == ["slot2@a"]


def test_slots_watching_different_users_do_not_share_a_class() -> None:
    """The live values belong to users: machine a's free slot watches bob, machine b's watches
    carol. bob's match raises his usage only, so b's slot still takes his second job."""
    slots = _machine("a", "bob@d", "slot1_RemoteUserResourcesInUse < 2") + \
        _machine("b", "carol@d", "slot1_RemoteUserResourcesInUse < 2")
    subs = submitters(slots, {"bob@d": _three_shapes()}, running={"bob@d": 1})
    out = negotiate(START, slots, subs, _accountant(), CROSS)
    assert [m.slot for m in out.result.matches] == ["slot2@a", "slot2@b"]


def test_knobs() -> None:
    """param_info.in: NEGOTIATOR_CROSS_SLOT_PRIOS defaults to false; STARTD_RESOURCE_PREFIX is empty,
    which means ``slot``."""
    pol = policy_from_config(FakeConfig())
    assert not pol.cross_slot_prios and pol.startd_resource_prefix == "slot"
    pol = policy_from_config(FakeConfig(NEGOTIATOR_CROSS_SLOT_PRIOS="true", STARTD_RESOURCE_PREFIX="vm"))
    assert pol.cross_slot_prios and pol.startd_resource_prefix == "vm"
