"""Several startds under one master: DAEMON_LIST entries with their kinds and local names, each
instance's files and name, and the master starting and stopping them (children faked)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from htcpool.config import Config
from htcpool.protocol import Command, DaemonCommand, Records
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import (
    DaemonEntry,
    daemon_entries,
    execute_dir,
    kind_of,
    local_name_of,
    log_file,
    schedd_name,
    spool_dir,
    startd_name,
)
from htcpool.runtime.master import MasterService
from tests.runtime.inprocess import Clock, Network, daemon, pool_layout
from tests.runtime.test_master import FakeProcess

SEVERAL = """
LOG = /pool/log
EXECUTE = /pool/execute
DAEMON_LIST = MASTER, STARTD_B, SCHEDD, COLLECTOR, STARTD, NEGOTIATOR, STARTD_C, VIEW_SERVER
STARTD_B = $(STARTD)
STARTD_B_ARGS = -f -local-name B
STARTD_C = $(SBIN)/condor_startd
STARTD_C_ARGS = -local-name C
STARTD_C_LOG = $(LOG)/TheCLog
B.EXECUTE = $(EXECUTE)/second
B.STARTD_NAME = bee
C.STARTD_NAME = cee@elsewhere
FULL_HOSTNAME = node.example
"""


def config(local_name: str | None = None, subsystem: str = "MASTER") -> Config:
    return Config.from_text(SEVERAL, subsystem=subsystem, local_name=local_name)


def test_daemon_list_entries_have_kinds_local_names_and_start_order() -> None:
    assert daemon_entries(config()) == [
        DaemonEntry("collector", "collector"), DaemonEntry("negotiator", "negotiator"),
        DaemonEntry("schedd", "schedd"), DaemonEntry("startd_b", "startd", "B"),
        DaemonEntry("startd", "startd"), DaemonEntry("startd_c", "startd", "C"),
    ]  # VIEW_SERVER is no daemon of htcpool's: left out


def test_kind_and_local_name_parsing() -> None:
    c = config()
    assert kind_of(c, "STARTD_B") == "startd" and kind_of(c, "schedd") == "schedd"
    assert kind_of(c, "VIEW_SERVER") is None and kind_of(c, "NOTHING_SET") is None
    assert local_name_of("-f -local-name B") == "B" and local_name_of("-f") is None
    assert local_name_of("-local-name 'two words'") == "two words" and local_name_of("-local-name") is None


def test_each_instance_has_its_own_files(tmp_path: Path) -> None:
    layout = PoolLayout(tmp_path)
    b, c = DaemonEntry("startd_b", "startd", "B"), DaemonEntry("startd_c", "startd", "C")
    assert log_file(layout, config("B", "STARTD"), b) == layout.log / "StartdLog.B"
    assert log_file(layout, config("C", "STARTD"), c) == Path("/pool/log/TheCLog")
    assert log_file(layout, config(None, "STARTD"), DaemonEntry("startd", "startd")) == layout.log / "StartdLog"
    assert execute_dir(layout, config("B", "STARTD"), "B") == Path("/pool/execute/second")
    assert execute_dir(layout, config("C", "STARTD"), "C") == tmp_path / "execute.C"
    assert execute_dir(layout, config(None, "STARTD"), None) == layout.execute


def test_startd_names_are_completed_with_the_host_as_htcondor_does() -> None:
    assert startd_name(config("B", "STARTD"), "B") == "bee@node.example"
    assert startd_name(config("C", "STARTD"), "C") == "cee@elsewhere"
    assert startd_name(config("D", "STARTD"), "D") == "D@node.example"  # no STARTD_NAME: the local name
    assert startd_name(config(None, "STARTD"), None) == "node.example"


class Spawner:
    def __init__(self) -> None:
        self.started: list[tuple[str, DaemonEntry | None]] = []
        self.signalled: list[str] = []
        self.processes: dict[str, FakeProcess] = {}

    async def __call__(self, name: str, layout: PoolLayout, entry: DaemonEntry | None = None) -> FakeProcess:
        process = FakeProcess(100 + len(self.started), name, self.signalled)
        self.started.append((name, entry))
        self.processes[name] = process
        layout.write_address(name, f"http://{name}.test")
        return process


def test_master_starts_each_startd_with_its_local_name_and_stops_the_startds_first(tmp_path: Path) -> None:
    async def test() -> None:
        layout = pool_layout(tmp_path, SEVERAL.replace("LOG = /pool/log\n", "").replace(
            "EXECUTE = /pool/execute\n", ""))  # the pool's own
        spawner = Spawner()
        service = MasterService(daemon("master", layout, Clock(), Network()), spawn=spawner)
        await service.start()
        assert spawner.started == [
            ("collector", None), ("negotiator", None), ("schedd", None),
            ("startd_b", DaemonEntry("startd_b", "startd", "B")), ("startd", None),
            ("startd_c", DaemonEntry("startd_c", "startd", "C"))]
        reply = await service.handle(DaemonCommand(Command.STATUS))
        assert isinstance(reply, Records) and {r["Name"] for r in reply.rows} >= {"startd_b", "startd_c"}
        await service.handle(DaemonCommand(Command.OFF, daemons=("STARTD_B",)))
        assert spawner.signalled == ["startd_b"]
        await service.handle(DaemonCommand(Command.ON, daemons=("startd_b",)))
        assert spawner.started[-1] == ("startd_b", DaemonEntry("startd_b", "startd", "B"))
        await service.stop("graceful")
        assert spawner.signalled[1:] == ["startd_b", "startd", "startd_c", "schedd", "negotiator", "collector"]

    asyncio.run(test())


def test_a_second_schedd_keeps_its_own_spool_and_name() -> None:
    text = "SPOOL = /pool/spool\nFULL_HOSTNAME = host.example\nSCHEDD_X = $(SCHEDD)\nX.SPOOL = /elsewhere\n"
    layout = PoolLayout(Path("/pool"))
    plain = Config.from_text(text, subsystem="SCHEDD", local_name="B")
    assert spool_dir(layout, plain, None) == layout.spool
    assert spool_dir(layout, plain, "B") == Path("/pool/spool.B")  # $(SPOOL).B, the manual's way
    assert spool_dir(layout, Config.from_text(text, subsystem="SCHEDD", local_name="X"), "X") == Path("/elsewhere")
    assert schedd_name(plain, "B", "me@host") == "B@host.example"  # build_valid_daemon_name
    assert schedd_name(plain, None, "me@host") == "me@host"
    named = Config.from_text(text + "B.SCHEDD_NAME = second\n", subsystem="SCHEDD", local_name="B")
    assert schedd_name(named, "B", "me@host") == "second"
