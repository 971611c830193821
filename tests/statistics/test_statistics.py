"""The statistics core: STATISTICS_TO_PUBLISH's syntax, the recent window, and each collection."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd
from htcpool.statistics import (
    NOTHING,
    Collection,
    CollectorStats,
    DaemonCoreStats,
    Publish,
    RecentSum,
    ScheddStats,
    SelfReading,
    Window,
    parse_publish,
    pool_summary,
    statistics_settings,
)

T0 = 1_800_000_000.0


@pytest.mark.parametrize(("text", "collection", "expected"), [
    (None, Collection.SCHEDD, Publish()),
    (None, Collection.DC, Publish(level=0)),
    ("DEFAULT", Collection.DC, Publish(level=0)),
    ("NONE", Collection.SCHEDD, NOTHING),
    ("", Collection.SCHEDD, NOTHING),
    ("SCHEDD:2", Collection.SCHEDD, Publish(level=2)),
    ("SCHEDD:2", Collection.DC, NOTHING),  # a collection the list does not name publishes nothing
    ("SCHEDULER:2", Collection.SCHEDD, Publish(level=2)),
    ("DAEMONCORE:1", Collection.DC, Publish(level=1)),
    ("DEFAULT:1!L, DC:2RDZL", Collection.DC, Publish(level=2, debug=True)),
    ("DEFAULT:1!L, DC:2RDZL", Collection.SCHEDD, Publish(level=1, lifetime=False)),
    ("ALL:3!R!Z", Collection.COLLECTOR, Publish(level=3, recent=False, zeros=False)),
    ("SCHEDD:R!R", Collection.SCHEDD, Publish(recent=False)),  # the last one wins
    ("schedd:none", Collection.SCHEDD, NOTHING),
    ("SCHEDD", Collection.SCHEDD, Publish()),
])
def test_statistics_to_publish_reads_as_the_manual_says(text: str | None, collection: Collection,
                                                        expected: Publish) -> None:
    problems: list[str] = []
    assert parse_publish(text, collection, problems) == expected
    assert problems == []


def test_unknown_options_and_collections_are_reported_and_skipped() -> None:
    problems: list[str] = []
    assert parse_publish("SCHEDD:2Q, BOGUS:1", Collection.SCHEDD, problems) == Publish(level=2)
    assert problems == ["option 'Q' in 'SCHEDD:2Q' is not one of 0-3, R, D, Z, L (each may follow '!')",
                        "'BOGUS' in 'BOGUS:1' is not a statistics collection (DC, SCHEDD, COLLECTOR, "
                        "NEGOTIATOR, STARTD, MASTER, TRANSFER, ALL or DEFAULT)"]


def test_window_knobs_per_collection_and_bad_values_name_the_knob() -> None:
    config = {"STATISTICS_WINDOW_SECONDS": "600", "STATISTICS_WINDOW_QUANTUM_SCHEDD": "60",
              "STATISTICS_WINDOW_SECONDS_DC": "-5", "STATISTICS_TO_PUBLISH": "DC:1X"}
    problems: list[str] = []
    schedd = statistics_settings(config.get, Collection.SCHEDD, problems)
    assert (schedd.window, schedd.quantum) == (600, 60)
    dc = statistics_settings(config.get, Collection.DC, problems)
    assert (dc.window, dc.quantum, dc.publish) == (1200, 240, Publish(level=1))
    assert problems == [
        "STATISTICS_TO_PUBLISH: option 'X' in 'DC:1X' is not one of 0-3, R, D, Z, L (each may follow '!')",
        "STATISTICS_WINDOW_SECONDS_DC = -5: expected a whole number of seconds above 0; using 1200"]


def test_recent_counts_forget_whole_buckets_once_they_leave_the_window() -> None:
    window = Window(T0, window=100, quantum=30)  # rounded up to 4 buckets of 30 s
    assert window.seconds == 120
    counter = RecentSum(window)
    counter.add(1, T0 + 5)
    counter.add(2, T0 + 40)
    assert (counter.value, counter.recent(T0 + 119)) == (3, 3)
    assert counter.recent(T0 + 120) == 2  # the first bucket [0, 30) has left
    assert counter.recent(T0 + 300) == 0 and counter.value == 3
    assert window.recent_lifetime(T0 + 45) == 45 and window.recent_lifetime(T0 + 305) == 95


def test_daemoncore_publishes_its_duty_cycle_always_and_counts_from_level_one() -> None:
    stats = DaemonCoreStats(T0, Window(T0, 1200, 240))
    stats.note_reading(SelfReading(10.0, 1000, 500, 3), T0)
    stats.note_request(0.5, T0 + 1)
    stats.note_timer(0.25, T0 + 2)
    quiet = stats.publish(Publish(level=0), T0 + 100, SelfReading(30.0, 2000, 600, 4))
    assert quiet == {"DaemonCoreDutyCycle": 0.2, "RecentDaemonCoreDutyCycle": 0.2, "MonitorSelfTime": int(T0 + 100),
                     "MonitorSelfAge": 100, "MonitorSelfCPUUsage": 20.0, "MonitorSelfImageSize": 2000,
                     "MonitorSelfResidentSetSize": 600, "MonitorSelfRegisteredSocketCount": 4}
    full = stats.publish(Publish(level=2), T0 + 100)
    assert {k: full[k] for k in ("SockMessages", "RecentSockMessages", "SocketRuntime", "TimersFired",
                                 "TimerRuntime", "DCStatsLifetime", "DCRecentWindowMax")} == {
        "SockMessages": 1, "RecentSockMessages": 1, "SocketRuntime": 0.5, "TimersFired": 1, "TimerRuntime": 0.25,
        "DCStatsLifetime": 100, "DCRecentWindowMax": 1200}
    assert "MonitorSelfTime" not in full  # no reading given
    no_recent = stats.publish(Publish(level=1, recent=False, lifetime=True), T0 + 100)
    assert "RecentSockMessages" not in no_recent and "DCRecentStatsLifetime" not in no_recent


def test_schedd_counts_job_events_and_honours_the_flags() -> None:
    stats = ScheddStats(Window(T0, 1200, 240))
    stats.count_all([(0, T0, False), (0, T0, False), (1, T0 + 1, False), (5, T0 + 2, False),
                     (1, T0 + 3, False), (4, T0 + 4, False), (1, T0 + 5, False), (5, T0 + 6, True)])
    attrs = stats.publish(Publish(), T0 + 10, running=0)
    assert {name: attrs[name] for name in ("JobsSubmitted", "JobsStarted", "JobsExited", "JobsCompleted",
                                           "JobsExitedNormally", "JobsKilled", "ShadowsStarted",
                                           "ShadowsRunning", "RecentJobsSubmitted", "StatsLifetime")} == {
        "JobsSubmitted": 2, "JobsStarted": 3, "JobsExited": 3, "JobsCompleted": 2, "JobsExitedNormally": 1,
        "JobsKilled": 1, "ShadowsStarted": 3, "ShadowsRunning": 0, "RecentJobsSubmitted": 2, "StatsLifetime": 10}
    assert "RecentWindowMax" not in attrs
    assert "RecentWindowMax" in stats.publish(Publish(level=2), T0 + 10, running=0)
    assert stats.publish(NOTHING, T0 + 10, running=0) == {}
    fresh = ScheddStats(Window(T0)).publish(Publish(zeros=False), T0, running=0)
    assert not any(name.startswith(("Jobs", "RecentJobs", "Shadows")) for name in fresh)
    assert "JobsSubmitted" not in stats.publish(Publish(lifetime=False), T0 + 10, running=0)


def test_the_collector_counts_updates_and_summarises_its_pool() -> None:
    stats = CollectorStats(Window(T0))
    stats.note_update(T0, initial=True, lost=0)
    stats.note_update(T0 + 1, initial=False, lost=2)
    assert stats.publish(Publish(), T0 + 5) == {
        "StatsLifetime": 5, "RecentStatsLifetime": 5, "UpdatesTotal": 2, "RecentUpdatesTotal": 2,
        "UpdatesInitial": 1, "RecentUpdatesInitial": 1, "UpdatesLost": 2, "RecentUpdatesLost": 2}
    machines = [ClassAd({"State": s}) for s in ("Claimed", "Unclaimed", "Unclaimed", "Owner", "Drained")]
    submitters = [ClassAd({"RunningJobs": 2, "IdleJobs": 5}), ClassAd({"IdleJobs": 1})]
    assert pool_summary(machines, submitters) == {
        "HostsTotal": 5, "HostsClaimed": 1, "HostsUnclaimed": 2, "HostsOwner": 1, "RunningJobs": 2,
        "IdleJobs": 6, "SubmitterAds": 2, "MachineAds": 5}
