"""condor_status's views of a live pool that need the pool's daemons: absent ads across a
collector restart, daemon statistics, offline universes."""

from __future__ import annotations

import os
import signal

from htcpool.protocol import QueryAds
from tests.e2e.pool import LivePool
from tests.e2e.test_condor_tools import ok


def _absent_names(pool: LivePool) -> list[str]:
    return sorted(str(ad["Name"]) for ad in pool.c.send("collector", QueryAds("Machine", "Absent")).ads)


def test_an_absent_startd_is_still_absent_after_the_collector_restarts(make_pool) -> None:  # type: ignore[no-untyped-def]
    pool: LivePool = make_pool("ABSENT_REQUIREMENTS = True\nCLASSAD_LIFETIME = 8\n"
                               "COLLECTOR_PERSISTENT_AD_LOG = absent.log\n")
    slots = pool.wait_for(lambda: sorted(str(ad["Name"]) for ad in pool.slots()), 30, "the startd's slots")
    startd = pool.pid_of("startd")
    os.kill(startd, signal.SIGSTOP)  # it stops advertising without withdrawing its ads
    try:
        pool.wait_for(lambda: _absent_names(pool) == slots, 40, "the slots kept as absent",
                      show=lambda: _absent_names(pool))
        collector = pool.kill("collector")
        pool.wait_restarted("collector", collector)
        shown = pool.wait_for(lambda: (out := ok(pool, "condor_status", "-absent")) and all(s in out for s in slots)
                              and out, 30, "status -absent after the restart", every=1.0)
        assert shown.splitlines()[0].split() == ["Name", "OpSys", "Arch", "Went", "Absent", "Will", "Forget"]
        assert pool.slots() == []  # still hidden from queries that do not ask for absent ads
    finally:
        os.kill(startd, signal.SIGCONT)
    pool.wait_for(lambda: _absent_names(pool) == [] and len(pool.slots()) == len(slots), 40,
                  "the startd back and its absent ads gone", show=lambda: _absent_names(pool))


def _schedd_ad(pool: LivePool) -> dict[str, object]:
    [ad] = pool.c.send("collector", QueryAds("Scheduler")).ads
    return dict(ad.items())


def test_daemons_publish_their_statistics_as_statistics_to_publish_says(make_pool) -> None:  # type: ignore[no-untyped-def]
    pool: LivePool = make_pool("STATISTICS_TO_PUBLISH = SCHEDD:2, DC:1\nSCHEDD_MIN_INTERVAL = 0\n")
    cluster = pool.submit("executable = /bin/true\nqueue 2\n")
    pool.wait_for(lambda: len(pool.history(f"ClusterId == {cluster}")) == 2, 60, "both jobs done")
    ad = pool.wait_for(lambda: (ad := _schedd_ad(pool)).get("JobsCompleted") == 2 and ad, 30,
                       "the schedd's ad counting the jobs", show=lambda: _schedd_ad(pool))
    assert (ad["JobsSubmitted"], ad["RecentJobsSubmitted"], ad["JobsStarted"], ad["JobsExitedNormally"]) == (2, 2, 2, 2)
    assert {"RecentWindowMax", "StatsLastUpdateTime", "DCStatsLifetime", "RecentDaemonCoreDutyCycle",
            "MonitorSelfCPUUsage", "MonitorSelfResidentSetSize", "SockMessages"} <= set(ad)
    assert 0 <= float(ad["RecentDaemonCoreDutyCycle"]) <= 1  # type: ignore[arg-type]
    schedd_long = ok(pool, "condor_status", "-schedd", "-long")
    assert "JobsCompleted = 2" in schedd_long and "MonitorSelfImageSize = " in schedd_long
    for daemon in ("Negotiator", "DaemonMaster", "Machine"):  # every daemon's own ads carry DaemonCore's
        [first, *_] = pool.c.send("collector", QueryAds(daemon)).ads
        assert "DCStatsLifetime" in first and "MonitorSelfAge" in first, daemon
    default = ok(pool, "condor_status", "-collector", "-long")
    assert "HostsTotal = 1" in default and "UpdatesTotal" not in default  # COLLECTOR is not in the list
    verbose = ok(pool, "condor_status", "-collector", "-long", "-statistics", "COLLECTOR:2,DC:2")
    assert "RecentWindowMax = 1200" in verbose and "DCRecentWindowMax = 1200" in verbose
    assert "RecentUpdatesTotal = " in verbose and "UpdatesLost = 0" in verbose
    from tests.e2e.test_condor_tools import tool
    refused = tool(pool, "condor_status", "-collector", "-statistics", "BOGUS:1")
    assert refused.returncode == 1 and "-statistics BOGUS:1: 'BOGUS'" in refused.stderr


def test_a_container_runtime_that_fails_its_probe_shows_in_status_offline(make_pool, tmp_path) -> None:  # type: ignore[no-untyped-def]
    docker = tmp_path / "broken-docker"
    docker.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "Docker version 0.0"; exit 0; fi\n'
                      'echo "cannot reach the daemon" >&2; exit 1\n')
    docker.chmod(0o755)
    pool: LivePool = make_pool(f"DOCKER = {docker}\nSINGULARITY = {tmp_path}/no-such-runtime\n")
    slots = pool.wait_for(lambda: pool.slots(), 30, "the startd's slots")
    assert all(ad["OfflineUniverses"] == ["Docker", "Container"] and ad["HasDocker"] is False for ad in slots)
    shown = ok(pool, "condor_status", "-offline").splitlines()
    assert shown[0].split() == ["Name", "Offline", "Universes"]
    rows = [line.split(None, 1) for line in shown[2:2 + len(slots)]]
    assert rows == [[str(ad["Name"]), "Docker, Container"] for ad in sorted(slots, key=lambda a: str(a["Name"]))]
    assert ok(pool, "condor_status", "-offline", "-af", "Name", "DockerOfflineReason").count("\n") == len(slots)
