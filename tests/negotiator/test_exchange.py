"""What the negotiator asks the schedds and what a match becomes, decided without I/O."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.negotiator import (
    AutoclusterTable,
    Match,
    NegotiatorPolicy,
    PreemptState,
    fetch_request,
    match_messages,
    significant_attributes,
    submitter_entries,
    submitters_by_schedd,
)
from htcpool.protocol import FetchRequests, IdleJobs, MatchInfo
from htcpool.protocol.startd import MatchNotification
from tests.negotiator.helpers import START, job, slot


def _submitter(name: str, schedd: object, idle: object, running: object = 0) -> ClassAd:
    return ClassAd({"MyType": "Submitter", "Name": name, "MyAddress": schedd, "IdleJobs": idle,
                    "RunningJobs": running})


def test_only_submitters_with_work_and_an_address_are_asked() -> None:
    ads = [_submitter("a@x", "http://s1", 2), _submitter("b@x", "http://s2", 0, 3),
           _submitter("c@x", "http://s1", 0), _submitter("d@x", 7, 5), _submitter("e@x", "http://s1", 1)]
    by_schedd = submitters_by_schedd(ads)
    assert {url: [a["Name"] for a in group] for url, group in by_schedd.items()} == {
        "http://s1": ["a@x", "e@x"], "http://s2": ["b@x"]}
    assert fetch_request(by_schedd["http://s1"]) == FetchRequests(("a@x", "e@x"))
    assert fetch_request(by_schedd["http://s2"]) is None  # running jobs only: nothing to fetch


def test_the_schedds_idle_jobs_become_each_submitters_requests() -> None:
    ads = [_submitter("a@x", "http://s1", 2), _submitter("b@x", "http://s1", 0, 1)]
    table = AutoclusterTable(significant_attributes([slot("s1")], NegotiatorPolicy()))
    idle = IdleJobs(("a@x", "a@x"), (job(1, 0), job(1, 1)))
    a, b = submitter_entries("http://s1", ads, idle, table, START)
    assert (a.name, a.schedd, [r.jobs for r in a.requests]) == ("a@x", "http://s1", [((1, 0), (1, 1))])
    assert (b.name, b.requests, b.running_jobs) == ("b@x", [], 1)
    assert [e.requests for e in submitter_entries("http://s1", ads, None, table, START)] == [[], []]


def _match(slot_name: str, reason: PreemptState = PreemptState.NONE, dslots: tuple[str, ...] = ()) -> Match:
    return Match("a@x", "http://schedd", (4, 2), slot_name, reason, 1.0, "<none>", preempted_dslots=dslots)


def _with_claims(ad: ClassAd, **claims: str) -> ClassAd:
    ad["MyAddress"] = "http://startd"
    for k, v in claims.items():
        ad[k] = v
    return ad


def test_an_idle_slot_is_claimed_with_its_own_claim_id_and_the_schedd_never_sees_it() -> None:
    slots = {"s1": _with_claims(slot("s1"), ClaimId="<own>", PreemptClaimId="<pre>")}
    out = match_messages(_match("s1"), slots)
    assert out is not None
    assert (out.startd, out.notification, out.schedd) == ("http://startd", MatchNotification("<own>"), "http://schedd")
    assert isinstance(out.info, MatchInfo)
    assert (out.info.claim_id, out.info.cluster, out.info.proc, out.info.submitter) == ("<own>", 4, 2, "a@x")
    assert "ClaimId" not in out.info.slot_ad and "PreemptClaimId" not in out.info.slot_ad
    assert slots["s1"]["ClaimId"] == "<own>"  # the cycle's ad is left as it was


def test_preemption_uses_the_preempting_claim_id_except_through_a_partitionable_slot() -> None:
    busy = _with_claims(slot("s1", State="Claimed"), ClaimId="<own>", PreemptClaimId="<pre>")
    out = match_messages(_match("s1", PreemptState.PRIO), {"s1": busy})
    assert out is not None and out.info.claim_id == "<pre>" and out.info.preempt_claim_ids == ()
    pslot = _with_claims(slot("p", PartitionableSlot=True), ClaimId="<p>")
    dslots = {"p": pslot, "p_1": _with_claims(slot("p_1"), ClaimId="<d1>"), "p_2": slot("p_2")}
    out = match_messages(_match("p", PreemptState.RANK, ("p_1", "p_2", "gone")), dslots)
    assert out is not None and out.info.claim_id == "<p>" and out.info.preempt_claim_ids == ("<d1>",)


def test_a_match_without_a_claim_id_or_an_address_is_dropped() -> None:
    assert match_messages(_match("s1"), {"s1": slot("s1", MyAddress="http://startd")}) is None
    assert match_messages(_match("s1"), {"s1": slot("s1", ClaimId="<own>")}) is None
    assert match_messages(_match("missing"), {}) is None




def test_slot_ads_are_the_ads_the_matches_name() -> None:
    """Only the matched slots, as the collector gave them (not the cycle's decorated copies);
    of two ads with one name, the one the cycle matched (the later, as a dict over all would)."""
    from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
    from tests.negotiator.helpers import START, claimed, job, submitters
    from tests.negotiator.helpers import slot as free

    policy = NegotiatorPolicy(preemption_requirements="True")
    first, later = free("a@m", Memory=100), free("a@m", Memory=4096)
    busy = claimed("b@m", "bob@d", Memory=4096)
    other = free("c@m", Memory=100)
    slots = [first, busy, other, later]
    out = negotiate(START, slots, submitters(slots, {"alice@d": [job(1, RequestMemory=1000)]}, policy),
                    Accountant(policy.accountant), policy)
    assert [m.slot for m in out.result.matches] == ["a@m"]
    assert out.slot_ads == {"a@m": later} and out.slot_ads["a@m"] is later
    out = negotiate(START, slots, submitters(slots, {}, policy), Accountant(policy.accountant), policy)
    assert out.slot_ads == {}
