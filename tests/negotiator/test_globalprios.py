"""USE_GLOBAL_JOB_PRIOS (HTCondor 25 ``matchmaker.cpp``): one submitter entry per JobPrioArray value
(``obtainAdsFromCollector``), JobPrio between EUP and starvation in the submitter order
(``submitterLessThan``) and neighbouring entries merged (``negotiateWithGroup``)."""

from __future__ import annotations

from htcpool.classad import EvalContext, fixed_clock
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate, policy_from_config
from htcpool.negotiator.globalprios import JobPriosSource
from tests.negotiator.helpers import START, count_by, job, slot, submitters
from tests.negotiator.test_policy import FakeConfig

GLOBAL = NegotiatorPolicy(use_global_job_prios=True)


def _accountant(prios: dict[str, float] | None = None) -> Accountant:
    acct = Accountant()
    acct.update_priorities(START)
    for name, p in (prios or {}).items():
        acct.set_priority(name, p)
    return acct


def test_high_priority_job_of_another_user_goes_first() -> None:
    """``submitterLessThan``: at equal EUP, bob's JobPrio-10 job is negotiated before alice's
    JobPrio-0 job only with USE_GLOBAL_JOB_PRIOS; without it the tie goes to alice (input order)."""
    slots = [slot("s@m")]
    jobs = {"alice@d": [job(1, 0, JobPrio=0)], "bob@d": [job(2, 0, JobPrio=10)]}
    plain = negotiate(START, slots, submitters(slots, jobs), _accountant())
    assert [m.submitter for m in plain.result.matches] == ["alice@d"]
    out = negotiate(START, slots, submitters(slots, jobs, GLOBAL), _accountant(), GLOBAL)
    assert [(m.submitter, m.job) for m in out.result.matches] == [("bob@d", (2, 0))]


def test_user_priority_still_comes_first() -> None:
    """``submitterLessThan``: EUP is the first key; JobPrio only orders submitters of equal EUP."""
    slots = [slot("s@m")]
    jobs = {"alice@d": [job(1, 0, JobPrio=0)], "bob@d": [job(2, 0, JobPrio=10)]}
    out = negotiate(START, slots, submitters(slots, jobs, GLOBAL), _accountant({"bob@d": 5}), GLOBAL)
    assert [m.submitter for m in out.result.matches] == ["alice@d"]


def test_neighbouring_entries_of_one_submitter_merge() -> None:
    """``negotiateWithGroup``: alice's entries for JobPrio 10 and 5 sort next to each other and
    merge into one session for the band [5, 10], so her unmatchable autocluster is rejected once;
    with bob's JobPrio-7 entry between them they stay apart and each session rejects it."""
    slots = [slot("s@m")]
    alice = [job(1, 0, JobPrio=10, RequestMemory=999999), job(2, 0, JobPrio=5, RequestMemory=999999)]
    out = negotiate(START, slots, submitters(slots, {"alice@d": alice}, GLOBAL), _accountant(), GLOBAL)
    assert [r.job for r in out.result.rejections] == [(1, 0)]
    jobs = {"alice@d": alice, "bob@d": [job(3, 0, JobPrio=7)]}
    out = negotiate(START, slots, submitters(slots, jobs, GLOBAL), _accountant(), GLOBAL)
    assert [(r.submitter, r.job) for r in out.result.rejections] == [("alice@d", (1, 0)), ("alice@d", (2, 0))]
    assert [m.submitter for m in out.result.matches] == ["bob@d"]


def test_entries_share_the_submitters_share_and_jobs() -> None:
    """``obtainAdsFromCollector`` and ``negotiateWithGroup``: entries of one submitter are separate
    sessions with one share: alice's JobPrio-3 entry uses her half of the four slots, bob's
    JobPrio-2 entry comes next, her JobPrio-1 entry gets nothing more on that spin and the last slot
    on the next; no job twice."""
    slots = [slot(f"s{i}@m") for i in range(4)]
    alice = [job(1, p, JobPrio=3 if p < 2 else 1) for p in range(4)]
    jobs = {"alice@d": alice, "bob@d": [job(2, 0, JobPrio=2)]}
    out = negotiate(START, slots, submitters(slots, jobs, GLOBAL), _accountant(), GLOBAL)
    assert [(m.submitter, m.job) for m in out.result.matches] == [
        ("alice@d", (1, 0)), ("alice@d", (1, 1)), ("bob@d", (2, 0)), ("alice@d", (1, 2))]
    assert out.stats.num_idle_jobs == 5  # each submitter's IdleJobs, counted once


def test_submitter_without_idle_jobs_has_no_entry() -> None:
    """``obtainAdsFromCollector``: entries come from JobPrioArray, which is empty without idle jobs,
    so a submitter with only running jobs takes no part in the shares."""
    slots = [slot(f"s{i}@m") for i in range(4)]
    subs = submitters(slots, {"alice@d": [job(1, p) for p in range(4)], "carol@d": []},
                      running={"carol@d": 2})
    plain = negotiate(START, slots, subs, _accountant())
    assert plain.result.shares["alice@d"].share == 0.5 and "carol@d" in plain.result.shares
    out = negotiate(START, slots, subs, _accountant(), GLOBAL)
    assert out.result.shares["alice@d"].share == 1.0 and "carol@d" not in out.result.shares
    assert count_by(out.result.matches) == {"alice@d": 4}


def test_job_prio_array_is_capped() -> None:
    """param_info.in MAX_GLOBAL_JOB_PRIOS (500): the schedd lists only that many priorities, the
    best ones; jobs at the others are not negotiated."""
    slots = [slot(f"s{i}@m") for i in range(5)]
    jobs = {"alice@d": [job(1, 0, JobPrio=3), job(2, 0, JobPrio=2), job(3, 0, JobPrio=1)]}
    pol = NegotiatorPolicy(use_global_job_prios=True, max_global_job_prios=2)
    out = negotiate(START, slots, submitters(slots, jobs, pol), _accountant(), pol)
    assert [m.job for m in out.result.matches] == [(1, 0), (2, 0)]


def test_band_request_lists() -> None:
    """``negotiate`` (``JOBPRIO_MIN``/``JOBPRIO_MAX``): for a band the schedd sends its idle jobs
    with JobPrio in the band, in its order, consecutive jobs of one autocluster in one request;
    placed jobs are gone."""
    slots = [slot("s@m")]
    jobs = [job(1, 0, JobPrio=9), job(1, 1, JobPrio=5), job(2, 0, JobPrio=5, RequestMemory=700), job(1, 2, JobPrio=1)]
    (sub,) = submitters(slots, {"u@d": jobs})
    source = JobPriosSource(sub.requests, EvalContext(clock=fixed_clock(START)))
    assert source.array(500) == [9, 5, 1] and source.array(1) == [9]
    assert [(r.jobs, r.job_prios) for r in source.requests_for((1, 9))] == [
        (((1, 0), (1, 1)), (9, 5)), (((2, 0),), (5,)), (((1, 2),), (1,))]
    band = source.requests_for((1, 5))
    assert [r.jobs for r in band] == [((1, 1),), ((2, 0),), ((1, 2),)]
    assert band[0].ad["JobPrio"] == 5  # the request ad is its first job's
    source.record(band, [1, 0, 0])
    assert [r.jobs for r in source.requests_for((1, 9))] == [((1, 0),), ((2, 0),), ((1, 2),)]
    assert source.idle_in((1, 9)) == 3


def test_knobs() -> None:
    """param_info.in: USE_GLOBAL_JOB_PRIOS defaults to false, MAX_GLOBAL_JOB_PRIOS to 500."""
    pol = policy_from_config(FakeConfig())
    assert not pol.use_global_job_prios and pol.max_global_job_prios == 500
    pol = policy_from_config(FakeConfig(USE_GLOBAL_JOB_PRIOS="true", MAX_GLOBAL_JOB_PRIOS="20"))
    assert pol.use_global_job_prios and pol.max_global_job_prios == 20
