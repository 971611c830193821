"""The queue's jobs by cluster and owner (``schedd/jobindex.py``): a query narrowed by the index
gives the answer a walk over the whole queue gives, whatever the jobs' values and the
constraint, and the index follows every change of the queue."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock, parseOne
from htcpool.protocol import JobAction, JobActionKind, QueueQuery
from htcpool.protocol.schedd import QueueTotals
from htcpool.schedd.selection import candidates, in_order, matching
from htcpool.schedd.tally import JobTally
from htcpool.schedd.totals import count_by_status, queue_totals
from tests.schedd.helpers import T0, schedd, submit

CTX = EvalContext(clock=fixed_clock(int(T0)))

# values a job may hold: the indexed kinds, others that compare equal to them, expressions, none
CLUSTERS = ["1", "2", "true", "1.0", '"1"', "0 + 2", "undefined", None]
OWNERS = ['"alice"', '"ALICE"', '"bob"', "5", 'strcat("al", "ice")', '"ålice"', None]
STATUSES = ["1", "2", "5", '"x"', "1 + 1", None]
TERMS = ["ClusterId == 1", "ClusterId == 2", "MY.ClusterId == 2", "2 == ClusterId", "(ClusterId) == (1)",
         "ClusterId == 1.0", "ClusterId == true", 'Owner == "Alice"', 'Owner == "bob"', '"ALICE" == MY.Owner',
         'Owner == "ÅLICE"', 'Owner == "ålice"', "Owner == 5", "JobStatus == 1", "ClusterId =?= 1",
         "ClusterId != 2", "TARGET.ClusterId == 1", '.Owner == "bob"', "ProcId >= 0"]
Values = tuple[str | None, str | None, str | None]


def _ad(values: Values, proc: int) -> ClassAd:
    parts = [f"ProcId = {proc}"]
    for name, value in zip(("ClusterId", "Owner", "JobStatus"), values, strict=True):
        if value is not None:
            parts.append(f"{name} = {value}")
    return parseOne("[" + "; ".join(parts) + "]")


jobs_strategy = st.lists(st.tuples(st.sampled_from(CLUSTERS), st.sampled_from(OWNERS), st.sampled_from(STATUSES)),
                         max_size=12)
constraint_strategy = st.recursive(
    st.sampled_from(TERMS),
    lambda inner: st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
    max_leaves=4)


@settings(max_examples=300, deadline=None)
@given(jobs=jobs_strategy, changes=jobs_strategy, constraint=constraint_strategy)
def test_narrowed_queries_and_counts_agree_with_a_walk_over_the_queue(
        jobs: list[Values], changes: list[Values], constraint: str) -> None:
    tally = JobTally()
    queue: dict[tuple[int, int], ClassAd] = {}
    for proc, values in enumerate(jobs):
        queue[(7, proc)] = _ad(values, proc)
        tally.note((7, proc), queue[(7, proc)], CTX)
    for proc, values in enumerate(changes):  # changed, left, or new
        job_id = (7, proc)
        if proc % 3 == 2 and job_id in queue:
            del queue[job_id]
            tally.forget(job_id)
            continue
        queue[job_id] = _ad(values, proc)
        tally.note(job_id, queue[job_id], CTX)
    test = ExprTree(constraint)
    walked = [queue[job_id] for job_id in sorted(queue) if test.evaluate(queue[job_id], None, CTX) is True]
    assert list(matching(in_order(queue, tally.lookup, test), test, CTX)) == walked
    assert sorted(map(id, matching(candidates(queue, tally.lookup, test), test, CTX))) == sorted(map(id, walked))
    counts = tally.lookup.counts(test.node)
    if counts is not None:
        assert counts == count_by_status(walked)


def test_copies_are_indexed_as_the_job_they_copy() -> None:
    tally = JobTally()
    first = parseOne('[ClusterId = 3; ProcId = 0; Owner = "alice"; JobStatus = 1]')
    tally.note((3, 0), first, CTX)
    tally.note_like((3, 1), (3, 0))
    assert tally.lookup.candidates(ExprTree("ClusterId == 3").node) == {(3, 0), (3, 1)}
    assert tally.lookup.counts(ExprTree('Owner == "Alice"').node) == {"1": 2}
    tally.forget((3, 0))
    assert tally.lookup.counts(ExprTree("ClusterId == 3").node) == {"1": 1}
    tally.forget((3, 1))
    assert tally.lookup.candidates(ExprTree("ClusterId == 3").node) == set()
    assert len(tally.lookup) == 0 and tally.lookup.by_value == {"clusterid": {}, "owner": {}}


def test_a_status_that_must_be_evaluated_is_not_counted_from_the_index() -> None:
    tally = JobTally()
    tally.note((1, 0), parseOne('[ClusterId = 1; Owner = "alice"; JobStatus = 1]'), CTX)
    tally.note((1, 1), parseOne('[ClusterId = 1; Owner = "alice"; JobStatus = 0 + 2]'), CTX)
    assert tally.lookup.counts(ExprTree("ClusterId == 1").node) is None
    tally.forget((1, 1))
    assert tally.lookup.counts(ExprTree("ClusterId == 1").node) == {"1": 1}
    assert tally.lookup.counts(ExprTree("ClusterId == 1 && JobStatus == 1").node) is None  # two terms


def test_the_schedd_answers_from_the_index_as_jobs_change() -> None:
    core = schedd()
    alice = submit(core, *[""] * 5, owner="alice")
    bob = submit(core, "", "", owner="bob")
    core.handle(JobAction(JobActionKind.HOLD, "alice", (f"{alice}.1", f"{alice}.2"), "", "test"), T0)
    core.handle(JobAction(JobActionKind.REMOVE, "bob", (f"{bob}.0",), "", "test"), T0)
    ad = core.queue.jobs[(bob, 1)]  # changed in place and saved, as the schedd's handlers do
    ad["Owner"] = "carol"
    core.queue.save((bob, 1), T0)

    def procs(constraint: str) -> list[tuple[object, object]]:
        return [(ad["ClusterId"], ad["ProcId"]) for ad in core.handle(QueueQuery(constraint), T0).reply.ads]

    assert procs(f"ClusterId == {alice}") == [(alice, p) for p in range(5)]
    assert procs(f"ClusterId == {bob}") == [(bob, 1)]
    assert procs('Owner == "bob"') == []
    assert procs('Owner == "carol" && JobStatus == 1') == [(bob, 1)]
    assert queue_totals(core.queue, QueueTotals('Owner == "alice"'), T0).selected == {"1": 3, "5": 2}
    assert queue_totals(core.queue, QueueTotals(f"ClusterId == {bob}"), T0).selected == {"1": 1}
    core.handle(JobAction(JobActionKind.RELEASE, "alice", (str(alice),), "", "test"), T0)
    assert queue_totals(core.queue, QueueTotals('owner == "ALICE"'), T0).selected == {"1": 5}
