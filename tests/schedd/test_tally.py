"""The queue's kept job counts (``schedd/tally.py``) agree with counting the queue afresh after
submits, runs, holds, releases, edits and removals; the ads and -totals use them; the ads go out
at most once per SCHEDD_MIN_INTERVAL after changes, but at once for a submitter's new idle jobs."""

from __future__ import annotations

from collections import Counter

from htcpool.protocol import JobAction, JobActionKind, Submit, UpdateAd
from htcpool.protocol.schedd import EditJobs, QueueTotals
from htcpool.schedd import ToCollector
from htcpool.schedd.ads import schedd_ads
from htcpool.schedd.tally import JobTally, key_of
from htcpool.schedd.totals import queue_totals
from tests.schedd.helpers import T0, job, run, schedd, submit


def recount(core) -> Counter:  # type: ignore[no-untyped-def]
    ctx = core.queue.context(T0)
    return Counter(key_of(ad, core.settings.accounting_domain, ctx) for ad in core.queue.jobs.values())


def act(core, kind: JobActionKind, owner: str, target: str, now: float = T0):  # type: ignore[no-untyped-def]
    return core.handle(JobAction(kind, owner, (target,), "", "test"), now)


def test_kept_counts_follow_every_change() -> None:
    core = schedd(accounting_domain="example.org")
    submit(core, "", "", "", owner="alice")
    submit(core, "", 'AccountingGroup = "g.bob"', owner="bob")
    submit(core, 'AccountingGroup = strcat("g.", "carol")', owner="carol")  # counted when read
    run(core, (1, 0))
    act(core, JobActionKind.HOLD, "alice", "1.1")
    act(core, JobActionKind.HOLD, "bob", "2")
    act(core, JobActionKind.RELEASE, "bob", "2.0")
    core.handle(EditJobs("alice", ("AccountingGroup",), ('"g.alice"',), ("1.2",)), T0)
    act(core, JobActionKind.REMOVE, "bob", "2.1")
    tally = core.queue.tally
    assert tally.volatile == {(3, 0)}
    assert tally.current(core.queue.jobs, "example.org", core.queue.context(T0)) == recount(core)
    everything = queue_totals(core.queue, QueueTotals(""), T0).everything
    assert everything == {"1": 3, "2": 1, "5": 1}, everything
    subs = {str(a["Name"]): (a["IdleJobs"], a["RunningJobs"], a["HeldJobs"])
            for a in schedd_ads(core.queue, "h", "http://h:1", T0, T0)[1:]}
    assert subs == {"alice@example.org": (0, 1, 1), "g.alice@example.org": (1, 0, 0),
                    "bob@example.org": (1, 0, 0), "g.carol@example.org": (1, 0, 0)}


def test_a_new_accounting_domain_recounts() -> None:
    core = schedd(accounting_domain="one.org")
    submit(core, "", owner="alice")
    tally = core.queue.tally
    ctx = core.queue.context(T0)
    assert set(tally.current(core.queue.jobs, "two.org", ctx)) == {("alice@two.org", None, "1")}
    fresh = JobTally()
    fresh.rebuild(core.queue.jobs.items(), "two.org", ctx)
    assert fresh.counts == tally.counts


def sent(outcome) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(a.message.ad["Name"]) for a in outcome.actions
            if isinstance(a, ToCollector) and isinstance(a.message, UpdateAd)]


def test_ads_at_most_once_per_min_interval_but_at_once_for_new_idle_work() -> None:
    core = schedd(schedd_min_interval=5)  # started (and advertised) at T0
    assert sent(core.handle(Submit("alice", (job(),)), T0 + 1))  # alice's first idle job: at once
    assert sent(core.handle(Submit("alice", (job(),)), T0 + 2)) == []  # 1 s later: deferred
    assert core.next_advert == T0 + 6
    assert "bob" in " ".join(sent(core.handle(Submit("bob", (job(),)), T0 + 3)))  # bob's: at once
    assert sent(act(core, JobActionKind.HOLD, "alice", "1", T0 + 4)) == []
    assert core.next_advert == T0 + 8 and core.next_deadline(T0 + 4) <= T0 + 8
    assert "alice" in " ".join(sent(core.handle_timer(T0 + 8)))  # the deferred ads, changes and all
    assert sent(act(core, JobActionKind.HOLD, "alice", "2", T0 + 14))  # 6 s after the last: at once
