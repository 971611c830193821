"""The startd service in-process: real core, configuration and pool layout; no sockets and no
processes. The outbox only records what would be sent (and where it would go), the starter
spawn is faked, and the clock is the test's. Requests that must cross the HTTP endpoint go
through httpx's ASGI transport."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    JobEvent,
    JobUpdate,
    Ok,
    QueryAds,
    Reschedule,
    UpdateAd,
)
from htcpool.protocol import startd as m
from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.http import DaemonClient, RequestRefused, make_app
from htcpool.runtime.launch import LaunchSpec
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.startd_service import StartdService
from htcpool.runtime.starter_client import EventCallback
from htcpool.startd.claim_ids import without_secret

SCHEDD = "alice@submit.test"
CONFIG = """
LOCAL_DIR = {root}
FULL_HOSTNAME = exec.test
SCHEDD_NAME = alice@submit.test
NUM_CPUS = 2
MEMORY = 2048
SLOT_TYPE_0_PARTITIONABLE = false
RunBenchmarks = false
UPDATE_INTERVAL = 5
POLLING_INTERVAL = 1
STARTER_FORK_SERVER = false
"""


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Posted:
    """Stands in for the daemon's outbox: what was posted, under which key, and its resolver."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, Callable[[], Awaitable[str | None]] | None]] = []
        self.on_reply: dict[int, Callable[[Any], Awaitable[None]]] = {}  # id of the message -> its callback
        self.after: dict[int, list[str]] = {}  # id of the message -> the keys it goes after

    def post(self, key: str, message: Any, resolve: Callable[[], Awaitable[str | None]] | None = None,
             on_reply: Any = None, after: Any = ()) -> None:
        self.items.append((key, message, resolve))
        if on_reply is not None:
            self.on_reply[id(message)] = on_reply
        self.after[id(message)] = list(after)

    def keys(self) -> list[str]:
        """The keys with messages on their way: here, all that were ever posted."""
        return list(dict.fromkeys(key for key, _, _ in self.items))

    async def answer(self, message: Any, reply: Any) -> None:
        """The peer's answer to a posted message, given to the poster's callback."""
        await self.on_reply[id(message)](reply)

    def of(self, kind: type) -> list[Any]:
        return [message for _, message, _ in self.items if isinstance(message, kind)]

    async def where(self, message: Any) -> str | None:
        """The URL the message would be sent to."""
        for key, posted, resolve in self.items:
            if posted is message:
                return key if resolve is None else await resolve()
        raise AssertionError(f"{message} was not posted")


class FakeStarter:
    """A starter that runs nothing: it records the commands and emits the events it is told to."""

    def __init__(self, spec: LaunchSpec, on_event: EventCallback) -> None:
        self.spec = spec
        self.on_event = on_event
        self.commands: list[str] = []
        self.done = False

    async def suspend(self) -> None:
        self.commands.append("suspend")

    async def continue_(self) -> None:
        self.commands.append("continue")

    async def soft_kill(self, sig: str | int | None = None) -> None:
        self.commands.append(f"soft_kill {sig}")

    async def hard_kill(self) -> None:
        self.commands.append("hard_kill")

    async def kill_family(self) -> None:
        self.commands.append("kill_family")

    def starts(self) -> None:
        self.on_event({"event": "started", "pid": 4242, "processes": 1, "confinement_problems": []})

    def exits(self, code: int = 0) -> None:
        self.done = True
        self.on_event({"event": "exited", "exit_code": code, "exit_signal": None, "wall": 3.0,
                       "user_cpu": 1.5, "sys_cpu": 0.5, "rss_kb": 2048,
                       "killed": any(c.split()[0] in ("soft_kill", "hard_kill") for c in self.commands)})


class Startd:
    """A StartdService on a temporary pool, with its fakes."""

    def __init__(self, root: Path, extra_config: str = "") -> None:
        self.layout = PoolLayout(root / "pool")
        self.layout.make()
        self.layout.ensure_token()
        self.layout.config.write_text(CONFIG.format(root=self.layout.root) + extra_config)
        self.layout.write_address("schedd", "http://schedd.test")
        self.clock = Clock()
        self.daemon = Daemon("startd", self.layout, daemon_config(self.layout, "STARTD"), clock=self.clock)
        self.daemon.url = "http://startd.test"
        self.posted = Posted()
        self.daemon.outbox = self.posted  # type: ignore[assignment]
        self.service = StartdService(self.daemon)
        self.started: list[FakeStarter] = []

        async def spawn(spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> FakeStarter:
            starter = FakeStarter(spec, on_event)
            self.started.append(starter)
            return starter

        self.service.starters.spawn = spawn

    async def begin(self) -> None:
        await self.service.start()

    def claim_id(self, slot: str = "slot1") -> str:
        return self.service.core.slot(slot).claim.id

    def pair(self, slot: str = "slot1") -> tuple[str, str]:
        s = self.service.core.slot(slot)
        return s.state.value, s.activity.value

    async def claim(self, job: ClassAd, slot: str = "slot1") -> str:
        cid = self.claim_id(slot)
        reply = await self.service.handle(m.RequestClaim(cid, job, SCHEDD))
        assert isinstance(reply, m.ClaimReply) and reply.accepted, reply
        return cid

    async def running(self, job: ClassAd, slot: str = "slot1") -> str:
        """Claim ``slot`` for ``job`` and activate it; the claim id, once the starter is spawned."""
        cid = await self.claim(job, slot)
        assert await self.service.handle(m.ActivateClaim(cid, job)) == Ok()
        await settle()
        return cid

    async def at(self, when: float) -> None:
        """Move the clock and fire the service's timers, as the daemon's timer loop would."""
        self.clock.now = when
        await self.service.on_timer(when)
        await settle()


async def settle() -> None:
    """Let the tasks the service started (starter launches, starter events) run."""
    for _ in range(10):
        await asyncio.sleep(0)


def job(tmp: Path, **attrs: object) -> ClassAd:
    ad = ClassAd({"Cmd": "/bin/true", "Iwd": str(tmp), "Owner": "alice", "User": "alice@submit.test",
                  "RequestCpus": 1, "RequestMemory": 128, "RequestDisk": 1024, "JobUniverse": 5,
                  "ClusterId": 7, "ProcId": 0})
    ad.update(attrs)
    return ad


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10.0))


def test_a_claim_request_decided_at_once_is_answered_with_the_claim_reply(tmp_path: Path) -> None:
    """The reply is the request's answer (nothing posted after it), and the claim's later messages
    go to the schedd that asked."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        assert {a.ad["Name"] for a in s.posted.of(UpdateAd)} == {"slot1@exec.test", "slot2@exec.test"}
        cid = s.claim_id()
        reply = await s.service.handle(m.RequestClaim(cid, job(tmp_path), SCHEDD))
        assert reply == m.ClaimReply(cid, True, slot="slot1@exec.test")
        assert s.posted.of(m.ClaimReply) == [] and s.pair() == ("Claimed", "Idle")
        assert s.service.claim_schedd[cid] == SCHEDD and not s.service.answers
    run(test)


def test_a_freed_slot_asks_for_a_cycle_once_its_ad_is_with_the_collector(tmp_path: Path) -> None:
    """The negotiator's cycle reads the slots from the collector: the freed slot's Reschedule goes
    after the ad that shows it Unclaimed (an earlier cycle would find nothing to match)."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        cid = await s.claim(job(tmp_path))
        await s.service.handle(m.ReleaseClaim(cid))
        await settle()
        [reschedule] = s.posted.of(Reschedule)
        at = next(i for i, (_, posted, _) in enumerate(s.posted.items) if posted is reschedule)
        freed = [i for i, (_, u, _) in enumerate(s.posted.items)
                 if isinstance(u, UpdateAd) and u.ad["Name"] == "slot1@exec.test" and u.ad["State"] == "Unclaimed"]
        assert freed[-1] < at and "collector" in s.posted.after[id(reschedule)]
    run(test)


def test_a_second_schedd_asking_for_a_held_claim_is_refused_and_the_holder_keeps_its_reports(
        tmp_path: Path) -> None:
    """A match made on an out-of-date slot ad names a claim id another schedd already holds: the
    refusal goes to the schedd that asked, and the job's reports still go to the claim's schedd."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        cid = await s.running(job(tmp_path))
        other = "bob@other.test"
        refused = await s.service.handle(m.RequestClaim(cid, job(tmp_path, ClusterId=8), other))
        assert isinstance(refused, m.ClaimReply) and not refused.accepted  # the asker's answer
        assert s.service.claim_schedd[cid] == SCHEDD and s.posted.of(m.ClaimReply) == []
        s.started[0].exits(0)
        await settle()
        exits = [key for key, u, _ in s.posted.items if isinstance(u, JobUpdate) and u.event is JobEvent.EXITED]
        assert exits == [f"schedd:{SCHEDD}:{without_secret(cid)}"]
        secret = cid.split("#")[3]
        assert not [key for key, _, _ in s.posted.items if secret in key]  # queue names show in log lines
    run(test)


def test_an_activation_spawns_a_starter_and_its_exit_reaches_the_schedd_and_the_core(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        cid = await s.running(job(tmp_path))
        assert len(s.started) == 1 and s.pair() == ("Claimed", "Busy")
        spec = s.started[0].spec
        assert spec.executable == "/bin/true" and Path(spec.scratch_dir).parent == s.layout.execute
        reply, = s.posted.of(m.ActivateReply)  # with what the slot gives the job, no update before it
        assert (reply.claim_id, reply.accepted) == (cid, True)
        assert reply.resources["CondorScratchDir"] == spec.scratch_dir and reply.resources["CpusProvisioned"] == 1
        assert not [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.PROVISIONED]
        s.started[0].starts()
        await settle()
        # the accepted activation was the run's beginning for the schedd: no report of the start
        assert not [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.STARTED]
        s.started[0].exits(0)
        await settle()
        exited, = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.EXITED]
        assert (exited.claim_id, exited.exit_code, exited.killed, exited.rss_kb) == (cid, 0, False, 2048)
        assert exited.claim_open  # the schedd may send the next job at once
        assert s.pair() == ("Claimed", "Idle") and not s.service.starters.running
    run(test)


def test_a_starter_waiting_ahead_is_given_its_job_in_the_activation_itself(tmp_path: Path) -> None:
    """With a starter forked ahead (``Starters.warm``), the job's launch is handed over while the
    activation is handled, before the startd's loop turns again: the slot's job does not wait for a
    task of its own; with none waiting the start goes the usual way (``spawn``)."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        waiting: list[FakeStarter] = []

        def warm(spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> FakeStarter | None:
            if not waiting:
                return None
            starter = waiting.pop()
            starter.spec, starter.on_event = spec, on_event
            return starter

        s.service.starters.warm = warm
        waiting.append(FakeStarter(None, lambda event: None))  # type: ignore[arg-type]
        ahead = waiting[0]
        cid = await s.claim(job(tmp_path))
        assert await s.service.handle(m.ActivateClaim(cid, job(tmp_path))) == Ok()
        # no turn of the loop yet: the waiting starter already holds the job
        assert s.service.starters.running[cid].handle is ahead and ahead.spec.executable == "/bin/true"
        assert not s.started  # spawn was not asked
        ahead.exits(0)
        await settle()
        assert s.pair() == ("Claimed", "Idle")
        cid = s.claim_id()
        assert await s.service.handle(m.ActivateClaim(cid, job(tmp_path, ProcId=1))) == Ok()
        await settle()
        assert len(s.started) == 1  # none waiting: spawned
    run(test)


def test_an_exit_answered_with_the_next_activation_starts_that_job(tmp_path: Path) -> None:
    """The schedd answers an exit on an open claim with the claim's next activation: the startd
    takes it as if it had come on its own, and the exit is no longer kept on disk."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        cid = await s.claim(job(tmp_path))
        await s.service.handle(m.ActivateClaim(cid, job(tmp_path)))
        await settle()
        s.started[0].exits(0)
        await settle()
        exited, = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.EXITED]
        assert exited.claim_open and s.service.exits.get(cid) is not None
        assert await s.posted.where(exited) is not None  # it leaves once it is on disk
        await s.posted.answer(exited, m.ActivateClaim(cid, job(tmp_path, ClusterId=9)))
        await settle()
        assert len(s.started) == 2 and s.pair() == ("Claimed", "Busy")
        assert s.started[1].spec.job_ad_text.count("ClusterId = 9") == 1
        assert s.service.exits.get(cid) is None
        assert s.posted.of(m.ActivateReply)[-1].accepted
    run(test)


def test_an_exit_on_a_closing_claim_leaves_the_schedd_to_deactivate(tmp_path: Path) -> None:
    """Draining: the job retires (MAXJOBRETIREMENTTIME) and the claim takes no further
    job, so the job's own exit does not say the claim is open."""
    async def test() -> None:
        s = Startd(tmp_path, "MAXJOBRETIREMENTTIME = 3600\n")
        await s.begin()
        cid = await s.claim(job(tmp_path))
        await s.service.handle(m.ActivateClaim(cid, job(tmp_path)))
        await settle()
        await s.service.handle(m.Drain())
        await settle()
        assert s.pair() == ("Claimed", "Retiring")
        s.started[0].exits(0)
        await settle()
        exited, = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.EXITED]
        assert (exited.claim_id, exited.killed, exited.claim_open) == (cid, False, False)
    run(test)


def test_a_deferred_job_is_spawned_when_the_core_starts_it(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        start = s.clock.now + 30
        deferred = job(tmp_path, DeferralTime=int(start), DeferralWindow=60)
        cid = await s.claim(deferred)
        await s.service.handle(m.ActivateClaim(cid, deferred))
        await settle()
        assert s.started == [] and s.pair() == ("Claimed", "Busy")
        assert s.service.next_deadline() is not None
        await s.at(start - 1)
        assert s.started == []
        await s.at(start)
        assert len(s.started) == 1
        assert s.posted.of(m.ActivateReply)[-1].resources["CondorScratchDir"] == s.started[0].spec.scratch_dir
    run(test)


def test_a_job_past_its_deferral_window_is_reported_missed_without_a_starter(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        late = job(tmp_path, DeferralTime=int(s.clock.now) - 100, DeferralWindow=10)
        cid = await s.claim(late)
        await s.service.handle(m.ActivateClaim(cid, late))
        await settle()
        missed = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.MISSED_DEFERRAL]
        assert [u.claim_id for u in missed] == [cid] and s.started == []
        assert await s.posted.where(missed[0]) == "http://schedd.test"
        assert s.pair() == ("Claimed", "Idle")
    run(test)


def test_reconfig_waits_for_running_jobs_and_vacate_kills_them(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        with pytest.raises(RequestRefused) as idle:  # an idle startd is restarted by the master
            await s.service.handle(DaemonCommand(Command.RECONFIG))
        assert idle.value.status == 409
        cid = await s.claim(job(tmp_path))
        await s.service.handle(m.ActivateClaim(cid, job(tmp_path)))
        await settle()
        assert await s.service.handle(DaemonCommand(Command.RECONFIG)) == Ok("deferred while jobs run")
        assert await s.service.handle(DaemonCommand(Command.VACATE, How.FAST)) == Ok()
        await settle()
        assert s.started[0].commands == ["hard_kill"] and s.pair() == ("Preempting", "Killing")
        s.started[0].exits(137)
        await settle()
        exited, = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.EXITED]
        assert exited.killed and s.pair()[0] in ("Owner", "Unclaimed")
        released = s.posted.of(m.NotifySchedd)
        assert [(n.claim_id, n.kind) for n in released] == [(cid, m.Notice.RELEASE)]
    run(test)


def test_direct_queries_filter_by_constraint_and_refuse_a_malformed_one(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        app = make_app(s.service.handle, s.daemon.token, "startd")
        client = DaemonClient(s.daemon.token, transport=httpx.ASGITransport(app=app))
        try:
            reply = await client.send("http://startd.test", QueryAds("Machine", "SlotID == 2"))
            assert isinstance(reply, AdList) and [ad["Name"] for ad in reply.ads] == ["slot2@exec.test"]
            assert reply.ads[0]["MyAddress"] == "http://startd.test" and reply.ads[0]["HasJobDeferral"] is True
            everything = await client.send("http://startd.test", QueryAds("Machine"))
            assert len(everything.ads) == 2
            with pytest.raises(RequestRefused) as bad:
                await client.send("http://startd.test", QueryAds("Machine", "Memory >"))
            assert bad.value.status == 400 and "Memory >" in bad.value.detail
            with pytest.raises(RequestRefused) as unknown:  # not a message a startd takes
                await client.send("http://startd.test", DaemonCommand(Command.RESCHEDULE))
            assert unknown.value.status == 400
        finally:
            await client.close()
    run(test)


@pytest.mark.parametrize("completion, command", [(m.DrainCompletion.RESTART, Command.RESTART),
                                                 (m.DrainCompletion.RECONFIG, Command.RECONFIG)])
def test_a_drain_completing_with_restart_or_reconfig_asks_the_master(
        tmp_path: Path, completion: m.DrainCompletion, command: Command) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        s.layout.write_address("master", "http://master.test")
        await s.begin()
        assert await s.service.handle(m.Drain(on_completion=completion)) == Ok("1")
        await s.at(s.clock.now + 10)  # the next evaluation sees every slot drained
        assert s.pair() == ("Drained", "Idle") and s.pair("slot2") == ("Drained", "Idle")
        asked = s.posted.of(DaemonCommand)
        assert asked == [DaemonCommand(command, daemons=("startd",))]
        assert await s.posted.where(asked[0]) == "http://master.test"
        with pytest.raises(RequestRefused) as again:
            await s.service.handle(m.Drain())
        assert again.value.status == 409 and "DRAINING_ALREADY_IN_PROGRESS" in again.value.detail
    run(test)


def test_nothing_is_advertised_after_the_stopping_startd_withdraws_its_slots(tmp_path: Path) -> None:
    """The timer loop goes on while the daemon stops (starters are given their patience, the
    invalidations time to go out); a periodic update in that time must not bring the withdrawn
    slots back into the collector (condor_drain -exit-on-completion leaves no slot behind)."""
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        s.daemon.request_stop(How.GRACEFUL)  # as Daemon.run does before it stops the service
        stopping = asyncio.create_task(s.service.stop(How.GRACEFUL))
        await settle()
        withdrawn = [msg.name for msg in s.posted.of(InvalidateAd)]
        assert sorted(withdrawn) == ["slot1@exec.test", "slot2@exec.test"], withdrawn
        before = len(s.posted.items)
        await s.at(s.clock.now + 60)  # past UPDATE_INTERVAL and the next sensing: every slot is due
        await stopping
        after = [type(msg).__name__ for _, msg, _ in s.posted.items[before:]]
        assert not any(isinstance(msg, UpdateAd) for _, msg, _ in s.posted.items[before:]), after
    run(test)
