"""Queue limits: MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER, MAX_JOBS_PER_SUBMISSION refuse a whole
submission naming the limit; MAX_JOBS_RUNNING caps what the schedd offers and starts."""

from __future__ import annotations

import pytest

from htcpool.protocol import FetchRequests, Ok, Submit
from htcpool.schedd import SubmitRejected, settings_from_config
from htcpool.schedd.limits import (
    QueueLimits,
    may_start_more,
    running_scheduler_jobs_limit,
    start_capacity,
)
from tests.schedd.helpers import T0, job, match, run, schedd, submit


def limited(**limits: int):
    return schedd(limits=QueueLimits(**limits))


def test_a_submission_past_max_jobs_per_submission_is_refused_whole() -> None:
    core = limited(max_jobs_per_submission=3)
    submit(core, "", "", "")  # exactly the limit is fine
    with pytest.raises(SubmitRejected, match="would exceed MAX_JOBS_PER_SUBMISSION .*4 jobs; the limit is 3"):
        submit(core, "", "", "", "")
    assert len(core.queue.jobs) == 3
    assert [c for c, _ in core.queue.jobs] == [1, 1, 1]


def test_max_jobs_per_owner_counts_the_owners_jobs_in_the_queue() -> None:
    core = limited(max_jobs_per_owner=3)
    submit(core, "", "")
    with pytest.raises(SubmitRejected, match="MAX_JOBS_PER_OWNER .*would hold 4; the limit is 3"):
        submit(core, "", "")
    submit(core, "", "", owner="bob")  # another owner has a count of his own
    submit(core, "")
    core.queue.remove((1, 0), None, T0)  # a job that leaves frees its place
    submit(core, "")
    assert core.queue.owners.of("alice") == 3 and core.queue.owners.of("bob") == 2


def test_max_jobs_submitted_counts_the_whole_queue() -> None:
    core = limited(max_jobs_submitted=4)
    submit(core, "", "")
    submit(core, "", owner="bob")
    with pytest.raises(SubmitRejected, match="MAX_JOBS_SUBMITTED"):
        submit(core, "", "", owner="carol")
    assert len(core.queue.jobs) == 3
    assert not any(e.cluster == 3 for e in core.queue.events)  # nothing of it was logged either


def test_a_restored_queue_keeps_its_counts() -> None:
    core = limited(max_jobs_per_owner=2)
    submit(core, "", "")
    again = schedd(limits=QueueLimits(max_jobs_per_owner=2), store=core.queue.store)  # type: ignore[arg-type]
    again.queue.restore(dict(core.queue.jobs), T0)
    with pytest.raises(SubmitRejected, match="MAX_JOBS_PER_OWNER"):
        again.handle(Submit("alice", (job(),)), T0)


def test_max_jobs_running_caps_the_offer_and_refuses_matches_at_the_limit() -> None:
    core = limited(max_jobs_running=1)
    submit(core, "", "", "")
    assert len(core.handle(FetchRequests(()), T0).reply.ads) == 3  # below the limit: all, as usual
    run(core, (1, 0))
    assert start_capacity(core) == 0
    assert core.handle(FetchRequests(()), T0).reply.ads == ()
    assert match(core, (1, 1), "c2").reply == Ok("match not taken: MAX_JOBS_RUNNING reached")
    assert "c2" not in core.claims.claims
    assert not may_start_more(core)
    core.queue.remove((1, 0), None, T0)
    assert start_capacity(core) == 1
    assert may_start_more(core)  # as many claims as the limit, one without a job in the queue: counted


def test_fewer_claims_than_the_limit_leave_room_without_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    import htcpool.schedd.limits as limits_module

    core = limited(max_jobs_running=2)
    submit(core, "", "")
    run(core, (1, 0))
    monkeypatch.setattr(limits_module, "jobs_starting_or_running", lambda schedd: pytest.fail("counted"))
    assert may_start_more(core)


def test_max_jobs_running_zero_starts_nothing() -> None:
    core = limited(max_jobs_running=0)
    submit(core, "")
    assert core.handle(FetchRequests(()), T0).reply.ads == ()


def test_the_limits_come_from_the_configuration_and_bad_values_are_reported() -> None:
    knobs = {"MAX_JOBS_PER_OWNER": "5*2", "MAX_JOBS_SUBMITTED": "many", "MAX_JOBS_RUNNING": "MIN({4, 10000})",
             "MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER": "3"}
    s = settings_from_config(knobs.get)
    assert s.limits == QueueLimits(max_jobs_submitted=2147483647, max_jobs_per_owner=10,
                                   max_jobs_per_submission=20000, max_jobs_running=4)
    assert [p.split(":")[0] for p in s.problems] == ["MAX_JOBS_SUBMITTED"]
    assert running_scheduler_jobs_limit(schedd(max_running_scheduler_jobs_per_owner=3)) == 3
