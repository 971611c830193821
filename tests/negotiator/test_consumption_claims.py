"""Consumption policies in the negotiator (the HTCondor manual's "condor_negotiator-Side Resource
Consumption Policies" and "User Priorities and Negotiation"): one p-slot matched many times in a
cycle, each match charged what it consumes, shared between submitters by the pie, each match
limited by and given one of the claim ids the slot offers (``NumClaims``, ``ClaimIdList``)."""

from __future__ import annotations

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import Accountant, Match, PreemptState, match_messages, negotiate
from tests.negotiator.helpers import START, count_by, many_jobs, slot, submitters


def _cp_pslot(name: str, cpus: int, **attrs: object) -> ClassAd:
    ad = slot(name, Cpus=cpus, Memory=cpus * 1024, PartitionableSlot=True, SlotType="Partitionable",
              MachineResources="Cpus Memory Disk", **attrs)
    ad["Requirements"] = ExprTree("START && TARGET.RequestCpus <= Cpus && TARGET.RequestMemory <= Memory")
    ad["ConsumptionCpus"] = ExprTree("quantize(TARGET.RequestCpus,{1})")
    ad["ConsumptionMemory"] = ExprTree("quantize(TARGET.RequestMemory,{128})")
    ad["ConsumptionDisk"] = ExprTree("quantize(TARGET.RequestDisk,{1024})")
    return ad


def _accountant(factors: dict[str, float]) -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    for name, factor in factors.items():
        acct.set_priority_factor(name, factor)
    return acct


def test_two_equal_users_split_one_consumption_pslot_by_fair_share() -> None:
    p = _cp_pslot("slot1@m", 8)
    jobs = {"alice@d": many_jobs(8, 1), "bob@d": many_jobs(8, 2)}
    acct = _accountant({"alice@d": 1000, "bob@d": 1000})
    out = negotiate(START, [p], submitters([p], jobs), acct)
    assert count_by(out.result.matches) == {"alice@d": 4, "bob@d": 4}
    assert acct.weighted_usage("alice@d") == acct.weighted_usage("bob@d") == 4


def test_priority_factors_three_to_one_split_it_two_and_six() -> None:
    """alice's effective priority is 3 times bob's: her pie slice is a third of his, 2 of 8."""
    p = _cp_pslot("slot1@m", 8)
    jobs = {"alice@d": many_jobs(8, 1), "bob@d": many_jobs(8, 2)}
    out = negotiate(START, [p], submitters([p], jobs), _accountant({"alice@d": 3000, "bob@d": 1000}))
    assert count_by(out.result.matches) == {"alice@d": 2, "bob@d": 6}


def test_matches_stop_when_the_claim_ids_run_out() -> None:
    """NumClaims 3 on 8 cores: 3 matches; NumClaims 0: the slot is not offered at all."""
    three = _cp_pslot("slot1@m", 8, NumClaims=3)
    out = negotiate(START, [three], submitters([three], {"u@d": many_jobs(8)}), _accountant({}))
    assert len(out.result.matches) == 3
    none = _cp_pslot("slot1@m", 8, NumClaims=0)
    out = negotiate(START, [none], submitters([none], {"u@d": many_jobs(8)}), _accountant({}))
    assert out.result.matches == []


def _match(user: str, proc: int) -> Match:
    return Match(user, "http://schedd", (1, proc), "slot1@m", PreemptState.NONE, 1.0, "<none>")


def test_each_match_gets_its_own_claim_id_from_the_list() -> None:
    """Each claim id is offered once per cycle (the driver keeps the set of those handed out);
    with none left the match is dropped; the schedd never sees the list."""
    p = _cp_pslot("slot1@m", 2, MyAddress="http://startd", ClaimId="<own>", ClaimIdList=" <a> <b>")
    used: set[str] = set()
    got = [match_messages(_match("alice@d", n), {"slot1@m": p}, used) for n in range(3)]
    assert [m.info.claim_id if m else None for m in got] == ["<a>", "<b>", None]
    assert [m.notification.claim_id for m in got if m] == ["<a>", "<b>"]
    assert all("ClaimIdList" not in m.info.slot_ad and "ClaimId" not in m.info.slot_ad for m in got if m)
    assert used == {"<a>", "<b>"}
    plain = _cp_pslot("slot1@m", 2, MyAddress="http://startd", ClaimId="<own>")
    assert [match_messages(_match("u@d", n), {"slot1@m": plain}, used).info.claim_id  # type: ignore[union-attr]
            for n in range(2)] == ["<own>", "<own>"]
