"""Submitter names carry the accounting domain; job order leaves QDate out, as prio_compar does."""

from __future__ import annotations

import pytest

from htcpool.schedd import JobQueue, settings_from_config
from tests.schedd.test_seeds import NOW, jobs


@pytest.mark.parametrize(("config", "expected"), [
    ({}, ["alice", "group_physics.einstein"]),
    ({"UID_DOMAIN": "example.org"}, ["alice@example.org", "group_physics.einstein@example.org"]),
    ({"UID_DOMAIN": "example.org", "ACCOUNTING_DOMAIN": "acct.org"},
     ["alice@acct.org", "group_physics.einstein@acct.org"]),
    ({"UID_DOMAIN": "example.org", "ACCOUNTING_DOMAIN": ""}, ["alice", "group_physics.einstein"]),
])
def test_submitter_names_carry_the_accounting_domain(config: dict[str, str], expected: list[str]) -> None:
    q = JobQueue(settings_from_config(config.get))
    q.submit("alice", jobs("queue\n"), NOW)
    q.submit("alice", jobs("accounting_group = group_physics\naccounting_group_user = einstein\n"
                           "queue 2\n"), NOW)
    assert q.submitters() == expected
    assert list(q.ordered_jobs(expected[1])) == [(2, 0), (2, 1)]
    q.set_priority((2, 1), "alice", 3, NOW)  # a re-indexed job keeps its submitter name
    assert list(q.ordered_jobs(expected[1])) == [(2, 1), (2, 0)]


def test_qdate_is_not_part_of_the_order() -> None:
    q = JobQueue()
    q.submit("alice", jobs("queue\n"), NOW)
    q.submit("alice", jobs("queue\n"), NOW - 3600)  # an older QDate in a newer cluster
    q.jobs[(1, 0)]["QDate"] = NOW + 3600
    q.set_priority((1, 0), "alice", 0, NOW)
    assert list(q.ordered_jobs("alice")) == [(1, 0), (2, 0)]


def test_a_job_saved_twice_is_offered_once() -> None:
    q = JobQueue()
    q.submit("alice", jobs("queue 2\n"), NOW)
    q.set_priority((1, 1), "alice", 0, NOW)
    q.set_priority((1, 1), "alice", 0, NOW)
    assert list(q.ordered_jobs("alice")) == [(1, 0), (1, 1)]
