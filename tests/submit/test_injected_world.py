"""condor_submit's clock and random numbers come from the ``SubmitHost``, never from the machine.

The submit time (``$(SUBMIT_TIME)``, ``$(YEAR)`` …, ``QDate``), ``time()`` in a queue count
or an ``if`` condition, and the draws of ``$RANDOM_INTEGER``/``$RANDOM_CHOICE`` are all
functions of the host the caller hands in: the same description and host give the same jobs.
"""

from __future__ import annotations

import pytest

from htcpool.submit import MemoryFileSystem, SubmitError, SubmitHost, submit_description
from htcpool.submit.queue import QueueError, parse_queue

NOW = 1_795_307_086  # 2026-11-22 00:24:46 UTC
EXECUTABLE = "executable = /bin/true\n"


def _host(now: int = NOW, seed: int = 0) -> SubmitHost:
    return SubmitHost(user="alice", cwd="/home/alice", now=now, seed=seed)


def _jobs(text: str, host: SubmitHost) -> list[dict[str, object]]:
    fs = MemoryFileSystem(sizes={"/bin/true": 1024})
    return [dict(job.items()) for job in submit_description(EXECUTABLE + text, host=host, fs=fs).jobs]


def test_the_submit_time_is_the_hosts() -> None:
    jobs = _jobs("arguments = $(SUBMIT_TIME) $(YEAR)-$(MONTH)-$(DAY)\nqueue\n", _host())
    assert jobs[0]["Args"] == f"{NOW} 2026-11-22"
    assert jobs[0]["QDate"] == NOW


def test_a_queue_count_reads_the_hosts_clock() -> None:
    assert len(_jobs("queue (time() - 1795307080)\n", _host())) == 6
    assert len(_jobs("queue (time() - 1795307080)\n", _host(NOW + 2))) == 8


def test_an_if_condition_reads_the_hosts_clock() -> None:
    text = "if time() > 1795307000\n  arguments = late\nelse\n  arguments = early\nendif\nqueue\n"
    assert _jobs(text, _host())[0]["Args"] == "late"
    assert _jobs(text, _host(1_795_306_000))[0]["Args"] == "early"


def test_a_queue_count_that_reads_the_time_needs_a_clock() -> None:
    fs = MemoryFileSystem()
    assert parse_queue("time() - 10", fs, "/", now=15).count == 5
    with pytest.raises(QueueError, match="invalid queue count"):
        parse_queue("time() - 10", fs, "/")


def test_random_draws_follow_the_hosts_seed() -> None:
    text = "arguments = $RANDOM_INTEGER(1, 1000000) $RANDOM_CHOICE(a, b, c, d, e, f, g)\nqueue 3\n"
    first = [job["Args"] for job in _jobs(text, _host(seed=7))]
    assert [job["Args"] for job in _jobs(text, _host(seed=7))] == first
    assert [job["Args"] for job in _jobs(text, _host(seed=8))] != first


def test_a_bad_condition_says_why() -> None:
    with pytest.raises(SubmitError):
        _jobs("if 1 +\nendif\nqueue\n", _host())
