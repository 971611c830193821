"""The defrag daemon: the ``htcpool.defrag`` core over the protocol (docs/defrag.md).

The master starts it when ``DAEMON_LIST`` names ``DEFRAG``. The service reads the
``DEFRAG_*`` knobs (``settings_from_config``), the last poll time from
``DEFRAG_STATE_FILE``, and carries out what the core returns:

* ``QueryAds``: asks the collector for the partitionable startd ads and hands them back
  (``AdsUnavailable`` when the collector does not answer: that poll does nothing);
* ``SendDrain``: sends the ``Drain`` to the startd at the ad's ``MyAddress`` and tells
  the core whether it was accepted (a refusal, 409, or no answer counts as a failure);
* ``SendCancel``: posts the ``CancelDrain`` through the outbox;
* ``UpdateAd``: advertises the Defrag ad (with this daemon's ``Machine``, ``MyAddress``
  and ``UpdateSequenceNumber``) every DEFRAG_UPDATE_INTERVAL; ``InvalidateAd`` on stop;
* ``SaveState``: writes DEFRAG_STATE_FILE (a new file renamed over the old one);
* ``LogLine``: writes to ``log/DefragLog``, the decisions and every unusable knob.

It takes ``DaemonCommand`` ``off`` and ``reconfig`` (the knobs are read again and the
core reconfigured in place).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from htcpool.defrag import (
    Action,
    AdsUnavailable,
    Defrag,
    DrainAnswer,
    LogLevel,
    LogLine,
    SaveState,
    SendCancel,
    SendDrain,
    parse_state,
    settings_from_config,
)
from htcpool.protocol import (
    AdList,
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    Ok,
    QueryAds,
    UpdateAd,
)
from htcpool.runtime.daemon import CollectorUnavailable, Daemon
from htcpool.runtime.http import RequestRefused

log = logging.getLogger("htcpool.defrag")


def read_state(path: str) -> float | None:
    """The last poll time saved in DEFRAG_STATE_FILE; None when there is none or it cannot be read."""
    if not path:
        return None
    try:
        return parse_state(Path(path).read_text())
    except FileNotFoundError:
        log.info("state file %s does not yet exist", path)
    except OSError as e:
        log.warning("cannot read the state file %s: %s", path, e)
    return None


def write_state(path: str, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    new = target.with_name(target.name + ".new")
    new.write_text(text)
    os.replace(new, target)


class DefragService:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.settings = settings_from_config(daemon.config, daemon.host)
        now = daemon.clock()
        self.core = Defrag(self.settings, now, last_poll=read_state(self.settings.state_file), seed=int(now))
        self.sequence = 0
        self.commands: dict[Command, Callable[[DaemonCommand], Awaitable[Ok]]] = {
            Command.OFF: self._off,
            Command.RECONFIG: self._reconfig,
        }
        self.actions: dict[type, Callable[[Any], Awaitable[None]]] = {
            QueryAds: self._query, SendDrain: self._drain, SendCancel: self._cancel, UpdateAd: self._advertise,
            SaveState: self._save, LogLine: self._log,
        }

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self.core.daemon_attrs = {"Machine": self.daemon.host, "MyAddress": self.daemon.url}
        await self.apply(self.core.startup_lines())

    async def stop(self, how: How) -> None:
        self.daemon.to_collector(InvalidateAd("Defrag", self.settings.name))
        await self.daemon.outbox.flush()

    # ------------------------------------------------------------------ messages
    async def handle(self, message: Any) -> Any:
        if isinstance(message, DaemonCommand):
            return await self.daemon.command_handler(self.commands, message)(message)
        raise RequestRefused(400, f"the defrag daemon does not take {type(message).__name__}")

    async def _off(self, message: DaemonCommand) -> Ok:
        return self.daemon.stop_on_command(message)

    async def _reconfig(self, message: DaemonCommand) -> Ok:
        self.settings = settings_from_config(self.daemon.reread_config(), self.daemon.host)
        await self.apply(self.core.reconfigure(self.settings))
        self.daemon.poke()
        return Ok("reconfigured")

    # ------------------------------------------------------------------ timers and actions
    def next_deadline(self) -> float | None:
        return self.core.next_deadline(self.daemon.clock())

    async def on_timer(self, now: float) -> None:
        await self.apply(self.core.handle_timer(now))

    async def apply(self, actions: list[Action]) -> None:
        for action in actions:
            await self.actions[type(action)](action)

    async def _query(self, query: QueryAds) -> None:
        answer: AdList | AdsUnavailable
        try:
            answer = await self.daemon.ask_collector(query)
        except CollectorUnavailable as e:
            answer = AdsUnavailable(str(e))
        await self.apply(self.core.handle(self.daemon.clock(), answer))

    async def _drain(self, action: SendDrain) -> None:
        try:
            await self.daemon.client.send(action.address, action.message)
            answer = DrainAnswer(action.machine, True)
        except RequestRefused as e:
            answer = DrainAnswer(action.machine, False, e.detail)
        except OSError as e:
            answer = DrainAnswer(action.machine, False, f"no answer from {action.address}: {e}")
        await self.apply(self.core.handle(self.daemon.clock(), answer))

    async def _cancel(self, action: SendCancel) -> None:
        self.daemon.outbox.post(action.address, action.message)

    async def _advertise(self, update: UpdateAd) -> None:
        update.ad["UpdateSequenceNumber"] = self.sequence
        self.sequence += 1
        self.daemon.to_collector(update)

    async def _save(self, action: SaveState) -> None:
        try:
            write_state(action.path, action.text)
        except OSError as e:
            log.warning("cannot write the state file %s: %s", action.path, e)

    async def _log(self, line: LogLine) -> None:
        log.log(logging.WARNING if line.level is LogLevel.WARNING else logging.INFO, "%s", line.text)
