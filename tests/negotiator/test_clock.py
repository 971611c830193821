"""The cycle's clock and the cycle's resilience.

Every expression the cycle evaluates reads the time as the cycle's ``now`` (``CurrentTime``,
``time()``), whether it is a job's request, a slot's attribute or a policy knob. A job whose
expressions cannot be evaluated at all is rejected with the error as the reason and named in the
result's ``failures``; the rest of the cycle goes on.
"""

from __future__ import annotations

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate
from tests.negotiator.helpers import START, claimed, job, many_jobs, slot, submitters

#: one core on even seconds, two on odd ones (START is even)
ALTERNATING_CPUS = "=ifThenElse(time() % 2 == 0, 1, 2)"


def _run(slots, jobs, pol=None, now=START, acct=None):  # type: ignore[no-untyped-def]
    pol = pol or NegotiatorPolicy()
    return negotiate(now, slots, submitters(slots, jobs, pol), acct or Accountant(), pol)


def _too_deep(job_ad: ClassAd) -> ClassAd:
    """The job with a chain of references deeper than evaluation allows, read by its Requirements."""
    for i in range(300):
        job_ad[f"Step{i}"] = ExprTree(f"Step{i + 1} + 1")
    job_ad["Step300"] = 1
    job_ad["Requirements"] = ExprTree("Step0 > 0 && TARGET.Cpus >= RequestCpus")
    return job_ad


def test_a_request_that_reads_the_time_is_matched_at_the_cycles_now() -> None:
    slots = [slot("s@m")]  # one core
    jobs = {"u@d": [job(1, 0, RequestCpus=ALTERNATING_CPUS)]}
    at_even = _run(slots, jobs)
    assert [(m.job, m.slot) for m in at_even.result.matches] == [((1, 0), "s@m")]
    at_odd = _run(slots, jobs, now=START + 1)
    assert at_odd.result.matches == []
    assert [(r.job, r.reason) for r in at_odd.result.rejections] == [((1, 0), "no match found")]


def test_partitionable_charges_and_depth_first_packing_read_the_time() -> None:
    """The weight of the dynamic slot a p-slot match carves and NEGOTIATOR_DEPTH_FIRST's packing
    both evaluate the job's RequestCpus."""
    pslot = slot("p@m", Cpus=4, Memory=4096, PartitionableSlot=True)
    jobs = {"u@d": many_jobs(3, RequestCpus="=ifThenElse(CurrentTime == 1800000000, 2, 8)",
                             RequestMemory=1024)}
    out = _run([pslot], jobs, NegotiatorPolicy(depth_first=True, ignore_user_priorities=True))
    assert [(m.job, m.packed_jobs, m.cost) for m in out.result.matches] == [((1, 0), ((1, 1),), 2.0)]


def test_slot_attributes_that_read_the_time() -> None:
    """A claimed slot whose RemoteUser is an expression of the time is charged to that user, and a
    slot whose Cpus reads the time is matched by what it evaluates to now."""
    busy = claimed("c@m", "x", RemoteUser='=ifThenElse(CurrentTime > 0, "bob@d", "nobody@d")')
    free = slot("f@m", Cpus="=ifThenElse(CurrentTime == 1800000000, 2, 0)")
    acct = Accountant()
    out = _run([busy, free], {"u@d": [job(1, 0, RequestCpus=2)]}, acct=acct)
    assert acct.record("bob@d").resources_used == 1
    assert [(m.job, m.slot) for m in out.result.matches] == [((1, 0), "f@m")]


def test_a_job_that_cannot_be_evaluated_is_passed_over() -> None:
    slots = [slot("s1@m"), slot("s2@m")]
    jobs = {"bad@d": [_too_deep(job(1, 0))], "good@d": [job(2, 0)]}
    out = _run(slots, jobs, NegotiatorPolicy(ignore_user_priorities=True))
    assert [(m.submitter, m.job) for m in out.result.matches] == [("good@d", (2, 0))]
    (rejection,) = out.result.rejections
    assert (rejection.submitter, rejection.job) == ("bad@d", (1, 0))
    assert rejection.reason.startswith("job could not be evaluated: ")
    assert out.result.failures == [f"job 1.0 of bad@d: {rejection.reason}"]


def test_a_job_constraint_that_cannot_be_evaluated_leaves_out_only_that_request() -> None:
    slots = [slot("s1@m"), slot("s2@m")]
    jobs = {"bad@d": [_too_deep(job(1, 0))], "good@d": [job(2, 0)]}
    pol = NegotiatorPolicy(job_constraint="Step0 > 0 || true", ignore_user_priorities=True)
    out = _run(slots, jobs, pol)
    assert [(m.submitter, m.job) for m in out.result.matches] == [("good@d", (2, 0))]
    assert out.result.rejections == []
    (failure,) = out.result.failures
    assert failure.startswith("request of job 1.0 of bad@d: NEGOTIATOR_JOB_CONSTRAINT could not be evaluated: ")
