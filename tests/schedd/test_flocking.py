"""The flock level of each submitter (schedd/flocking.py) and where a flocking schedd's ads go
(runtime/flock_ads.py)."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.protocol import InvalidateAd, UpdateAd
from htcpool.runtime.flock_ads import FlockAdvertiser
from htcpool.schedd.flocking import Flocking, FlockSettings, flock_settings, host_list

TWO = FlockSettings(collectors=("cm.b.example", "cm.c.example:9620"), interval=10.0)


def test_a_submitter_flocks_one_pool_per_unserved_interval_up_to_the_last() -> None:
    f = Flocking(TWO)
    assert f.note("u@a", idle=3, running=0, now=0) == 0  # idle from now on: its own pool first
    assert f.note("u@a", idle=3, running=0, now=9) == 0
    assert f.note("u@a", idle=3, running=0, now=10) == 1  # a whole interval unserved
    assert f.note("u@a", idle=3, running=0, now=15) == 1
    assert f.note("u@a", idle=3, running=0, now=20) == 2
    assert f.note("u@a", idle=3, running=0, now=99) == 2  # no pool beyond the last
    assert f.level("u@a") == 2 and f.reach() == 2


def test_a_job_starting_restarts_the_wait_and_no_idle_jobs_fall_back_after_one_last_ad() -> None:
    f = Flocking(TWO)
    f.note("u@a", idle=2, running=0, now=0)
    assert f.note("u@a", idle=1, running=1, now=10) == 0  # served: the wait starts again
    assert f.note("u@a", idle=1, running=1, now=19) == 0
    assert f.note("u@a", idle=1, running=1, now=20) == 1
    assert f.note("u@a", idle=0, running=2, now=21) == 1  # the pool it leaves hears once more
    assert f.level("u@a") == 0
    assert f.note("u@a", idle=0, running=2, now=22) == 0
    assert f.note("u@a", idle=0, running=0, now=23) == 0
    assert "u@a" not in f.submitters  # nothing left to remember


def test_increment_and_minimum_level() -> None:
    f = Flocking(FlockSettings(collectors=("a", "b", "c"), increment=2, min_level=1, interval=5.0))
    assert f.note("u@a", idle=1, running=0, now=0) == 1  # MIN_FLOCK_LEVEL: always one pool
    assert f.note("u@a", idle=1, running=0, now=5) == 3
    assert f.note("v@a", idle=0, running=0, now=5) == 1


def test_no_flock_pools_never_flock() -> None:
    f = Flocking(FlockSettings())
    assert f.note("u@a", idle=5, running=0, now=0) == 0
    assert f.note("u@a", idle=5, running=0, now=1e6) == 0
    assert f.reach() == 0


def test_knobs_read_with_problems_named() -> None:
    values = {"FLOCK_TO": "cm.b.example, cm.c.example:9620", "FLOCK_INCREMENT": "0", "MIN_FLOCK_LEVEL": "x"}
    s = flock_settings(values.get, 300)
    assert s.collectors == ("cm.b.example", "cm.c.example:9620")  # FLOCK_COLLECTOR_HOSTS = $(FLOCK_TO)
    assert (s.increment, s.min_level, s.interval) == (1, 0, 300.0)
    assert any("FLOCK_INCREMENT = 0" in p for p in s.problems)
    assert any("MIN_FLOCK_LEVEL = 'x'" in p for p in s.problems)
    own = flock_settings({"FLOCK_TO": "b", "FLOCK_COLLECTOR_HOSTS": "c d", "MIN_FLOCK_LEVEL": "5"}.get, 60)
    assert own.collectors == ("c", "d") and own.min_level == 2  # at most the number of pools
    assert host_list(" a,b  c ,") == ("a", "b", "c")


def test_reconfigure_keeps_levels_within_the_new_pools() -> None:
    f = Flocking(TWO)
    f.note("u@a", idle=1, running=0, now=0)
    f.note("u@a", idle=1, running=0, now=10)
    f.note("u@a", idle=1, running=0, now=20)
    f.reconfigure(FlockSettings(collectors=("only",), interval=10.0))
    assert f.level("u@a") == 1


def _submitter(idle: int) -> UpdateAd:
    return UpdateAd(ClassAd({"MyType": "Submitter", "Name": "u@a", "IdleJobs": idle, "RunningJobs": 0}))


def test_the_advertiser_sends_submitter_and_schedd_ads_to_the_pools_reached() -> None:
    config = Config.from_text("FLOCK_TO = cm.b.example:9700, 127.0.0.1:9701, cm.c.example:port\n",
                              subsystem="SCHEDD")
    adv = FlockAdvertiser(config, 10)
    assert adv.urls[1] == "http://127.0.0.1:9701" and adv.urls[0].endswith("://cm.b.example:9700")
    assert len(adv.urls) == 2  # a port that is no number: left out (and logged)
    schedd = UpdateAd(ClassAd({"MyType": "Scheduler", "Name": "schedd@a"}))
    assert adv.sends(schedd, 0) == []  # nobody flocks yet
    assert adv.sends(_submitter(2), 0) == []
    sent = adv.sends(_submitter(2), 10)
    assert sent == [(adv.urls[0], schedd), (adv.urls[0], _submitter(2))]  # the new pool hears of the schedd
    assert adv.sends(schedd, 11) == [(adv.urls[0], schedd)]
    withdraw = InvalidateAd("Submitter", constraint='ScheddName == "schedd@a"')
    assert adv.sends(withdraw, 12) == [(url, withdraw) for url in adv.urls]


def test_a_schedd_without_flock_pools_sends_nothing_elsewhere() -> None:
    adv = FlockAdvertiser(Config.from_text("SCHEDD_INTERVAL = 10\n", subsystem="SCHEDD"), 10)
    assert adv.urls == ()
    assert adv.sends(_submitter(5), 0) == [] and adv.sends(_submitter(5), 100) == []
