"""Pieces the simulated daemons share with the live ones, a machine's modelled job, and what the
simulated schedd carries to the collector."""

from __future__ import annotations

from pathlib import Path

from htcpool.classad import ClassAd
from htcpool.protocol import UpdateAd
from htcpool.runtime.startd_ads import FreedSlots
from htcpool.schedd.ads import schedd_ads
from htcpool.sim.central import COLLECTOR
from htcpool.sim.options import SimOptions
from htcpool.sim.run import Simulation
from tests.sim.pool_files import swf_line, write_swf


def test_freed_slots_fire_only_on_a_change_to_unclaimed() -> None:
    freed = FreedSlots()
    seen = [freed.freed("slot1", ClassAd({"State": state}))
            for state in ("Unclaimed", "Claimed", "Claimed", "Unclaimed", "Unclaimed", "Owner", "Unclaimed")]
    assert seen == [False, False, False, True, False, False, True]



def _submitter_views(tmp: Path, repeats: bool) -> tuple[list[list[dict[str, object]]], int, list[float]]:
    """A run of a busy little pool: at each cycle, the Submitter ads the negotiator reads (without
    LastHeardFrom) and how old the oldest is; and how many Submitter ads were carried.
    ``repeats``: the driver carries every ad the core advertises."""
    lines = [swf_line(n, n * 7 % 600 + n / 100, 200 + n % 5 * 50, n % 20 + 1) for n in range(1, 121)]
    (tmp / "condor_config").write_text("NEGOTIATOR_INTERVAL = 60\nSCHEDD_INTERVAL = 60\n")
    (tmp / "machines.txt").write_text("2 NUM_CPUS=4 MEMORY=4096\n")
    write_swf(tmp / "trace.swf", sorted(lines, key=lambda line: float(line.split()[1])))
    sim = Simulation(SimOptions(tmp / "condor_config", tmp / "machines.txt", tmp / "trace.swf", tmp / "out",
                                until=6000))
    if repeats:
        sim.schedd._repeat = lambda message: False  # type: ignore[method-assign]
    carried = 0
    collector = sim.transport.receivers[COLLECTOR]

    def receive(message: object) -> object:
        nonlocal carried
        if isinstance(message, UpdateAd) and message.ad.get("MyType") == "Submitter":
            carried += 1
        return collector(message)

    sim.transport.receivers[COLLECTOR] = receive
    views: list[list[dict[str, object]]] = []
    ages: list[float] = []

    def look(now: float, _outcome: object) -> None:
        ads = sim.collector.store.query("Submitter", now=now)
        views.append([{k: v for k, v in ad.items() if k != "LastHeardFrom"} for ad in ads])
        core = sim.schedd.core  # the submitters it advertises now (one without jobs is left to expire)
        current = {ad["Name"] for ad in schedd_ads(core.queue, core.host, core.address, core.started, now)}
        ages.append(max((now - float(ad["LastHeardFrom"]) for ad in ads if ad["Name"] in current), default=0.0))

    sim.negotiator.on_cycle.append(look)
    summary = sim.run()
    assert summary["jobs_completed"] == 120, summary
    return views, carried, ages


def test_unchanged_submitter_ads_are_carried_at_the_schedds_pace(tmp_path: Path) -> None:
    """The simulated schedd advertises on most submits; a Submitter ad that did not change since
    it was carried is not carried again until the advertising pace (SCHEDD_INTERVAL 60 here) has
    passed. The negotiator reads the same ads at every cycle as when every advertisement is
    carried, those of submitters still advertised less than twice the pace old, from fewer than
    half the updates."""
    (tmp_path / "all").mkdir()
    (tmp_path / "paced").mkdir()
    every, carried_every, _ = _submitter_views(tmp_path / "all", repeats=True)
    paced, carried_paced, ages = _submitter_views(tmp_path / "paced", repeats=False)
    assert len(every) > 20 and paced == every
    assert carried_paced < carried_every / 2, (carried_paced, carried_every)
    assert max(ages) <= 2 * 60, ages
