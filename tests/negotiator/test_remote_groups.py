"""What a claimed slot publishes of the match that made it, and preemption policies written with it.

HTCondor 25 (``matchmaker.cpp``, the schedd's claim request and the startd's ``Claim::publish``):
the negotiator puts the request's ``SubmitterGroup``, ``SubmitterNegotiatingGroup`` and
``SubmitterAutoregroup`` in the match as ``RemoteGroup``, ``RemoteNegotiatingGroup`` and
``RemoteAutoregroup``; the schedd copies them into its claim request; the startd publishes them in
the claimed slot's ad, beside ``RemoteUser``, ``RemoteOwner``, ``AccountingGroup`` and the job's
``ConcurrencyLimits``. The HTCondor manual's "Group Accounting" policy
``PREEMPTION_REQUIREMENTS = RemoteNegotiatingGroup =?= "<none>"`` (only slots taken as surplus
through autoregroup may be preempted) is the test of the whole chain.
"""

from __future__ import annotations

from htcpool.classad import ClassAd, parseOne
from htcpool.negotiator import Accountant, GroupPolicy, GroupSettings, NegotiatorPolicy, negotiate
from htcpool.negotiator.exchange import match_messages
from htcpool.negotiator.outcomes import Match, PreemptState
from htcpool.protocol import MatchInfo
from htcpool.protocol.startd import RequestClaim
from htcpool.schedd.claims import negotiated_attributes
from htcpool.startd import Startd
from tests.negotiator.helpers import START, claimed, many_jobs, slot, submitters
from tests.schedd.helpers import schedd, submit, to_startd
from tests.startd.helpers import claim, job, make_startd

ALICE, BOB = "group_a.alice@d", "group_b.bob@d"
AUTOREGROUP = GroupPolicy(groups=(GroupSettings("group_a", 2, autoregroup=True), GroupSettings("group_b", 2)))
SURPLUS_ONLY = NegotiatorPolicy(groups=AUTOREGROUP, preemption_requirements='RemoteNegotiatingGroup =?= "<none>"')


def _claimed_from(m: Match) -> ClassAd:
    """The slot as its startd publishes it once the match's claim is accepted."""
    attrs: dict[str, object] = {"AccountingGroup": m.submitter, "RemoteGroup": m.group or ""}
    for attr, value in negotiated_attributes(m.group or "", m.negotiating_group, m.autoregroup):
        attrs[attr] = value
    return claimed(m.slot, m.submitter, **attrs)


def test_a_match_names_its_group_and_the_round_that_made_it() -> None:
    """Group round first (quota 2), then the autoregroup round under ``<none>`` for the rest."""
    slots = [slot(f"s{i}@m", MyAddress="http://m", ClaimId=f"c{i}") for i in range(4)]
    out = negotiate(START, slots, submitters(slots, {ALICE: many_jobs(4)}, SURPLUS_ONLY), Accountant(), SURPLUS_ONLY)
    rounds = sorted((m.group, m.negotiating_group, m.autoregroup) for m in out.result.matches)
    assert rounds == [("group_a", "<none>", True)] * 2 + [("group_a", "group_a", False)] * 2
    infos = [match_messages(m, {s["Name"]: s for s in slots}) for m in out.result.matches]
    assert sorted((i.info.group, i.info.negotiating_group, i.info.autoregroup) for i in infos if i) == rounds


def test_without_groups_the_match_has_no_group_and_negotiates_under_none() -> None:
    slots = [slot("s@m")]
    out = negotiate(START, slots, submitters(slots, {"alice@d": many_jobs(1)}), Accountant())
    (m,) = out.result.matches
    assert (m.group, m.negotiating_group, m.autoregroup) == (None, "<none>", False)
    assert negotiated_attributes("", m.negotiating_group, m.autoregroup) == (
        ("RemoteNegotiatingGroup", "<none>"), ("RemoteAutoregroup", False))


def test_the_schedd_claim_request_carries_the_negotiated_attributes() -> None:
    core = schedd()
    cluster = submit(core, "")
    slot_ad = parseOne('[Name = "slot1@ep"; MyAddress = "http://startd.example:9618"; Memory = 4096; '
                       'Cpus = 4; Requirements = true]')
    outcome = core.handle(MatchInfo("c1", slot_ad, cluster, 0, "alice", (), group="group_a",
                                    negotiating_group="<none>", autoregroup=True), START)
    (request,) = [m for m in to_startd(outcome) if isinstance(m, RequestClaim)]
    assert (request.request["RemoteGroup"], request.request["RemoteNegotiatingGroup"],
            request.request["RemoteAutoregroup"]) == ("group_a", "<none>", True)
    assert "RemoteGroup" not in core.queue.jobs[(cluster, 0)]  # the queue's job is left as it was


def test_the_startd_publishes_them_with_the_job_limits_and_a_plain_claim_publishes_none() -> None:
    startd = make_startd(cpus=1)
    request = job(RemoteGroup="group_a", RemoteNegotiatingGroup="<none>", RemoteAutoregroup=True,
                  ConcurrencyLimits="license.matlab:2, DB")
    claim(startd, "slot1", request, 10.0, match=True)
    startd.evaluate(11.0)
    ad = _claimed_ad(startd)
    assert (ad["RemoteGroup"], ad["RemoteNegotiatingGroup"], ad["RemoteAutoregroup"]) == ("group_a", "<none>", True)
    assert ad["ConcurrencyLimits"] == "license.matlab:2, DB" and ad["RemoteUser"] == "alice@example.org"
    plain = make_startd(cpus=1)
    claim(plain, "slot1", job(), 10.0, match=True)
    plain.evaluate(11.0)
    assert not {"remotegroup", "remotenegotiatinggroup", "concurrencylimits"} & {k.lower() for k in _claimed_ad(plain)}


def _claimed_ad(startd: Startd) -> ClassAd:
    (ad,) = [s.ad for s in startd.slots if s.state.value == "Claimed"]
    return ad


def test_only_autoregroup_surplus_is_preempted_by_remote_negotiating_group() -> None:
    """Cycle 1: group_a (quota 2, autoregroup) takes its 2 slots in its own round and 2 more as
    surplus under ``<none>``. Cycle 2: group_b (quota 2) arrives; with
    ``PREEMPTION_REQUIREMENTS = RemoteNegotiatingGroup =?= "<none>"`` it preempts exactly the two
    surplus slots, never group_a's own."""
    slots = [slot(f"s{i}@m") for i in range(4)]
    acct = Accountant()
    first = negotiate(START, slots, submitters(slots, {ALICE: many_jobs(4)}, SURPLUS_ONLY), acct, SURPLUS_ONLY)
    assert len(first.result.matches) == 4
    busy = [_claimed_from(m) for m in first.result.matches]
    surplus = {m.slot for m in first.result.matches if m.negotiating_group == "<none>"}
    subs = submitters(busy, {ALICE: [], BOB: many_jobs(4, 2)}, SURPLUS_ONLY, running={ALICE: 4})
    second = negotiate(START + 60, busy, subs, acct, SURPLUS_ONLY)
    assert {m.slot for m in second.result.matches} == surplus
    assert {(m.submitter, m.reason, m.preempted_user) for m in second.result.matches} == {
        (BOB, PreemptState.PRIO, ALICE)}
