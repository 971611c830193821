"""The master: starts the pool's daemons, restarts them when they die, stops them.

It reads ``DAEMON_LIST`` (MASTER itself is skipped) and starts each daemon as
its own process (``python -m htcpool.runtime.services NAME``), the collector
first. A name that is not a daemon of its own runs the program its knob names,
with the local name of ``<NAME>_ARGS`` (``STARTD_B = $(STARTD)``,
``STARTD_B_ARGS = -local-name B``: a second startd; ``runtime/local_names.py``). A daemon that exits without being asked to is started again after
``MASTER_BACKOFF_CONSTANT + MASTER_BACKOFF_FACTOR ** restarts`` seconds, at most
``MASTER_BACKOFF_CEILING``; the count goes back to zero once it has run for
``MASTER_RECOVER_FACTOR`` seconds. The master answers ``DaemonCommand``
(a table from command to handler):

* ``off`` (how: graceful, fast or peaceful): stop the named daemons, or all
  and then the master itself (``htcpool down``, condor_off -master);
* ``on``: start daemons that were turned off; ``restart``: stop, then start;
* ``reconfig``: passed on to every daemon (those that cannot re-read their
  configuration in place are restarted);
* ``status``: one record per child (name, pid, wanted, restarts, exits).

A daemon not in ``DAEMON_LIST`` is answered with 404. How a child process is
started is the ``spawn`` callable the service is given (tests give one that
starts nothing).

Stopping sends SIGTERM (graceful) or SIGQUIT (fast); a daemon still alive after
``SHUTDOWN_GRACEFUL_TIMEOUT`` (fast: ``SHUTDOWN_FAST_TIMEOUT``) gets SIGKILL.
The startds stop first, so their jobs are vacated and reported while the schedd
still listens; the collector stops last.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from htcpool.classad import ClassAd
from htcpool.protocol import Command, DaemonCommand, How, Ok, Records, UpdateAd
from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import DaemonEntry, daemon_entries

log = logging.getLogger("htcpool.master")
#: the kinds in the order the master stops them
STOP_ORDER = ("startd", "schedd", "defrag", "negotiator", "collector")


class ChildProcess(Protocol):
    """What the master needs of a child's process (``asyncio.subprocess.Process`` has it)."""

    @property
    def pid(self) -> int: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


#: starts the daemon of that name in the pool's layout (``entry``: its kind and local name when the
#: name is not a kind itself); returns its process
Spawn = Callable[..., Awaitable[ChildProcess]]


async def spawn_process(name: str, layout: PoolLayout, entry: DaemonEntry | None = None) -> ChildProcess:
    """A daemon as a process of its own, its output appended to ``log/<Name>Log.out``."""
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = str(layout.config)
    entry = entry or DaemonEntry(name, name)
    command = [sys.executable, "-m", "htcpool.runtime.services", entry.kind, "--local-dir", str(layout.root)]
    if entry.name != entry.kind or entry.local_name is not None:
        command += ["--as", entry.name] + (["--local-name", entry.local_name] if entry.local_name else [])
    suffix = f".{entry.local_name}" if entry.local_name else ("" if entry.name == entry.kind else f".{entry.name}")
    with open(layout.log / f"{entry.kind.capitalize()}Log{suffix}.out", "ab") as out:
        return await asyncio.create_subprocess_exec(*command, env=env, stdout=out, stderr=out,
                                                    stdin=asyncio.subprocess.DEVNULL)


@dataclass
class Child:
    name: str
    entry: DaemonEntry
    process: ChildProcess | None = None
    wanted: bool = True
    restarts: int = 0
    started_at: float = 0.0
    next_start: float | None = None
    exits: int = 0
    stopping: bool = False  # the master asked it to stop: its exit is no crash


class MasterService:
    def __init__(self, daemon: Daemon, spawn: Spawn = spawn_process) -> None:
        self.daemon = daemon
        self.spawn = spawn
        config = daemon.config
        self.children = {e.name: Child(e.name, e) for e in daemon_entries(config)}
        self.backoff_constant = float(config.get_int("MASTER_BACKOFF_CONSTANT") or 9)
        self.backoff_factor = float(config.get_float("MASTER_BACKOFF_FACTOR") or 2.0)
        self.backoff_ceiling = float(config.get_int("MASTER_BACKOFF_CEILING") or 3600)
        self.recover = float(config.get_int("MASTER_RECOVER_FACTOR") or 300)
        self.graceful_timeout = float(config.get_int("SHUTDOWN_GRACEFUL_TIMEOUT") or 60)
        self.fast_timeout = float(config.get_int("SHUTDOWN_FAST_TIMEOUT") or 30)
        self.stopping = False
        self.started = daemon.clock()
        self.next_advert = daemon.clock()
        self.commands: dict[Command, Callable[[DaemonCommand], Awaitable[Any]]] = {
            Command.STATUS: self._status,
            Command.OFF: self._off,
            Command.ON: self._on,
            Command.RESTART: self._restart,
            Command.RECONFIG: self._reconfig,
        }

    # ------------------------------------------------------------------ children
    async def _spawn(self, child: Child) -> None:
        if child.entry == DaemonEntry(child.name, child.name):
            child.process = await self.spawn(child.name, self.daemon.layout)
        else:
            child.process = await self.spawn(child.name, self.daemon.layout, child.entry)
        child.started_at = self.daemon.clock()
        child.next_start = None
        child.stopping = False
        log.info("started %s (pid %d)", child.name, child.process.pid)
        asyncio.get_running_loop().create_task(self._watch(child, child.process))

    async def _watch(self, child: Child, process: ChildProcess) -> None:
        code = await process.wait()
        if child.process is not process:
            return
        child.process = None
        child.exits += 1
        self.daemon.layout.clear_address(child.name)  # a killed daemon could not clear it itself
        if self.stopping or not child.wanted or child.stopping:
            log.info("%s exited (%s)", child.name, code)
            return
        now = self.daemon.clock()
        if now - child.started_at >= self.recover:
            child.restarts = 0
        delay = min(self.backoff_ceiling, self.backoff_constant + self.backoff_factor ** child.restarts)
        child.restarts += 1
        child.next_start = now + delay
        log.warning("%s exited unexpectedly (status %s); restarting in %.0f s", child.name, code, delay)
        self.daemon.poke()

    async def _wait_for_address(self, name: str, timeout: float = 20.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            child = self.children.get(name)
            if self.daemon.layout.read_address(name) and child is not None and child.process is not None:
                return
            await asyncio.sleep(0.05)

    async def _stop_child(self, child: Child, how: How) -> None:
        process = child.process
        if process is None:
            return
        child.stopping = True
        url = self.daemon.layout.read_address(child.name)
        told = False
        if how == How.PEACEFUL and url is not None:
            try:
                await self.daemon.client.send(url, DaemonCommand(Command.OFF, How.PEACEFUL), timeout=10.0)
                told = True
            except Exception:
                told = False
        if not told:
            try:
                process.send_signal(signal.SIGQUIT if how == How.FAST else signal.SIGTERM)
            except ProcessLookupError:
                return
        timeout = {How.FAST: self.fast_timeout, How.GRACEFUL: self.graceful_timeout}.get(how)
        try:
            await asyncio.wait_for(process.wait(), timeout)  # peaceful: as long as jobs run
        except TimeoutError:
            log.warning("%s did not stop in %.0f s; killing it", child.name, timeout)
            process.kill()
            await process.wait()

    # ------------------------------------------------------------------ service
    async def start(self) -> None:
        self.daemon.layout.master_pid.write_text(f"{os.getpid()}\n")
        for name, child in self.children.items():
            self.daemon.layout.clear_address(name)
            await self._spawn(child)
            if name == "collector":
                await self._wait_for_address("collector")

    async def stop(self, how: How) -> None:
        self.stopping = True
        for child in self._in_stop_order():
            await self._stop_child(child, how)
        try:
            self.daemon.layout.master_pid.unlink()
        except OSError:
            pass

    def _in_stop_order(self) -> list[Child]:
        return sorted(self.children.values(), key=lambda c: STOP_ORDER.index(c.entry.kind))

    def _named(self, names: tuple[str, ...]) -> list[Child]:
        if not names:
            return self._in_stop_order()
        out = []
        for name in names:
            child = self.children.get(name.lower())
            if child is None:
                raise RequestRefused(404, f"no daemon {name!r} in DAEMON_LIST")
            out.append(child)
        return out

    async def handle(self, message: Any) -> Any:
        if not isinstance(message, DaemonCommand):
            raise RequestRefused(400, f"the master does not take {type(message).__name__}")
        return await self.daemon.command_handler(self.commands, message)(message)

    async def _status(self, message: DaemonCommand) -> Records:
        return Records(tuple({"Name": c.name, "Pid": c.process.pid if c.process else 0,
                              "Wanted": c.wanted, "Restarts": c.restarts, "Exits": c.exits}
                             for c in self.children.values()))

    async def _off(self, message: DaemonCommand) -> Ok:
        if not message.daemons or "master" in message.daemons:
            self.daemon.request_stop(message.how)
            return Ok("the pool is shutting down")
        for child in self._named(message.daemons):
            child.wanted = False
            await self._stop_child(child, message.how)
        return Ok()

    async def _on(self, message: DaemonCommand) -> Ok:
        for child in reversed(self._named(message.daemons)):
            child.wanted = True
            if child.process is None:
                await self._spawn(child)
        return Ok()

    async def _restart(self, message: DaemonCommand) -> Ok:
        for child in self._named(message.daemons):
            await self._stop_child(child, message.how)
            child.wanted = True
            await self._spawn(child)
        return Ok()

    async def _reconfig(self, message: DaemonCommand) -> Ok:
        for child in self._named(message.daemons):
            if await self._reconfig_in_place(child):
                continue
            await self._stop_child(child, How.GRACEFUL)
            child.wanted = True
            await self._spawn(child)
        return Ok()

    async def _reconfig_in_place(self, child: Child) -> bool:
        url = self.daemon.layout.read_address(child.name)
        if url is None:
            return False
        try:
            await self.daemon.client.send(url, DaemonCommand(Command.RECONFIG), timeout=10.0)
        except Exception:
            return False
        return True

    def next_deadline(self) -> float | None:
        times = [c.next_start for c in self.children.values() if c.next_start is not None]
        return min(times + [self.next_advert])

    def _advertise(self, now: float) -> None:
        host = self.daemon.host
        ad = ClassAd({"MyType": "DaemonMaster", "Name": host, "Machine": host, "MyAddress": self.daemon.url,
                      "MasterIpAddr": self.daemon.sinful, "DaemonStartTime": int(self.started),
                      "DaemonList": " ".join(["MASTER", *(n.upper() for n in self.children)])})
        self.daemon.to_collector(UpdateAd(ad))
        self.next_advert = now + float(self.daemon.config.get_int("MASTER_UPDATE_INTERVAL") or 300)

    async def on_timer(self, now: float) -> None:
        if now >= self.next_advert and not self.stopping:
            self._advertise(now)
        for child in self.children.values():
            if child.next_start is not None and now >= child.next_start and child.wanted \
                    and child.process is None and not self.stopping:
                await self._spawn(child)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="htcpool-master")
    parser.add_argument("--local-dir", required=True)
    args = parser.parse_args(argv)
    layout = PoolLayout(Path(args.local_dir))
    logging.basicConfig(filename=layout.log_file("master"), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    config = daemon_config(layout, "MASTER")
    daemon = Daemon("master", layout, config)
    try:
        asyncio.run(daemon.run(MasterService(daemon)))
    except Exception:
        log.exception("the master failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
