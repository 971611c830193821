"""The startd's backfill client processes (HTCondor's BOINC client, here any command).

The startd core decides when the machine's one backfill client runs
(``StartBackfillClient``) and when it must go (``KillBackfillClient``); this module
runs ``BOINC_Executable`` with ``BOINC_Arguments`` in a session of its own, so that
SIGTERM (evict) and SIGKILL (the startd stops) reach every process it started, and
tells the core when the client is up and when it has exited (``started`` and
``exited``, which the startd turns into ``BackfillClientStarted`` and
``BackfillClientExited``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable

from htcpool.config import Config

log = logging.getLogger("htcpool.startd")

Notify = Callable[[str], Awaitable[None]]


class BackfillClients:
    """The backfill client of each slot that runs one."""

    def __init__(self, started: Notify, exited: Notify) -> None:
        self.started = started
        self.exited = exited
        self.running: dict[str, asyncio.subprocess.Process] = {}

    async def start(self, slot: str, config: Config) -> None:
        """Run the configured backfill command for ``slot``; a missing or failing one is logged."""
        command = config.get_str("BOINC_Executable", subsystem="STARTD")
        if not command:
            log.warning("START_BACKFILL is true but BOINC_Executable names no backfill command")
            return
        args = (config.get_str("BOINC_Arguments", subsystem="STARTD") or "").split()
        try:
            proc = await asyncio.create_subprocess_exec(command, *args, start_new_session=True,
                                                        stdout=asyncio.subprocess.DEVNULL,
                                                        stderr=asyncio.subprocess.DEVNULL)
        except OSError as e:
            log.warning("backfill command %s failed: %s", command, e)
            return
        self.running[slot] = proc
        await self.started(slot)

        async def reap() -> None:
            await proc.wait()
            self.running.pop(slot, None)
            await self.exited(slot)

        asyncio.get_running_loop().create_task(reap())

    def evict(self, slot: str) -> None:
        """Ask the slot's client to end (SIGTERM to its session)."""
        proc = self.running.get(slot)
        if proc is not None:
            _kill_group(proc.pid, signal.SIGTERM)

    def kill_all(self) -> None:
        """The startd stops: SIGKILL every client's session."""
        for proc in self.running.values():
            _kill_group(proc.pid, signal.SIGKILL)


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


__all__ = ["BackfillClients"]
