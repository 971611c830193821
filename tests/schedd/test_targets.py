"""Which jobs condor_hold/rm/release/vacate_job/prio arguments name."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext
from htcpool.schedd.targets import select_jobs

JOBS = {(1, 0): ClassAd({"Owner": "alice", "JobPrio": 0}), (1, 1): ClassAd({"Owner": "alice", "JobPrio": 5}),
        (2, 0): ClassAd({"Owner": "bob", "JobPrio": 0})}


@pytest.mark.parametrize("targets,constraint,expected,missing", [
    (("1",), "", [(1, 0), (1, 1)], []),
    (("1.1",), "", [(1, 1)], []),
    (("bob",), "", [(2, 0)], []),
    ((), "JobPrio > 1", [(1, 1)], []),
    (("3", "1.7", "carol"), "", [], ["Cluster 3 not found", "Job 1.7 not found", "User carol has no jobs"]),
])
def test_selection(targets, constraint, expected, missing) -> None:
    chosen = select_jobs(JOBS, targets, constraint, EvalContext())
    assert chosen.jobs == expected and chosen.missing == missing


def test_malformed_constraint_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="does not parse"):
        select_jobs(JOBS, (), "JobPrio >", EvalContext())
