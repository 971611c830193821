"""The simulated defrag daemon: the defrag core (``htcpool.defrag.Defrag``) on the virtual clock.

It runs when the configuration's ``DAEMON_LIST`` names ``DEFRAG``. The driver arms the core's
timer from ``next_deadline`` and carries out its actions: ``QueryAds`` is asked of the
collector and the answer handed back; ``SendDrain`` is asked of the machine's startd, whose
``DrainReply`` becomes the core's ``DrainAnswer`` (refused when the startd is unknown);
``SendCancel`` is sent; the Defrag ad goes to the collector; ``SaveState`` is not needed (the
state lives as long as the run) and ``LogLine`` is kept in ``log``. ``drains`` counts the
drains the startds accepted.
"""

from __future__ import annotations

from typing import Any

from htcpool.config import Config
from htcpool.defrag import (
    AdsUnavailable,
    Defrag,
    DrainAnswer,
    LogLine,
    SaveState,
    SendCancel,
    SendDrain,
    settings_from_config,
)
from htcpool.protocol import AdList, QueryAds, UpdateAd
from htcpool.protocol.startd import DrainReply
from htcpool.sim.central import COLLECTOR
from htcpool.sim.events import EventLoop
from htcpool.sim.transport import Transport


class DefragDriver:
    def __init__(self, loop: EventLoop, transport: Transport, config: Config, seed: int = 0) -> None:
        self.loop = loop
        self.transport = transport
        self.core = Defrag(settings_from_config(config, "sim"), loop.now, seed=seed)
        self.core.daemon_attrs.update({"MyAddress": "sim://defrag", "Machine": "sim"})
        self.log: list[str] = []
        self.drains = 0
        self._carry(self.core.startup_lines())
        self.arm()

    def arm(self) -> None:
        self.loop.arm(self, self.core.next_deadline(self.loop.now), self.on_timer)

    def on_timer(self, now: float) -> None:
        self._carry(self.core.handle_timer(now))
        self.arm()

    def _carry(self, actions: list[Any]) -> None:
        now = self.loop.now
        for action in actions:
            if isinstance(action, QueryAds):
                reply = self.transport.ask(COLLECTOR, action)
                answer = reply if isinstance(reply, AdList) else AdsUnavailable("no collector")
                self._carry(self.core.handle(now, answer))
            elif isinstance(action, SendDrain):
                reply = self.transport.ask(action.address, action.message)
                accepted = isinstance(reply, DrainReply) and reply.accepted
                self.drains += accepted
                reason = reply.reason if isinstance(reply, DrainReply) else "no such startd"
                self._carry(self.core.handle(now, DrainAnswer(action.machine, accepted, reason)))
            elif isinstance(action, SendCancel):
                self.transport.send(action.address, action.message)
            elif isinstance(action, UpdateAd):
                self.transport.send(COLLECTOR, action)
            elif isinstance(action, LogLine):
                self.log.append(f"{action.level.value}: {action.text}")
            elif not isinstance(action, SaveState):
                raise TypeError(f"the defrag core asked for {action!r}")


__all__ = ["DefragDriver"]
