"""Asking the collector from a daemon: ``ask_collector`` says why there is no answer, and
``collector_query`` (for the daemons that simply carry on without ads) gives none."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import InvalidateAd, QueryAds, Reschedule, UpdateAd
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.daemon import CollectorUnavailable
from tests.runtime.inprocess import Clock, Network, Recorder, daemon, pool_layout, run


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


def test_a_negotiator_on_another_host_is_found_through_its_ad(tmp_path: Path) -> None:
    """A schedd or startd whose host runs no negotiator sends its Reschedule where the Negotiator
    ad in the collector says; one on the host is used first."""
    layout = pool_layout(tmp_path / "pool")
    clock, network = Clock(), Network()
    asker = daemon("schedd", layout, clock, network)
    negotiator = Recorder()
    remote = network.serve("negotiator", negotiator.handle, layout)

    async def go() -> None:
        assert await asker.negotiator_address() is None  # no collector, no negotiator: nothing to send to
        collector = CollectorService(daemon("collector", layout, clock, network))
        layout.write_address("collector", network.serve("collector", collector.handle, layout))
        await collector.handle(UpdateAd(ClassAd({"MyType": "Negotiator", "Name": "cm", "MyAddress": remote})))
        assert await asker.negotiator_address() == remote
        asker.to_negotiator(Reschedule("a submit"))
        await asker.outbox.flush()
        assert [type(m).__name__ for m in negotiator.got] == ["Reschedule"]
        layout.write_address("negotiator", "http://local.test")
        assert await asker.negotiator_address() == "http://local.test"

    run(go)


def test_the_collector_of_another_host_is_the_one_collector_host_names(tmp_path: Path) -> None:
    layout = pool_layout(tmp_path / "pool", "COLLECTOR_HOST = 192.0.2.1:9620\n")
    asker = daemon("startd", layout, Clock(), Network())
    assert asker.address_of("collector") == "https://192.0.2.1:9620"
    layout.write_address("collector", "http://collector.test")
    assert asker.address_of("collector") == "http://collector.test"


class _Started(Exception):
    pass


def test_a_daemon_loads_what_the_libraries_load_on_first_use_before_it_serves(tmp_path: Path) -> None:
    """The ClassAd functions (the ``regex`` package among them) are imported on first use, which
    a command-line tool mostly never makes; a daemon imports them as it starts, not in its first
    claim or negotiation cycle (the startd's first claim took 11 ms more)."""
    import subprocess
    import sys

    # a fresh interpreter: nothing of them is loaded by the daemon module itself
    probe = ("import sys; import htcpool.runtime.daemon as d; "
             "names = ('htcpool.classad.builtins.regex', 'regex'); "
             "before = [n in sys.modules for n in names]; d._load_lazy_modules(); "
             "print(before, [n in sys.modules for n in names])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[False, False] [True, True]", out

    layout = pool_layout(tmp_path / "pool")
    d = daemon("negotiator", layout, Clock(), Network())

    def loading() -> None:
        raise _Started

    async def go() -> None:
        with patch("htcpool.runtime.daemon._load_lazy_modules", loading), pytest.raises(_Started):
            await d.run(Recorder())  # type: ignore[arg-type]

    run(go)


def test_an_ad_withdrawn_while_the_daemon_stops_is_not_sent_again(tmp_path: Path) -> None:
    """A running startd withdraws a deleted dynamic slot and may advertise one of that name later;
    once the daemon stops, a withdrawn ad stays withdrawn (its timer loop runs on through the
    service's stop, and an update there would put the ad back in the collector)."""
    layout = pool_layout(tmp_path / "pool")
    clock, network = Clock(), Network()
    sender = daemon("startd", layout, clock, network)
    collector = CollectorService(daemon("collector", layout, clock, network))
    layout.write_address("collector", network.serve("collector", collector.handle, layout))
    slot = ClassAd({"MyType": "Machine", "Name": "slot1_1@a"})
    other = ClassAd({"MyType": "Machine", "Name": "slot1_2@a"})

    async def names() -> list[str]:
        await sender.outbox.flush()
        return sorted(ad["Name"] for ad in (await collector.handle(QueryAds("Machine"))).ads)

    async def go() -> None:
        sender.to_collector(UpdateAd(slot))
        sender.to_collector(InvalidateAd("Machine", "slot1_1@a"))
        sender.to_collector(UpdateAd(slot))  # the same name again, while running
        assert await names() == ["slot1_1@a"]
        sender.request_stop()
        sender.to_collector(InvalidateAd("machine", "slot1_1@a"))
        sender.to_collector(UpdateAd(slot))
        sender.to_collector(UpdateAd(other))  # not withdrawn: still sent
        assert await names() == ["slot1_2@a"]
        assert sender.withdrawn("Machine", "slot1_1@a") and not sender.withdrawn("Machine", "slot1_2@a")
        await sender.client.close()

    run(go)
