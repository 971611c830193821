"""The negotiator service in-process: a cycle over a collector service and a fake schedd and startd,
the cycle timer from the core's schedule, and condor_userprio's commands with their refusals."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.protocol import (
    Command,
    DaemonCommand,
    FetchRequests,
    How,
    IdleJobs,
    MatchInfo,
    Ok,
    QueryAds,
    Records,
    Reschedule,
    UpdateAd,
    UserprioCommand,
    UserprioOp,
    UserprioQuery,
)
from htcpool.protocol.startd import MatchNotification
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.negotiator_service import NegotiatorService
from tests.negotiator.helpers import job, slot
from tests.runtime.inprocess import T0, Clock, Network, Recorder, daemon, pool_layout, run

ALICE = "alice@pool.test"
CONFIG = "NEGOTIATOR_INTERVAL = 30\nNEGOTIATOR_MIN_INTERVAL = 2\n"


class Pool:
    """A collector service, a negotiator service and recorders for one schedd and one startd."""

    def __init__(self, root: Path) -> None:
        self.clock = Clock()
        self.network = Network()
        layout = pool_layout(root, CONFIG)
        self.collector = CollectorService(daemon("collector", layout, self.clock, self.network))
        layout.write_address("collector", self.network.serve("collector", self.collector.handle, layout))
        self.idle: list[ClassAd] = []
        self.schedd = Recorder(self._schedd_answer)
        self.startd = Recorder()
        self.schedd_url = self.network.serve("schedd", self.schedd.handle, layout)
        self.startd_url = self.network.serve("startd", self.startd.handle, layout)
        self.daemon = daemon("negotiator", layout, self.clock, self.network)
        self.negotiator = NegotiatorService(self.daemon)
        self.negotiator_url = self.network.serve("negotiator", self.negotiator.handle, layout)

    def _schedd_answer(self, message: Any) -> Any:
        if isinstance(message, FetchRequests):
            return IdleJobs(tuple(ALICE for _ in self.idle), tuple(self.idle))
        return None

    async def start(self) -> None:
        await self.collector.start()
        await self.negotiator.start()

    async def advertise(self, slots: list[tuple[ClassAd, str]], idle: list[ClassAd]) -> None:
        for ad, claim_id in slots:
            ad["MyType"] = "Machine"
            ad["MyAddress"] = self.startd_url
            await self.collector.handle(UpdateAd(ad, private=ClassAd({"ClaimId": claim_id})))
        self.idle = idle
        await self.collector.handle(UpdateAd(ClassAd({
            "MyType": "Submitter", "Name": ALICE, "ScheddName": "schedd@pool.test",
            "MyAddress": self.schedd_url, "IdleJobs": len(idle), "RunningJobs": 0})))

    async def fire(self) -> None:
        """Move the clock to the negotiator's deadline and let its timer fire."""
        deadline = self.negotiator.next_deadline()
        assert deadline is not None
        self.clock.now = max(self.clock.now, deadline)
        await self.negotiator.on_timer(self.clock.now)
        await self.daemon.outbox.flush()

    async def close(self) -> None:
        await self.daemon.outbox.flush()
        await self.negotiator.stop(How.GRACEFUL)
        await self.daemon.client.close()


def test_a_cycle_matches_an_idle_job_and_tells_the_schedd_and_the_startd(tmp_path: Path) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        await pool.start()
        await pool.advertise([(slot("slot1@host.test", Memory=256), "<small>"),
                              (slot("slot2@host.test"), "<big>")], [job(7, 0, Owner="alice")])
        assert pool.negotiator.next_deadline() == T0 + 1  # the first cycle, a second after the start
        await pool.fire()
        info = pool.schedd.of(MatchInfo)
        assert len(info) == 1
        assert (info[0].claim_id, info[0].cluster, info[0].proc, info[0].submitter) == ("<big>", 7, 0, ALICE)
        assert info[0].slot_ad["Name"] == "slot2@host.test" and "ClaimId" not in info[0].slot_ad
        assert pool.schedd.of(FetchRequests) == [FetchRequests((ALICE,))]
        assert pool.startd.got == [MatchNotification("<big>")]
        ads = await pool.collector.handle(QueryAds("Negotiator"))
        assert ads.ads[0]["NegotiatorInterval"] == 30 and ads.ads[0]["LastNegotiationCycleMatches0"] == 1
        rows = (await pool.negotiator.handle(UserprioQuery())).rows
        assert {r["Name"]: r["WeightedResourcesUsed"] for r in rows}[ALICE] == 1.0
        await pool.close()

    run(test)


def test_a_job_that_cannot_be_evaluated_is_logged_and_the_cycle_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pool = Pool(tmp_path)
    broken = job(7, 0, Owner="alice", JobPrio=1)
    for i in range(300):
        broken[f"Step{i}"] = ExprTree(f"Step{i + 1} + 1")
    broken["Step300"] = 1
    broken["Requirements"] = ExprTree("Step0 > 0")
    timely = job(8, 0, Owner="alice", RequestCpus=ExprTree("ifThenElse(time() > 0, 1, 2)"))

    async def test() -> None:
        await pool.start()
        await pool.advertise([(slot("slot1@host.test"), "<one>")], [broken, timely])
        with caplog.at_level(logging.WARNING, logger="htcpool.negotiator"):
            await pool.fire()
        assert [(m.cluster, m.proc) for m in pool.schedd.of(MatchInfo)] == [(8, 0)]
        warned = [r.getMessage() for r in caplog.records if r.name == "htcpool.negotiator"]
        assert len(warned) == 1 and warned[0].startswith(f"cycle: job 7.0 of {ALICE}: job could not be evaluated")
        await pool.close()

    run(test)


def test_the_cycle_timer_comes_from_the_schedule_and_reschedule_brings_it_forward(tmp_path: Path) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        await pool.start()
        await pool.fire()  # an empty pool: the cycle runs and matches nothing
        assert pool.schedd.got == [] and pool.startd.got == []
        first = pool.clock.now
        assert pool.negotiator.next_deadline() == first + 30  # NEGOTIATOR_INTERVAL
        pool.clock.now = first + 0.5
        await pool.negotiator.on_timer(pool.clock.now)  # not due: nothing happens
        assert pool.negotiator.next_deadline() == first + 30
        assert await pool.negotiator.handle(Reschedule("new jobs")) == Ok()
        assert pool.negotiator.next_deadline() == first + 2  # NEGOTIATOR_MIN_INTERVAL after the last cycle
        await pool.advertise([(slot("slot1@host.test"), "<c1>")], [job(1), job(2)])
        await pool.fire()
        assert [m.cluster for m in pool.schedd.of(MatchInfo)] == [1]
        await pool.close()

    run(test)


def _accounting(rows: tuple[Any, ...], name: str) -> dict[str, Any]:
    """A record's accounting attributes, with its real priority (the EUP over the factor)."""
    row = next(dict(r) for r in rows if r["Name"] == name)
    row["RealPriority"] = row["Priority"] / row["PriorityFactor"]
    return row


@pytest.mark.parametrize("command, attribute, value", [
    (UserprioCommand(UserprioOp.SETFACTOR, ALICE, 20.0), "PriorityFactor", 20.0),
    (UserprioCommand(UserprioOp.SETPRIO, ALICE, 7.0), "RealPriority", 7.0),
    (UserprioCommand(UserprioOp.SETACCUM, ALICE, 3600.0), "WeightedAccumulatedUsage", 3600.0),
    (UserprioCommand(UserprioOp.SETBEGIN, ALICE, 1234.0), "BeginUsageTime", 1234.0),
    (UserprioCommand(UserprioOp.SETLAST, ALICE, 5678.0), "LastUsageTime", 5678.0),
    (UserprioCommand(UserprioOp.SETCEILING, ALICE, 5.0, 600.0), "Ceiling", 5.0),
    (UserprioCommand(UserprioOp.SETFLOOR, ALICE, 2.0), "Floor", 2.0),
    (UserprioCommand(UserprioOp.RESETUSAGE, ALICE), "WeightedAccumulatedUsage", 0.0),
    (UserprioCommand(UserprioOp.RESETALL), "BeginUsageTime", T0),
])
def test_userprio_changes_go_by_table_to_the_accountant(tmp_path: Path, command: UserprioCommand,
                                                        attribute: str, value: float) -> None:
    pool = Pool(tmp_path)

    async def test() -> None:
        await pool.negotiator.handle(UserprioCommand(UserprioOp.SETACCUM, ALICE, 100.0))
        assert await pool.negotiator.handle(command) == Ok()
        reply = await pool.negotiator.handle(UserprioQuery())
        assert isinstance(reply, Records)
        assert _accounting(reply.rows, ALICE)[attribute] == value
        await pool.close()

    run(test)


def test_userprio_refusals_are_answered_400_over_http(tmp_path: Path) -> None:
    pool = Pool(tmp_path)
    client = pool.daemon.client

    async def refused(message: Any) -> str:
        with pytest.raises(RequestRefused) as e:
            await client.send(pool.negotiator_url, message)
        assert e.value.status == 400
        return e.value.detail

    async def test() -> None:
        low = await refused(UserprioCommand(UserprioOp.SETFACTOR, ALICE, 0.5))
        assert low == "The priority factor must be greater than or equal to 1."
        assert await refused(UserprioCommand(UserprioOp.SETPRIO, ALICE, 0.1)) == "The priority must be at least 0.5."
        assert await refused(UserprioCommand(UserprioOp.DELETE, "nobody@pool.test")) == \
            "no accountant record for 'nobody@pool.test'"
        assert await refused(UserprioCommand(UserprioOp.RESETUSAGE)) == "-resetusage needs a user or group name"
        await client.send(pool.negotiator_url, UserprioCommand(UserprioOp.SETFLOOR, ALICE, 1.0, 600.0))
        assert "already has a floor lease" in await refused(UserprioCommand(UserprioOp.SETFLOOR, ALICE, 2.0, 60.0))
        assert await client.send(pool.negotiator_url, UserprioCommand(UserprioOp.DELETE, ALICE)) == Ok()
        assert await refused(DaemonCommand(Command.VACATE)) == "the negotiator does not take the vacate command"
        assert "does not take UpdateAd" in await refused(UpdateAd(ClassAd({"MyType": "X", "Name": "y"})))
        await pool.close()

    run(test)
