"""Random command sequences never leave a job in a state the table does not allow."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from htcpool.schedd import (
    TRANSITIONS,
    IllegalTransition,
    JobQueue,
    JobStatus,
    LogEvent,
    format_event,
)
from htcpool.schedd.errors import PermissionDenied, UnknownJob
from tests.schedd.test_seeds import jobs

OPS = st.lists(st.tuples(st.sampled_from(["submit", "hold", "release", "remove", "prio", "start",
                                          "finish", "vacate", "suspend", "unsuspend", "timer"]),
                         st.integers(0, 5), st.sampled_from(["alice", "bob", None])), max_size=40)
TEMPLATES = [jobs("queue 2\n"), jobs("on_exit_remove = false\nqueue\n"),
             jobs("periodic_release = true\non_exit_hold = true\nqueue\n")]


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_random_sequences_stay_legal(ops: list[tuple[str, int, str | None]]) -> None:
    q = JobQueue()
    now = 1_000_000.0
    reachable = {s for s, _ in TRANSITIONS} | set(TRANSITIONS.values())
    for op, n, user in ops:
        now += 7
        ids = sorted(q.jobs)
        job = ids[n % len(ids)] if ids else (1, 0)
        before = q.status(job) if job in q.jobs else None
        try:
            if op == "submit":
                q.submit(user or "alice", TEMPLATES[n % 3], now)
            elif op == "hold":
                q.hold(job, user, now)
            elif op == "release":
                q.release(job, user, now)
            elif op == "remove":
                q.remove(job, user, now)
            elif op == "prio":
                q.set_priority(job, user, n, now)
            elif op == "start":
                q.start(job, now)
            elif op == "finish":
                q.finish(job, now, n)
            elif op == "vacate":
                q.vacate(job, user, now)
            elif op == "suspend":
                q.suspend(job, now)
            elif op == "unsuspend":
                q.unsuspend(job, now)
            else:
                q.handle_timer(now)
        except (IllegalTransition, PermissionDenied, UnknownJob):
            if job in q.jobs:
                assert q.status(job) == before
        for job_id, ad in q.jobs.items():
            status = JobStatus(ad["JobStatus"])
            assert status in reachable and status != JobStatus.REMOVED
            idle_in_index = job_id in q.index.current
            assert idle_in_index == (status == JobStatus.IDLE)
            assert ad["CumulativeSuspensionTime"] >= 0
    for event in q.events:
        assert format_event(event).endswith("...\n")


def test_event_log_text() -> None:
    held = LogEvent(12, 3, 0, 1795307086, reason="via condor_hold (by user alice)", hold_code=1)
    assert format_event(held) == ("012 (003.000.000) 2026-11-22 00:24:46 Job was held.\n"
                                  "\tvia condor_hold (by user alice)\n\tCode 1 Subcode 0\n...\n")
    submitted = LogEvent(0, 1, 0, 1795307086, host="<127.0.0.1:44057?addrs=127.0.0.1-44057&alias=node1>")
    assert format_event(submitted, zone=3600).startswith(
        "000 (001.000.000) 2026-11-22 01:24:46 Job submitted from host: <127.0.0.1:44057?")
    done = format_event(LogEvent(5, 1, 0, 0, return_value=0))
    assert "\t(1) Normal termination (return value 0)\n\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage" in done
    assert format_event(LogEvent(10, 1, 2, 0)).endswith(
        "Job was suspended.\n\tNumber of processes actually suspended: 1\n...\n")
