"""A consumption-policy p-slot offers several claims at once (the HTCondor manual's "Policy
Configuration for Execution Points", "condor_negotiator-Side Resource Consumption Policies"):
one claim id per match the negotiator may make of it in a cycle (``NUM_CLAIMS``, by default one per
core, advertised as ``NumClaims`` and the private ``ClaimIdList``). Each claim request names one;
it becomes that request's dynamic slot and a fresh id takes its place. Such replies carry no
leftovers: the negotiator shares what is left by fair share."""

from __future__ import annotations

import pytest

from htcpool.config import ConfigValueError
from htcpool.protocol.startd import ClaimReply
from htcpool.runtime.startd_ads import slot_update
from htcpool.startd import RequestClaim
from tests.startd.helpers import job, make_startd

CP = ("RunBenchmarks = false\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\nNUM_SLOTS_TYPE_1 = 1\n"
      "SLOT_TYPE_1_CONSUMPTION_POLICY = True\nSLOT_WEIGHT = Cpus\n")


def _replies(actions: list[object]) -> list[ClaimReply]:
    return [a for a in actions if isinstance(a, ClaimReply)]


def test_a_consumption_pslot_offers_one_claim_id_per_core() -> None:
    s = make_startd(CP, cpus=8, memory=8192)
    p = s.slot("slot1")
    ids = [c.id for c in p.spare_claims]
    assert len(ids) == len(set(ids)) == 8 and p.claim.id not in ids
    assert p.ad["NumClaims"] == 8
    private = slot_update(p.ad, p, "http://startd", "<127.0.0.1:1>").private
    assert private is not None and private["ClaimIdList"].split() == ids


def test_each_claim_id_becomes_its_own_dynamic_slot_without_leftovers() -> None:
    s = make_startd(CP, cpus=8, memory=8192)
    p = s.slot("slot1")
    first, second = p.spare_claims[0].id, p.spare_claims[5].id
    a = _replies(s.handle(RequestClaim(first, job(User="alice@d", ClusterId=1)), 1))
    b = _replies(s.handle(RequestClaim(second, job(User="bob@d", ClusterId=2)), 1))
    assert [(r.accepted, r.slot, r.leftovers) for r in a + b] == [
        (True, "slot1_1@test.example.org", None), (True, "slot1_2@test.example.org", None)]
    assert s.slot("slot1_1").claim.id == first and s.slot("slot1_2").claim.id == second
    assert [s.slot(n).state.value for n in ("slot1_1", "slot1_2")] == ["Claimed", "Claimed"]
    spares = [c.id for c in p.spare_claims]
    assert len(spares) == 8 and first not in spares and second not in spares
    assert p.ad["Cpus"] == 6 and p.ad["NumClaims"] == 8
    again = _replies(s.handle(RequestClaim(first, job(ClusterId=3)), 2))  # the id is slot1_1's now
    assert [(r.accepted, r.reason) for r in again] == [(False, "slot is Claimed/Idle")]
    assert len(p.children) == 2


def test_num_claims_sets_how_many_ids_and_a_slot_type_overrides_it() -> None:
    assert len(make_startd(CP + "NUM_CLAIMS = 3\n", cpus=8).slot("slot1").spare_claims) == 3
    typed = make_startd(CP + "NUM_CLAIMS = 3\nSLOT_TYPE_1_NUM_CLAIMS = 2\n", cpus=8).slot("slot1")
    assert len(typed.spare_claims) == 2 and typed.ad["NumClaims"] == 2
    with pytest.raises(ConfigValueError, match="NUM_CLAIMS = many is not a valid integer"):
        make_startd(CP + "NUM_CLAIMS = many\n", cpus=8)


def test_without_a_consumption_policy_the_reply_carries_the_leftovers() -> None:
    s = make_startd(CP.replace("SLOT_TYPE_1_CONSUMPTION_POLICY = True\n", ""), cpus=8, memory=8192)
    p = s.slot("slot1")
    assert p.spare_claims == [] and "NumClaims" not in p.ad
    assert slot_update(p.ad, p, "http://startd", "<127.0.0.1:1>").private.get("ClaimIdList") is None
    (reply,) = _replies(s.handle(RequestClaim(p.claim.id, job()), 1))
    assert reply.accepted and reply.leftovers is not None and reply.leftovers["Cpus"] == 7
