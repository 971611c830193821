"""A negotiator service in-process over a collector service, with recorders for one schedd and
one startd, for the fault tests that need a cycle to run (``tests/runtime/inprocess.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd
from htcpool.protocol import FetchRequests, How, IdleJobs, MatchInfo, UpdateAd
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.negotiator_service import NegotiatorService
from tests.negotiator.helpers import job, slot
from tests.runtime.inprocess import Clock, Network, Recorder, daemon, pool_layout

ALICE = "alice@pool.test"


class NegotiatorPool:
    """Build with ``NegotiatorPool(root, config)``; ``prepare`` lets a test write the spool first."""

    def __init__(self, root: Path, config: str) -> None:
        self.clock, self.network = Clock(), Network()
        self.layout = layout = pool_layout(root, config)
        layout.spool.mkdir(parents=True, exist_ok=True)
        self.collector = CollectorService(daemon("collector", layout, self.clock, self.network))
        layout.write_address("collector", self.network.serve("collector", self.collector.handle, layout))
        self.schedd, self.startd = Recorder(self._answer), Recorder()
        self.schedd_url = self.network.serve("schedd", self.schedd.handle, layout)
        self.startd_url = self.network.serve("startd", self.startd.handle, layout)
        self.daemon = daemon("negotiator", layout, self.clock, self.network)

    def _answer(self, message: Any) -> Any:
        return IdleJobs((ALICE,), (job(7, 0, Owner="alice"),)) if isinstance(message, FetchRequests) else None

    def start_negotiator(self) -> NegotiatorService:
        self.negotiator = NegotiatorService(self.daemon)
        self.url = self.network.serve("negotiator", self.negotiator.handle, self.layout)
        return self.negotiator

    async def cycle(self) -> list[tuple[int, int]]:
        """Advertise one slot and alice's idle job, run the cycle when it is due, and return the
        jobs matched."""
        await self.collector.start()
        await self.negotiator.start()
        machine = slot("slot1@host.test")
        machine["MyType"], machine["MyAddress"] = "Machine", self.startd_url
        await self.collector.handle(UpdateAd(machine, private=ClassAd({"ClaimId": "<c>"})))
        await self.collector.handle(UpdateAd(ClassAd({
            "MyType": "Submitter", "Name": ALICE, "ScheddName": "schedd@pool.test",
            "MyAddress": self.schedd_url, "IdleJobs": 1, "RunningJobs": 0})))
        deadline = self.negotiator.next_deadline()
        assert deadline is not None
        self.clock.now = max(self.clock.now, deadline)
        await self.negotiator.on_timer(self.clock.now)
        await self.daemon.outbox.flush()
        return [(m.cluster, m.proc) for m in self.schedd.of(MatchInfo)]

    async def close(self) -> None:
        await self.daemon.outbox.flush()
        await self.negotiator.stop(How.GRACEFUL)
        await self.daemon.client.close()
