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


def test_a_restored_queue_offers_its_idle_jobs_in_the_same_order_and_writes_nothing() -> None:
    from htcpool.schedd import MemoryStore

    store = MemoryStore()
    q = JobQueue(store=store)
    q.submit("alice", jobs("priority = $(Process)\nqueue 3\n"), NOW)
    q.hold((1, 0), "alice", NOW)
    again_store = MemoryStore()
    again = JobQueue(store=again_store, next_cluster=store.next_cluster)
    again.restore(store.jobs, NOW)
    assert list(again.ordered_jobs("alice")) == list(q.ordered_jobs("alice")) == [(1, 2), (1, 1)]
    assert set(again.jobs) == {(1, 0), (1, 1), (1, 2)} and again_store.jobs == {}


def test_priorities_and_accounting_groups_may_read_the_time() -> None:
    """Priority attributes and AccountingGroup are evaluated at the entry point's ``now``; one that
    cannot be evaluated at all counts as absent (priority 0, the Owner's name)."""
    q = JobQueue()
    q.submit("alice", jobs("+PostJobPrio1 = ifThenElse(CurrentTime == 1780000000, 1, -1)\n"
                           '+AccountingGroup = strcat("group_", time() % 2 == 0 ? "even" : "odd", ".alice")\n'
                           "queue 2\n"), NOW)
    q.submit("alice", jobs("+AccountingGroup = \"group_even.alice\"\nqueue\n"), NOW)
    assert q.submitters() == ["group_even.alice"]
    assert list(q.ordered_jobs("group_even.alice")) == [(1, 0), (1, 1), (2, 0)]
    q.set_priority((1, 1), "alice", 0, NOW + 1)  # re-indexed at an odd second: another group, prio -1
    assert list(q.ordered_jobs("group_even.alice")) == [(1, 0), (2, 0)]
    assert list(q.ordered_jobs("group_odd.alice")) == [(1, 1)]
    deep = "".join(f"+Step{i} = Step{i + 1} + 1\n" for i in range(300))
    q.submit("alice", jobs(deep + "+Step300 = 1\n+AccountingGroup = Step0\n+JobPrio = Step0\nqueue\n"), NOW)
    assert list(q.ordered_jobs("alice")) == [(3, 0)]
