"""Which jobs the schedd offers, whether it takes a match, what leftovers run: back to back."""

from __future__ import annotations

import pytest

from htcpool.classad import parseOne
from htcpool.protocol import FetchRequests, IdleJobs, Ok
from htcpool.protocol.startd import ActivateClaim, ClaimReply, RequestClaim
from htcpool.schedd import BadRequest, JobStatus, Schedd
from tests.schedd.helpers import STARTD, T0, match, run, schedd, submit, to_startd

LEFTOVERS = ('[Name = "slot1@ep"; MyAddress = "http://startd.example:9618"; ClaimId = "p1"; '
             'Memory = {memory}; Cpus = 2; Requirements = TARGET.RequestCpus <= MY.Cpus]')


def offered(core: Schedd, now: float = T0, *submitters: str) -> list[tuple[int, int]]:
    reply = core.handle(FetchRequests(submitters), now).reply
    assert isinstance(reply, IdleJobs) and len(reply.submitters) == len(reply.ads)
    return [(ad.eval("ClusterId"), ad.eval("ProcId")) for ad in reply.ads]


def test_idle_jobs_are_offered_best_first_except_those_on_claims() -> None:
    core = schedd()
    submit(core, "JobPrio = 0")
    submit(core, "JobPrio = 5")
    submit(core, "", owner="bob")
    assert sorted(offered(core)) == [(1, 0), (2, 0), (3, 0)]  # no submitter named: every one
    alice = offered(core, T0, "alice")
    assert alice == [(2, 0), (1, 0)]  # higher JobPrio first
    assert offered(core, T0, "bob") == [(3, 0)]
    match(core, (2, 0))  # requested: reserved, not offered again
    assert offered(core, T0, "alice") == [(1, 0)]


def test_a_deferred_job_is_offered_one_schedd_interval_before_its_time_less_its_prep_time() -> None:
    core = schedd(schedd_interval=60)
    submit(core, f"DeferralTime = {int(T0) + 1000}; DeferralPrepTime = 100")
    assert offered(core, T0) == []
    assert offered(core, T0 + 839) == []
    assert offered(core, T0 + 840) == [(1, 0)]  # 840 + 60 >= 1000 - 100


def test_deferred_jobs_due_ask_the_negotiator_for_a_cycle_at_the_periodic_evaluation() -> None:
    core = schedd(schedd_interval=60)
    submit(core, f"DeferralTime = {int(T0) + 300}")
    out = core.handle_timer(T0 + 1)
    assert not any(getattr(a.message, "reason", "") == "deferred jobs are due" for a in out.actions)
    out = core.handle_timer(T0 + 250)
    assert any(getattr(a.message, "reason", "") == "deferred jobs are due" for a in out.actions)


def test_a_match_is_taken_only_for_an_idle_job_and_an_unknown_claim() -> None:
    core = schedd(accounting_domain="example.org")
    submit(core, "")
    submit(core, "")
    [request] = to_startd(match(core, (1, 0), preempt=("old",)))
    assert isinstance(request, RequestClaim) and request.claim_id == "c1"
    assert request.schedd == "schedd@submit" and request.preempt_claim_ids == ("old",)
    assert match(core, (2, 0), "c1").reply == Ok("match not taken")  # claim already held
    assert match(core, (9, 0), "c9").reply == Ok("match not taken")  # no such job
    core.queue.hold((2, 0), None, T0)
    assert match(core, (2, 0), "c2").actions == []  # not idle
    with pytest.raises(BadRequest, match="MyAddress"):
        match(core, (1, 0), "c3", slot='[Name = "slot1@ep"]')


def test_claim_requests_carry_the_submitters_accounting_name() -> None:
    core = schedd(accounting_domain="example.org")
    submit(core, 'AccountingGroup = "physics.alice"')
    [request] = to_startd(match(core, (1, 0)))
    assert request.request.eval("AccountingGroup") == "physics.alice@example.org"
    assert core.queue.jobs[(1, 0)].eval("AccountingGroup") == "physics.alice"  # the job ad is untouched
    [activate] = to_startd(core.handle(ClaimReply("c1", True), T0))
    assert isinstance(activate, ActivateClaim)
    assert activate.job.eval("AccountingGroup") == "physics.alice@example.org"


def test_leftovers_of_a_partitionable_slot_are_claimed_for_the_next_job_that_fits() -> None:
    core = schedd()
    submit(core, "RequestCpus = 2", "RequestCpus = 8", "RequestCpus = 1")
    match(core, (1, 0))
    out = core.handle(ClaimReply("c1", True, slot="slot1_1@ep", leftovers=parseOne(LEFTOVERS.format(memory=2048))),
                      T0)
    request, activate = to_startd(out)  # the leftovers' claim first: the next claim waits on it
    assert isinstance(activate, ActivateClaim) and activate.claim_id == "c1"
    assert isinstance(request, RequestClaim) and request.claim_id == "p1"
    assert request.request.eval("ProcId") == 2  # proc 1 asks for 8 cpus: the leftovers' 2 do not fit
    assert core.claims.claims["p1"].job == (1, 2)


def test_leftovers_are_left_alone_when_the_knob_is_off_or_nothing_fits() -> None:
    core = schedd(claim_partitionable_leftovers=False)
    submit(core, "RequestCpus = 1", "RequestCpus = 1")
    match(core, (1, 0))
    out = core.handle(ClaimReply("c1", True, leftovers=parseOne(LEFTOVERS.format(memory=2048))), T0)
    assert [type(m) for m in to_startd(out)] == [ActivateClaim]
    core = schedd()
    submit(core, "RequestCpus = 1", "RequestCpus = 1")
    match(core, (1, 0))
    out = core.handle(ClaimReply("c1", True, leftovers=parseOne(LEFTOVERS.format(memory=100))), T0)
    assert [type(m) for m in to_startd(out)] == [ActivateClaim]  # the job wants 512 MB or more


def test_leftovers_do_not_take_a_deferred_job_before_it_may_be_offered() -> None:
    core = schedd(schedd_interval=60)
    submit(core, "RequestCpus = 1", f"RequestCpus = 1; DeferralTime = {int(T0) + 5000}")
    match(core, (1, 0))
    out = core.handle(ClaimReply("c1", True, leftovers=parseOne(LEFTOVERS.format(memory=2048))), T0)
    assert [type(m) for m in to_startd(out)] == [ActivateClaim]


def test_a_running_job_is_not_offered() -> None:
    core = schedd()
    submit(core, "", "")
    run(core, (1, 0))
    assert core.queue.status((1, 0)) == JobStatus.RUNNING
    assert offered(core) == [(1, 1)]
    assert core.queue.jobs[(1, 0)].eval("StartdAddress") == STARTD
