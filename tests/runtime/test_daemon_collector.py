"""Asking the collector from a daemon: ``ask_collector`` says why there is no answer, and
``collector_query`` (for the daemons that simply carry on without ads) gives none."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import QueryAds, UpdateAd
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.daemon import CollectorUnavailable
from tests.runtime.inprocess import Clock, Network, daemon, pool_layout, run


def test_an_answer_a_missing_collector_and_an_unreachable_one(tmp_path: Path) -> None:
    layout = pool_layout(tmp_path / "pool")
    clock, network = Clock(), Network()
    asker = daemon("defrag", layout, clock, network)

    async def go() -> None:
        with pytest.raises(CollectorUnavailable, match="no collector address"):
            await asker.ask_collector(QueryAds("Machine"))
        assert await asker.collector_query(QueryAds("Machine")) == []
        layout.write_address("collector", "http://gone.test")
        with pytest.raises(CollectorUnavailable, match="nothing listens at gone.test"):
            await asker.ask_collector(QueryAds("Machine"))
        assert await asker.collector_query(QueryAds("Machine")) == []
        collector = CollectorService(daemon("collector", layout, clock, network))
        layout.write_address("collector", network.serve("collector", collector.handle, layout))
        await collector.handle(UpdateAd(ClassAd({"MyType": "Machine", "Name": "slot1@a"})))
        answer = await asker.ask_collector(QueryAds("Machine"))
        assert [ad["Name"] for ad in answer.ads] == ["slot1@a"]
        assert [ad["Name"] for ad in await asker.collector_query(QueryAds("Machine"))] == ["slot1@a"]

    run(go)
