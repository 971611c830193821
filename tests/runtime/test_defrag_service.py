"""The defrag service in-process: a poll over a collector service and fake startds, drains sent to
the ads' MyAddress (a refusal counts as a failure and the next machine is tried), the Defrag ad in
the collector, DEFRAG_STATE_FILE, DefragLog, reconfiguration and a bad knob that stops drains."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import Command, DaemonCommand, How, Ok, QueryAds, UpdateAd
from htcpool.protocol.startd import Drain, DrainCompletion
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.defrag_service import DefragService
from htcpool.runtime.http import RequestRefused
from tests.runtime.inprocess import T0, Clock, Network, Recorder, daemon, pool_layout, run

CONFIG = ("DEFRAG_INTERVAL = 600\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 12\nDEFRAG_UPDATE_INTERVAL = 60\n"
          "DEFRAG_DRAINING_START_EXPR = MaxJobRetirementTime == 0\n")


def _refuse(message: Any) -> Any:
    raise RequestRefused(409, "DRAINING_CHECK_EXPR_FAILED on slot1@m2")


class Pool:
    """A collector service, the defrag service and three fake startds (m2 refuses every drain)."""

    def __init__(self, root: Path, extra: str = "") -> None:
        self.clock = Clock()
        self.network = Network()
        self.layout = pool_layout(root, CONFIG + extra)
        self.collector = CollectorService(daemon("collector", self.layout, self.clock, self.network))
        self.layout.write_address("collector", self.network.serve("collector", self.collector.handle, self.layout))
        self.startds = {"m1": Recorder(lambda m: Ok("1")), "m2": Recorder(_refuse), "m3": Recorder(lambda m: Ok("1"))}
        self.urls = {n: self.network.serve(n, r.handle, self.layout) for n, r in self.startds.items()}
        self.daemon = daemon("defrag", self.layout, self.clock, self.network)
        self.defrag = DefragService(self.daemon)

    async def advertise(self) -> None:
        """m2 is the cheapest to drain, then m1, then m3 (the default DEFRAG_RANK)."""
        for name, badput in (("m1", 200), ("m2", 100), ("m3", 300)):
            await self.collector.handle(UpdateAd(ClassAd({
                "MyType": "Machine", "Name": f"slot1@{name}", "PartitionableSlot": True, "SlotID": 1, "Cpus": 2,
                "TotalSlotCpus": 8, "MyAddress": self.urls[name], "ExpectedMachineGracefulDrainingBadput": badput,
                "ExpectedMachineGracefulDrainingCompletion": int(T0)})))

    async def fire(self, at: float) -> None:
        self.clock.now = at
        await self.defrag.on_timer(at)
        await self.daemon.outbox.flush()

    async def defrag_ad(self) -> ClassAd:
        return (await self.collector.handle(QueryAds("Defrag"))).ads[0]


def test_a_poll_drains_through_the_ads_addresses_and_the_ad_counts_it(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        caplog.set_level(logging.INFO, "htcpool.defrag")
        await pool.advertise()
        await pool.defrag.start()
        assert pool.defrag.next_deadline() == T0
        await pool.fire(T0)
        assert pool.startds["m2"].of(Drain) and pool.startds["m1"].of(Drain) and pool.startds["m3"].of(Drain)
        sent = pool.startds["m1"].of(Drain)[0]
        assert (sent.on_completion, sent.start_expr, sent.reason) == (
            DrainCompletion.RESUME, "MaxJobRetirementTime == 0", pool.defrag.settings.drain_reason)
        state = Path(pool.defrag.settings.state_file)
        assert state.read_text() == f"LastPoll = {int(T0)}\n"
        await pool.fire(T0 + 60)  # the next ad update
        ad = await pool.defrag_ad()
        assert (ad["DrainSuccesses"], ad["DrainFailures"], ad["Machine"]) == (2, 1, pool.daemon.host)
        assert [c["who"] for c in ad["RecentDrainsList"]] == ["slot1@m3", "slot1@m1", "slot1@m2"]
        assert ad["UpdateSequenceNumber"] == 1
        assert "Initiating graceful draining of slot1@m2." in caplog.text
        assert "m2 refused the drain: DRAINING_CHECK_EXPR_FAILED on slot1@m2" in caplog.text
        assert pool.defrag.next_deadline() == T0 + 120
        pool.daemon.request_stop(How.GRACEFUL)  # as Daemon.run does before it stops the service
        await pool.defrag.stop(How.GRACEFUL)
        assert (await pool.collector.handle(QueryAds("Defrag"))).ads == ()
        await pool.fire(T0 + 180)  # the timer loop runs on while the daemon stops: no ad comes back
        assert (await pool.collector.handle(QueryAds("Defrag"))).ads == ()
        await pool.daemon.client.close()

    run(test)


def test_restart_keeps_the_poll_interval_and_a_bad_knob_stops_drains(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        caplog.set_level(logging.INFO, "htcpool.defrag")
        await pool.advertise()
        await pool.defrag.start()
        await pool.fire(T0)
        again = DefragService(pool.daemon)  # a restart 100 s later waits for the rest of the interval
        pool.clock.now = T0 + 100
        assert again.core.next_poll == T0 + 600
        with pool.layout.config.open("a") as f:
            f.write("DEFRAG_RANK = ExpectedMachineGracefulDrainingBadput +\n")
        assert await pool.defrag.handle(DaemonCommand(Command.RECONFIG)) == Ok("reconfigured")
        assert "bad configuration: DEFRAG_RANK: cannot parse" in caplog.text
        before = sum(len(r.of(Drain)) for r in pool.startds.values())
        await pool.fire(T0 + 600)
        assert sum(len(r.of(Drain)) for r in pool.startds.values()) == before
        assert "Doing nothing, because DEFRAG_RANK: cannot parse" in caplog.text
        await pool.fire(T0 + 1200)  # still running, still polling
        assert pool.defrag.core.last_poll == T0 + 1200
        await pool.daemon.client.close()

    run(test)
