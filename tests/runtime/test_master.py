"""The master service in-process, its children faked: start order, status, off/on/restart, 404 for a
daemon not in DAEMON_LIST, restart with back-off when a child dies, and the stop order."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from htcpool.protocol import Command, DaemonCommand, How, Ok, Records
from htcpool.runtime.childalive import DUMP_SIGNAL
from htcpool.runtime.http import PATH, RequestRefused
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.master import MasterService
from tests.runtime.inprocess import T0, Clock, Network, Recorder, daemon, pool_layout, run

CONFIG = """DAEMON_LIST = MASTER, SCHEDD, COLLECTOR, NEGOTIATOR
MASTER_BACKOFF_CONSTANT = 5
MASTER_BACKOFF_FACTOR = 2
MASTER_UPDATE_INTERVAL = 300
"""


class FakeProcess:
    """A child that runs until it is signalled, killed or told to crash."""

    def __init__(self, pid: int, name: str, signalled: list[str]) -> None:
        self.pid = pid
        self.name = name
        self.signalled = signalled  # every process's name as it is signalled, shared
        self.signals: list[int] = []
        self._exit: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.receive: Callable[[float], None] | None = None
        self.stopped = False  # SIGSTOP: signals other than SIGCONT and SIGKILL wait

    def keepalives(self, receive: Callable[[float], None]) -> None:
        self.receive = receive

    def beat(self, timeout: float) -> None:
        """A keep-alive from this child, as its pipe would carry it."""
        assert self.receive is not None
        self.receive(timeout)

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    def exit(self, code: int) -> None:
        if not self._exit.done():
            self._exit.set_result(code)

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)
        self.signalled.append(self.name)
        if sig == signal.SIGCONT:
            self.stopped = False
        elif sig == signal.SIGKILL:
            self.exit(-sig)
        elif not self.stopped and sig not in (DUMP_SIGNAL, signal.SIGCONT):
            self.exit(-sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


async def settle() -> None:
    """Let the master's watchers see the exits that just happened."""
    for _ in range(10):
        await asyncio.sleep(0)


class FakeSpawner:
    """Starts FakeProcesses and writes each daemon's address, as a started daemon would."""

    def __init__(self) -> None:
        self.started: list[tuple[str, FakeProcess]] = []
        self.signalled: list[str] = []

    async def __call__(self, name: str, layout: PoolLayout) -> FakeProcess:
        process = FakeProcess(100 + len(self.started), name, self.signalled)
        self.started.append((name, process))
        layout.write_address(name, f"http://{name}.test")
        return process

    def last(self, name: str) -> FakeProcess:
        return [p for n, p in self.started if n == name][-1]


class Master:
    def __init__(self, root: Path, extra_config: str = "") -> None:
        self.clock = Clock()
        self.network = Network()
        self.layout = pool_layout(root, CONFIG + extra_config)
        self.collector = Recorder()
        self.network.serve("collector", self.collector.handle, self.layout)
        self.spawner = FakeSpawner()
        self.daemon = daemon("master", self.layout, self.clock, self.network)
        self.service = MasterService(self.daemon, spawn=self.spawner)
        self.url = self.network.serve("master", self.service.handle, self.layout)

    async def status(self) -> dict[str, dict[str, Any]]:
        reply = await self.service.handle(DaemonCommand(Command.STATUS))
        assert isinstance(reply, Records)
        return {r["Name"]: dict(r) for r in reply.rows}


def test_children_start_collector_first_and_status_reports_them(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        assert [n for n, _ in m.spawner.started] == ["collector", "negotiator", "schedd"]
        assert m.layout.master_pid.exists()
        status = await m.status()
        assert {n: (s["Pid"], s["Wanted"], s["Restarts"]) for n, s in status.items()} == {
            "collector": (100, True, 0), "negotiator": (101, True, 0), "schedd": (102, True, 0)}
        await m.service.stop(How.GRACEFUL)
        assert not m.layout.master_pid.exists()

    run(test)


def test_unknown_daemons_are_404_and_unknown_commands_400(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        for command in (Command.OFF, Command.ON, Command.RESTART):
            with pytest.raises(RequestRefused) as e:
                await m.daemon.client.send(m.url, DaemonCommand(command, How.GRACEFUL, ("startd",)))
            assert (e.value.status, e.value.detail) == (404, "no daemon 'startd' in DAEMON_LIST")
        with pytest.raises(RequestRefused) as e:
            await m.daemon.client.send(m.url, DaemonCommand(Command.VACATE))
        assert (e.value.status, e.value.detail) == (400, "the master does not take the vacate command")
        assert len(m.spawner.started) == 3  # nothing was stopped or started
        await m.service.stop(How.FAST)

    run(test)


def test_off_on_and_restart_of_one_daemon(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        negotiator = m.spawner.last("negotiator")
        assert await m.service.handle(DaemonCommand(Command.OFF, How.FAST, ("negotiator",))) == Ok()
        assert negotiator.signals == [signal.SIGQUIT]
        await settle()
        status = await m.status()
        assert (status["negotiator"]["Pid"], status["negotiator"]["Wanted"]) == (0, False)
        assert m.layout.read_address("negotiator") is None
        await m.service.handle(DaemonCommand(Command.ON, How.GRACEFUL, ("negotiator",)))
        assert (await m.status())["negotiator"]["Pid"] == 103
        schedd = m.spawner.last("schedd")
        await m.service.handle(DaemonCommand(Command.RESTART, How.GRACEFUL, ("schedd",)))
        assert schedd.signals == [signal.SIGTERM] and m.spawner.last("schedd").pid == 104
        await m.service.stop(How.GRACEFUL)

    run(test)


def test_a_restart_of_every_daemon_stops_them_all_then_starts_the_collector_first(tmp_path: Path) -> None:
    """condor_restart of the pool: the daemons go in the stop order and come back in the start
    order, so no daemon's first ads go to a collector that is about to stop."""
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        m.spawner.started.clear()
        assert await m.service.handle(DaemonCommand(Command.RESTART, How.GRACEFUL)) == Ok()
        assert m.spawner.signalled == ["schedd", "negotiator", "collector"]
        assert [n for n, _ in m.spawner.started] == ["collector", "negotiator", "schedd"]
        status = await m.status()
        assert all(s["Pid"] and s["Wanted"] for s in status.values())
        await m.service.stop(How.GRACEFUL)

    run(test)


def test_a_dead_child_is_restarted_when_its_back_off_timer_fires(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        assert m.service.next_deadline() == T0  # the first advertisement is due at once
        await m.service.on_timer(T0)
        await m.daemon.outbox.flush()
        assert [ad.ad["MyType"] for ad in m.collector.got] == ["DaemonMaster"]
        assert m.service.next_deadline() == T0 + 300  # MASTER_UPDATE_INTERVAL
        m.clock.now = T0 + 10
        m.spawner.last("schedd").exit(1)  # a crash
        await settle()
        assert m.service.next_deadline() == T0 + 10 + 5 + 1  # MASTER_BACKOFF_CONSTANT + FACTOR ** 0
        await m.service.on_timer(T0 + 11)  # too early: nothing is started
        assert len(m.spawner.started) == 3
        m.clock.now = T0 + 16
        await m.service.on_timer(m.clock.now)
        assert [n for n, _ in m.spawner.started][3:] == ["schedd"]
        status = await m.status()
        assert (status["schedd"]["Restarts"], status["schedd"]["Exits"], status["schedd"]["Pid"]) == (1, 1, 103)
        await m.service.stop(How.GRACEFUL)

    run(test)


def test_stopping_goes_in_order_and_off_of_the_master_stops_the_pool(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        reply = await m.daemon.client.send(m.url, DaemonCommand(Command.OFF))
        assert reply == Ok("the pool is shutting down") and m.daemon.stop_requested
        await m.service.stop(m.daemon.stop_how)
        assert m.spawner.signalled == ["schedd", "negotiator", "collector"]  # the startd would be first

    run(test)


def test_the_master_takes_only_daemon_commands(tmp_path: Path) -> None:
    async def test() -> None:
        m = Master(tmp_path)
        async with httpx.AsyncClient(transport=m.network) as http:
            response = await http.post(m.url + PATH, json={"type": "Reschedule", "reason": ""},
                                       headers={"Authorization": f"Bearer {m.daemon.token}"})
        assert response.status_code == 400 and "does not take Reschedule" in response.json()["detail"]

    run(test)


def test_a_child_silent_past_its_not_responding_timeout_is_dumped_killed_and_restarted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr("htcpool.runtime.master.HANG_DUMP_GRACE", 0.01)

    async def test() -> None:
        m = Master(tmp_path)
        await m.service.start()
        await m.service.on_timer(T0)  # the first advertisement: next due at T0 + 300
        negotiator, schedd = m.spawner.last("negotiator"), m.spawner.last("schedd")
        assert m.service.next_deadline() == T0 + 300  # no keep-alive yet: nobody is watched
        negotiator.beat(3)  # NEGOTIATOR_NOT_RESPONDING_TIMEOUT = 3, as the negotiator read it
        schedd.beat(3600)
        assert m.service.next_deadline() == T0 + 3
        m.clock.now = T0 + 2
        negotiator.beat(3)  # still alive: watched from its latest keep-alive
        await m.service.on_timer(T0 + 4.9)
        assert negotiator.signals == [] and m.service.next_deadline() == T0 + 5
        negotiator.stopped = True  # SIGSTOP: it sends nothing more
        m.clock.now = T0 + 5
        with caplog.at_level("WARNING", logger="htcpool.master"):
            await m.service.on_timer(T0 + 5)
            await negotiator.wait()
            await settle()
        assert negotiator.signals == [DUMP_SIGNAL, signal.SIGCONT, signal.SIGKILL]
        assert schedd.signals == []
        assert "negotiator (pid 101) has sent no keep-alive for 3 s (NOT_RESPONDING_TIMEOUT 3 s)" in caplog.text
        assert "negotiator was killed for not responding; restarting in 6 s" in caplog.text
        m.clock.now = T0 + 11
        await m.service.on_timer(m.clock.now)
        assert [n for n, _ in m.spawner.started][3:] == ["negotiator"]
        status = await m.status()
        assert (status["negotiator"]["Restarts"], status["negotiator"]["Exits"]) == (1, 1)
        negotiator.beat(3)  # a late keep-alive of the killed process is not the new one's
        assert m.service.next_deadline() == T0 + 300  # not T0 + 14: the new negotiator is not watched yet
        await m.service.stop(How.FAST)

    run(test)


def test_with_not_responding_want_core_a_hung_child_gets_sigabrt_before_sigkill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("htcpool.runtime.master.HANG_DUMP_GRACE", 0.01)

    async def test() -> None:
        m = Master(tmp_path, "NOT_RESPONDING_WANT_CORE = True\n")
        assert m.service.want_core
        await m.service.start()
        schedd = m.spawner.last("schedd")
        schedd.beat(10)
        schedd.stopped = True
        await m.service.on_timer(T0 + 10)
        await schedd.wait()
        # its stacks, then SIGABRT (its core file), which ends it: no SIGKILL needed
        assert schedd.signals == [DUMP_SIGNAL, signal.SIGCONT, signal.SIGABRT]
        await m.service.stop(How.FAST)

    run(test)


def test_a_want_core_that_is_not_a_boolean_is_named_and_taken_as_false(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def test() -> None:
        with caplog.at_level("WARNING", logger="htcpool.master"):
            m = Master(tmp_path, "NOT_RESPONDING_WANT_CORE = perhaps\n")
        assert m.service.want_core is False
        assert "NOT_RESPONDING_WANT_CORE" in caplog.text and "perhaps" in caplog.text  # named, with the value

    run(test)


def test_a_peaceful_off_is_answered_at_once_while_the_daemon_finishes_its_jobs(tmp_path: Path) -> None:
    """condor_off -peaceful answers at once; the daemon goes when its jobs are done, is not restarted,
    and an on sent meanwhile starts it again once it is gone."""
    async def test() -> None:
        m = Master(tmp_path)
        m.service.background.answer_within = 0.2
        await m.service.start()
        collector = m.spawner.last("collector")  # served by the harness: it takes the peaceful off and stays
        reply = await m.service.handle(DaemonCommand(Command.OFF, How.PEACEFUL, ("collector",)))
        assert reply == Ok("off of collector is under way")
        assert m.service.children["collector"].process is collector and collector.signals == []
        assert [type(x).__name__ for x in m.collector.of(DaemonCommand)] == ["DaemonCommand"]
        collector.exit(0)  # its jobs are done
        await settle()
        child = m.service.children["collector"]
        assert (child.process, child.wanted, child.next_start) == (None, False, None)  # off, not restarted

        assert await m.service.handle(DaemonCommand(Command.ON, How.GRACEFUL, ("collector",))) == Ok()
        second = m.spawner.last("collector")
        assert second is not collector
        await m.service.handle(DaemonCommand(Command.OFF, How.PEACEFUL, ("collector",)))
        assert await m.service.handle(DaemonCommand(Command.ON, How.GRACEFUL, ("collector",))) == Ok()
        second.exit(0)
        await settle()
        m.clock.now += 1
        await m.service.on_timer(m.clock.now)
        assert m.spawner.last("collector") is not second  # started again once the first had gone
        await m.service.stop(How.FAST)

    run(test)
