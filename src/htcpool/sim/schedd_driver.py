"""The simulated access point: the schedd core (``htcpool.schedd.Schedd``) on the virtual clock.

As ``runtime/schedd_service.py`` does, the driver hands every message to the core with the
time, carries out the core's actions in order (messages to a claim's startd, to the negotiator
and to the collector; a reconnection question, which a simulation starting with an empty queue never
asks, is answered "unreachable") and arms the core's timer from its ``next_deadline``. The queue is kept in memory
(``NullStore``: nothing is written, and finished jobs are not kept, so memory follows the
queue, not the trace). The workload's arrivals are ``Submit`` messages at their times. The
core's job events (submit, execute, evicted, terminated, aborted, held …) go to the observers
(``on_events``), which is how the simulation measures jobs; its warnings (a failed transform, a
periodic expression that cannot be evaluated) are counted and the first ``KEPT_WARNINGS`` kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.protocol import Submit
from htcpool.runtime.schedd_service import settings_for_schedd
from htcpool.schedd import (
    Action,
    AskStartd,
    LogEvent,
    NullStore,
    Schedd,
    ScheddError,
    StartdUnreachable,
    ToCollector,
    ToNegotiator,
    ToStartd,
)
from htcpool.sim.central import COLLECTOR, NEGOTIATOR
from htcpool.sim.events import EventLoop
from htcpool.sim.transport import Transport

SCHEDD = "sim://schedd"
SCHEDD_NAME = "schedd@sim"
KEPT_WARNINGS = 100


class ScheddDriver:
    def __init__(self, loop: EventLoop, transport: Transport, config: Config) -> None:
        self.loop = loop
        self.transport = transport
        settings = settings_for_schedd(config, SCHEDD_NAME, "", 0)
        self.core = Schedd(settings, loop.now, store=NullStore(), host="sim")
        self.on_events: list[Callable[[list[tuple[LogEvent, ClassAd | None]]], None]] = []
        self.refused: list[str] = []
        self.warnings: list[str] = []  # the first KEPT_WARNINGS of the core's warnings
        self.warning_count = 0
        transport.register(SCHEDD, self.receive)
        self._carry(self.core.start(loop.now, SCHEDD, "<sim:9618>").actions)
        self.arm()

    @property
    def name(self) -> str:
        return self.core.name

    def receive(self, message: Any) -> Any:
        try:
            outcome = self.core.handle(message, self.loop.now)
        except ScheddError as e:
            self.refused.append(f"{type(message).__name__}: {e}")
            return None
        finally:
            self._events()
        self._carry(outcome.actions)
        self.arm()
        return outcome.reply

    def submit(self, owner: str, ads: tuple[Any, ...]) -> Any:
        return self.receive(Submit(owner, ads))

    def arm(self) -> None:
        self.loop.arm(self, self.core.next_deadline(self.loop.now), self.on_timer)

    def on_timer(self, now: float) -> None:
        self._carry(self.core.handle_timer(now).actions)
        self._events()
        self.arm()

    def _events(self) -> None:
        for warning in self.core.take_warnings():
            self.warning_count += 1
            if len(self.warnings) < KEPT_WARNINGS:
                self.warnings.append(warning)
        events = self.core.take_log_events()
        if events:
            for observer in self.on_events:
                observer(events)

    def _carry(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToStartd):
                if action.address:
                    self.transport.send(action.address, action.message)
            elif isinstance(action, ToNegotiator):
                self.transport.send(NEGOTIATOR, action.message)
            elif isinstance(action, ToCollector):
                self.transport.send(COLLECTOR, action.message)
            elif isinstance(action, AskStartd):  # a simulation starts with an empty queue: nothing to find
                self._carry(self.core.handle(StartdUnreachable(action.message.claim_id), self.loop.now).actions)


__all__ = ["SCHEDD", "SCHEDD_NAME", "ScheddDriver"]
