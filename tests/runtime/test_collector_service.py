"""The collector service in-process: updates, queries, invalidation, expiry on its timer, refusals."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    Ok,
    QueryAds,
    Reschedule,
    UpdateAd,
    encode,
)
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.http import PATH, make_app
from tests.runtime.inprocess import T0, Clock, Network, daemon, pool_layout, run


def _machine(name: str, **attrs: object) -> ClassAd:
    return ClassAd({"MyType": "Machine", "Name": name, "Memory": 1024, "State": "Unclaimed", **attrs})


def _service(tmp_path: Path, extra: str = "") -> tuple[CollectorService, Clock]:
    clock = Clock()
    layout = pool_layout(tmp_path, extra)
    return CollectorService(daemon("collector", layout, clock, Network())), clock


def test_updates_are_answered_by_queries_with_constraint_and_projection(tmp_path: Path) -> None:
    svc, clock = _service(tmp_path)

    async def test() -> None:
        await svc.start()
        assert await svc.handle(UpdateAd(_machine("slot1@a", Memory=512))) == Ok()
        await svc.handle(UpdateAd(_machine("slot1@b", Memory=4096), private=ClassAd({"ClaimId": "<secret>"})))
        reply = await svc.handle(QueryAds("Machine", "Memory > 1024", ("Name", "Memory")))
        assert isinstance(reply, AdList)
        assert [dict(ad.items()) for ad in reply.ads] == [{"Name": "slot1@b", "Memory": 4096}]
        public = await svc.handle(QueryAds("Machine"))
        assert [ad["Name"] for ad in public.ads] == ["slot1@a", "slot1@b"]
        assert all("ClaimId" not in ad for ad in public.ads)
        assert all(ad["LastHeardFrom"] == int(T0) for ad in public.ads)
        private = await svc.handle(QueryAds("Machine", "Name == \"slot1@b\"", private=True))
        assert private.ads[0]["ClaimId"] == "<secret>"
        own = await svc.handle(QueryAds("Collector"))
        assert [ad["Name"] for ad in own.ads] == ["collector@" + svc.daemon.host]

    run(test)


def test_invalidate_removes_by_name_and_by_constraint(tmp_path: Path) -> None:
    svc, clock = _service(tmp_path)

    async def test() -> None:
        for name, memory in (("slot1@a", 512), ("slot2@a", 2048), ("slot1@b", 4096)):
            await svc.handle(UpdateAd(_machine(name, Memory=memory)))
        assert await svc.handle(InvalidateAd("Machine", "slot2@a")) == Ok("1 ads removed")
        assert await svc.handle(InvalidateAd("Machine", constraint="Memory > 1024")) == Ok("1 ads removed")
        left = await svc.handle(QueryAds("Machine"))
        assert [ad["Name"] for ad in left.ads] == ["slot1@a"]

    run(test)


def test_an_expired_ad_goes_when_the_timer_from_the_store_fires(tmp_path: Path) -> None:
    svc, clock = _service(tmp_path, "CLASSAD_LIFETIME = 600\n")

    async def test() -> None:
        await svc.start()
        await svc.handle(UpdateAd(_machine("short@a", ClassAdLifetime=30)))
        await svc.handle(UpdateAd(_machine("long@a")))
        deadline = svc.next_deadline()
        assert deadline == T0 + 31  # the first whole second at which the short ad is older than 30 s
        clock.now = T0 + 20
        await svc.on_timer(clock.now)  # early: nothing is due
        assert svc.store.count("Machine") == 2
        clock.now = deadline
        await svc.on_timer(deadline)
        left = await svc.handle(QueryAds("Machine"))
        assert [ad["Name"] for ad in left.ads] == ["long@a"]
        # the default lifetime (600 s) also bounds how long the collector's own ad goes unrefreshed
        assert svc.next_deadline() == T0 + 600
        clock.now = T0 + 600
        await svc.on_timer(clock.now)
        own = await svc.handle(QueryAds("Collector"))
        assert own.ads[0]["LastHeardFrom"] == int(T0 + 600)
        clock.now = T0 + 601
        await svc.on_timer(clock.now)
        assert [ad["Name"] for ad in (await svc.handle(QueryAds("Machine"))).ads] == []
        assert len((await svc.handle(QueryAds("Collector"))).ads) == 1

    run(test)


def test_refusals_over_http(tmp_path: Path) -> None:
    svc, clock = _service(tmp_path)
    app = make_app(svc.handle, svc.daemon.token, "collector")
    auth = {"Authorization": f"Bearer {svc.daemon.token}"}

    async def test() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://collector.test",
                                     headers=auth) as http:
            async def post(message: object) -> httpx.Response:
                return await http.post(PATH, json=encode(message))

            bad = await post(QueryAds("Machine", "Memory >"))
            assert bad.status_code == 400 and bad.json()["type"] == "Failure"
            assert "is not a ClassAd expression" in bad.json()["detail"]
            nameless = await post(UpdateAd(ClassAd({"MyType": "Machine"})))
            assert nameless.status_code == 400 and "MyType and Name" in nameless.json()["detail"]
            assert (await post(InvalidateAd("Machine"))).status_code == 400  # neither name nor constraint
            other = await post(Reschedule())
            assert other.status_code == 400 and "does not take Reschedule" in other.json()["detail"]
            vacate = await post(DaemonCommand(Command.VACATE))
            assert vacate.status_code == 400 and vacate.json()["detail"] == "the collector does not take the vacate command"
            assert (await post(DaemonCommand(Command.RECONFIG))).status_code == 200
            assert not svc.daemon.stop_requested
            assert (await post(DaemonCommand(Command.OFF, How.FAST))).status_code == 200
            assert svc.daemon.stop_requested and svc.daemon.stop_how is How.FAST

    run(test)


def test_absent_requirements_keep_a_silent_machine_as_absent_and_hide_it_from_other_queries(tmp_path: Path) -> None:
    svc, clock = _service(tmp_path, "ABSENT_REQUIREMENTS = Memory > 0\nABSENT_EXPIRE_ADS_AFTER = 100\n")

    async def test() -> None:
        await svc.start()
        await svc.handle(UpdateAd(_machine("gone@a", ClassAdLifetime=30)))
        clock.now = T0 + 31
        await svc.on_timer(clock.now)
        assert (await svc.handle(QueryAds("Machine"))).ads == ()  # the negotiator's query does not see it
        [absent] = (await svc.handle(QueryAds("Machine", "Absent"))).ads
        assert (absent["Name"], absent["ClassAdLifetime"], absent["LastHeardFrom"]) == ("gone@a", 100, int(T0 + 31))
        clock.now = T0 + 31 + 101
        await svc.on_timer(clock.now)
        assert (await svc.handle(QueryAds("Machine", "Absent"))).ads == ()

    run(test)


def test_absent_ads_outlive_a_restart_through_the_persistent_ad_log(tmp_path: Path) -> None:
    extra = "ABSENT_REQUIREMENTS = Memory > 0\nCOLLECTOR_PERSISTENT_AD_LOG = absent.log\n"
    svc, clock = _service(tmp_path, extra)

    async def test() -> None:
        await svc.start()
        await svc.handle(UpdateAd(_machine("gone@a", ClassAdLifetime=30)))
        clock.now = T0 + 31
        await svc.on_timer(clock.now)
        assert (tmp_path / "absent.log").exists()  # written as soon as it went absent
        again = CollectorService(daemon("collector", svc.daemon.layout, clock, Network()))
        await again.start()
        [absent] = (await again.handle(QueryAds("Machine", "Absent"))).ads
        assert (absent["Name"], absent["LastHeardFrom"]) == ("gone@a", int(T0 + 31))
        await again.handle(UpdateAd(_machine("gone@a")))  # it is back: the log forgets it within a second
        assert again.next_deadline() == T0 + 32 and "gone@a" in (tmp_path / "absent.log").read_text()
        await again.stop(How.FAST)  # a stopping collector writes what is pending
        assert "gone@a" not in (tmp_path / "absent.log").read_text()
        third = CollectorService(daemon("collector", svc.daemon.layout, clock, Network()))
        await third.start()
        assert (await third.handle(QueryAds("Machine", "Absent"))).ads == ()

    run(test)


def test_a_bad_persistent_ad_log_is_set_aside_with_an_error_naming_its_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    svc, clock = _service(tmp_path, "ABSENT_REQUIREMENTS = Memory > 0\nCOLLECTOR_PERSISTENT_AD_LOG = absent.log\n")
    (tmp_path / "absent.log").write_text('[\nMyType = "Machine"\nName = "x" +\n]\n')

    async def test() -> None:
        await svc.start()
        assert (await svc.handle(QueryAds("Machine", "Absent"))).ads == ()

    run(test)
    assert (tmp_path / "absent.log.bad").exists()
    assert "COLLECTOR_PERSISTENT_AD_LOG" in caplog.text and "absent.log, line 3:" in caplog.text
