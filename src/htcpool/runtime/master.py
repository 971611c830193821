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
* off, restart and reconfig answer once done or after ``ANSWER_WITHIN`` seconds, whichever is
  first, and finish in the background (a peaceful off lasts as long as the jobs);
* ``reconfig``: passed on to every daemon (those that cannot re-read their
  configuration in place are restarted);
* ``status``: one record per child (name, pid, wanted, restarts, exits).

A daemon not in ``DAEMON_LIST`` is answered with 404. The master listens where the pool's other
daemons do (``runtime/network.py``: loopback on one host, the network with TLS across hosts) and
advertises a ``DaemonMaster`` ad with its address, so an administrator on another host reaches it
(``condor_off -name``, ``cli/remote_master.py``); its gate allows the commands at ADMINISTRATOR
and ``status`` at READ (``security/levels.py``). How a child process is
started is the ``spawn`` callable the service is given (``runtime/spawn.py``;
tests give one that starts nothing).

Liveness, not only exit (HTCondor's ``NOT_RESPONDING_TIMEOUT``): each child sends
keep-alives carrying its timeout (``runtime/childalive.py``); ``liveness.overdue``
decides who has been silent too long. The master logs the daemon, its pid and its
silence, asks it for its stacks (SIGUSR2, written to its log; SIGCONT for a
stopped one), kills it ``HANG_DUMP_GRACE`` seconds later (SIGABRT first with
``NOT_RESPONDING_WANT_CORE``) and restarts it with the back-off above.

One master per local directory: ``master_main.main`` takes the directory's lock
(``runtime/poollock.py``) before anything else and exits with ``EXIT_LOCKED``
when another master has it; ``start`` ends the daemons a dead predecessor left
(``spawn.end_orphans``) before it starts its own.

Stopping sends SIGTERM (graceful) or SIGQUIT (fast); a daemon still alive after
``SHUTDOWN_GRACEFUL_TIMEOUT`` (fast: ``SHUTDOWN_FAST_TIMEOUT``) gets SIGKILL.
The startds stop first, so their jobs are vacated and reported while the schedd
still listens; the collector stops last.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.config.errors import ConfigError
from htcpool.protocol import Command, DaemonCommand, How, Ok, Records, UpdateAd
from htcpool.runtime.background import Background
from htcpool.runtime.childalive import DUMP_SIGNAL
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.liveness import DEFAULT_TIMEOUT, Heartbeat, Overdue, next_check, overdue
from htcpool.runtime.local_names import DaemonEntry, daemon_entries
from htcpool.runtime.pidfile import remove_pid_file, write_pid_file
from htcpool.runtime.spawn import (
    ChildProcess,
    DaemonForks,
    Spawn,
    end_orphans,
    pid_file,
    spawn_process,
)

log = logging.getLogger("htcpool.master")
#: the kinds in the order the master stops them
STOP_ORDER = ("startd", "schedd", "defrag", "negotiator", "collector")
#: seconds a hung daemon gets to write its stacks into its log before it is killed
HANG_DUMP_GRACE = 2.0
#: seconds an off, restart or reconfig command waits for its daemons before the master answers
ANSWER_WITHIN = 2.0


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
    alive_at: float | None = None  # its last keep-alive since it started; None: none yet
    alive_timeout: float = float(DEFAULT_TIMEOUT)  # the NOT_RESPONDING_TIMEOUT that keep-alive gave
    hung: bool = False  # the master is killing it for not responding


class MasterService:
    def __init__(self, daemon: Daemon, spawn: Spawn | None = None) -> None:
        self.daemon = daemon
        config = daemon.config
        # daemons forked from a server that has imported them (runtime/spawn.py; MASTER_FORK_SERVER,
        # htcpool's own knob), unless the caller says how to start them
        self.forks = DaemonForks(daemon.layout) if spawn is None and self._flag(config, "MASTER_FORK_SERVER", True) else None
        self.spawn: Spawn = spawn or (self.forks.spawn if self.forks is not None else spawn_process)
        self.children = {e.name: Child(e.name, e) for e in daemon_entries(config)}
        self.backoff_constant = float(config.get_int("MASTER_BACKOFF_CONSTANT") or 9)
        self.backoff_factor = float(config.get_float("MASTER_BACKOFF_FACTOR") or 2.0)
        self.backoff_ceiling = float(config.get_int("MASTER_BACKOFF_CEILING") or 3600)
        self.recover = float(config.get_int("MASTER_RECOVER_FACTOR") or 300)
        self.graceful_timeout = float(config.get_int("SHUTDOWN_GRACEFUL_TIMEOUT") or 60)
        self.fast_timeout = float(config.get_int("SHUTDOWN_FAST_TIMEOUT") or 30)
        self.want_core = self._flag(config, "NOT_RESPONDING_WANT_CORE", False)
        self.stopping = False
        self.background = Background(ANSWER_WITHIN)  # off, restart and reconfig still under way
        self.started = daemon.clock()
        self.next_advert = daemon.clock()
        self.commands: dict[Command, Callable[[DaemonCommand], Awaitable[Any]]] = {
            Command.STATUS: self._status,
            Command.OFF: self._off,
            Command.ON: self._on,
            Command.RESTART: self._restart,
            Command.RECONFIG: self._reconfig,
        }

    @staticmethod
    def _flag(config: Config, knob: str, default: bool) -> bool:
        """A boolean knob; a value that is not a boolean is logged and taken as ``default``."""
        try:
            return bool(config.get_bool(knob, default=default))
        except (ConfigError, ValueError) as e:
            log.warning("%s: %s; using %s", knob, e, default)
            return default

    # ------------------------------------------------------------------ children
    async def _spawn(self, child: Child) -> None:
        if child.entry == DaemonEntry(child.name, child.name):
            child.process = await self.spawn(child.name, self.daemon.layout)
        else:
            child.process = await self.spawn(child.name, self.daemon.layout, child.entry)
        child.started_at = self.daemon.clock()
        child.next_start = None
        child.stopping = False
        child.alive_at = None
        child.hung = False
        log.info("started %s (pid %d)", child.name, child.process.pid)
        child.process.keepalives(functools.partial(self._alive, child, child.process))
        asyncio.get_running_loop().create_task(self._watch(child, child.process))

    def _alive(self, child: Child, process: ChildProcess, timeout: float) -> None:
        """A keep-alive from ``process``, giving its NOT_RESPONDING_TIMEOUT."""
        if child.process is not process:
            return
        first = child.alive_at is None
        child.alive_at = self.daemon.clock()
        child.alive_timeout = timeout
        if first:  # watched from now on: a new deadline
            self.daemon.poke()

    async def _watch(self, child: Child, process: ChildProcess) -> None:
        code = await process.wait()
        remove_pid_file(pid_file(self.daemon.layout, child.name), process.pid)
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
        how = "was killed for not responding" if child.hung else f"exited unexpectedly (status {code})"
        log.warning("%s %s; restarting in %.0f s", child.name, how, delay)
        self.daemon.poke()

    def _heartbeats(self) -> list[Heartbeat]:
        """The keep-alives of the children the master watches: running, not being stopped or killed."""
        return [Heartbeat(c.name, c.process.pid, c.alive_at, c.alive_timeout) for c in self.children.values()
                if c.process is not None and not c.stopping and not c.hung]

    def _hung(self, late: Overdue) -> None:
        child = self.children[late.name]
        process = child.process
        if process is None:
            return
        child.hung = True
        log.error("%s (pid %d) has sent no keep-alive for %.0f s (NOT_RESPONDING_TIMEOUT %.0f s): it is hung; "
                  "its stacks go to its log, then it is killed", late.name, late.pid, late.silent, late.timeout)
        asyncio.get_running_loop().create_task(self._end_hung(process))

    async def _end_hung(self, process: ChildProcess) -> None:
        """Ask ``process`` for its stacks (a stopped process is continued to write them), give it a
        moment, then kill it (SIGABRT first with NOT_RESPONDING_WANT_CORE, for a core file)."""
        for sig in (DUMP_SIGNAL, signal.SIGCONT, signal.SIGABRT, signal.SIGKILL):
            if sig == signal.SIGABRT and not self.want_core:
                continue
            try:
                process.send_signal(sig)
            except ProcessLookupError:
                return
            if sig in (signal.SIGCONT, signal.SIGABRT):
                try:
                    await asyncio.wait_for(process.wait(), HANG_DUMP_GRACE)
                    return
                except TimeoutError:
                    pass

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
        layout = self.daemon.layout
        write_pid_file(layout.master_pid, os.getpid())
        await end_orphans(layout, self.fast_timeout, keep=lambda path: path == layout.master_pid)
        for name, child in self.children.items():
            self.daemon.layout.clear_address(name)
            await self._spawn(child)
            if name == "collector":
                await self._wait_for_address("collector")

    async def stop(self, how: How) -> None:
        self.stopping = True
        for child in self._in_stop_order():
            await self._stop_child(child, how)
        if self.forks is not None:
            await self.forks.close()
        remove_pid_file(self.daemon.layout.master_pid, os.getpid())

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
        children = self._named(message.daemons)
        for child in children:
            child.wanted = False
        return await self._answer_soon(self._stop_all(children, message.how), "off", children)

    async def _stop_all(self, children: list[Child], how: How) -> None:
        for child in children:
            await self._stop_child(child, how)

    async def _on(self, message: DaemonCommand) -> Ok:
        for child in reversed(self._named(message.daemons)):
            child.wanted = True
            if child.process is None:
                await self._spawn(child)
            elif child.stopping:  # still on its way down from an earlier off: start it once it is gone
                child.next_start = self.daemon.clock()
        return Ok()

    async def _restart(self, message: DaemonCommand) -> Ok:
        children = self._named(message.daemons)
        if self.forks is not None:  # the restarted daemons run the code installed now
            self.forks.renew()
        return await self._answer_soon(self._restart_all(children, message.how), "restart", children)

    async def _restart_all(self, children: list[Child], how: How) -> None:
        """Stop the children (in the order given), then start them in the order ``start`` does,
        the collector first and waited for, as HTCondor's master brings its daemons back: a
        daemon restarted before the collector would send its first ads to the collector that is
        about to go, and the pool would not see it until its next update."""
        for child in children:
            await self._stop_child(child, how)
        for child in [c for c in self.children.values() if c in children]:
            child.wanted = True
            if child.process is None and not self.stopping:  # not if the pool went down meanwhile
                await self._spawn(child)
                if child.entry.kind == "collector":
                    await self._wait_for_address(child.name)

    async def _reconfig(self, message: DaemonCommand) -> Ok:
        children = self._named(message.daemons)
        return await self._answer_soon(self._reconfig_all(children), "reconfig", children)

    async def _reconfig_all(self, children: list[Child]) -> None:
        for child in children:
            if await self._reconfig_in_place(child):
                continue
            await self._restart_all([child], How.GRACEFUL)

    async def _answer_soon(self, work: Coroutine[Any, Any, None], command: str, children: list[Child]) -> Ok:
        """Run ``work`` and answer once it is done or ``ANSWER_WITHIN`` seconds have passed, whichever
        is first (runtime/background.py): condor_off answers at once, a peaceful off lasts as long
        as the jobs do."""
        names = ", ".join(c.name for c in children)
        if await self.background.run(work, f"{command} of {names}"):
            return Ok()
        return Ok(f"{command} of {names} is under way")

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
        check = next_check(self._heartbeats())
        return min(times + [self.next_advert] + ([] if check is None else [check]))

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
        if not self.stopping:
            for late in overdue(self._heartbeats(), now):
                self._hung(late)
