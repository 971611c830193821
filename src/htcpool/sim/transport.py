"""Protocol messages between the simulated daemons, handed over in memory.

``send(address, message)`` delivers a one-way message (a claim request, a job update, a match,
an ad for the collector …) ``delay`` seconds later (``SimOptions.message_delay``, 0 by
default) through the event loop, so messages sent at one instant arrive in the order they
were sent, after everything already due at that instant. ``ask(address, message)`` is a
question answered at once (the negotiator's queries of the collector and the schedds at the
start of a cycle): the answer is the state of the asked daemon at the instant of the question,
as a live pool's fast queries give it. Messages are the very objects of ``htcpool.protocol``;
they are frozen, so no copy is needed (the protocol tests check that each survives the wire).
A message to an address nobody has is counted in ``lost`` and dropped, as the live outbox
would give up on a daemon that is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.sim.events import EventLoop, Priority

Receiver = Callable[[Any], Any]


class Transport:
    """Addresses of the simulated daemons and the delivery of their messages."""

    def __init__(self, loop: EventLoop, delay: float = 0.0) -> None:
        self.loop = loop
        self.delay = delay
        self.receivers: dict[str, Receiver] = {}
        self.sent = 0
        self.lost = 0

    def register(self, address: str, receiver: Receiver) -> None:
        self.receivers[address] = receiver

    def send(self, address: str, message: Any) -> None:
        """Deliver ``message`` to ``address`` after the modelled delay."""
        receiver = self.receivers.get(address)
        if receiver is None:
            self.lost += 1
            return
        self.sent += 1
        self.loop.at(self.loop.now + self.delay, Priority.MESSAGE, lambda: receiver(message))

    def ask(self, address: str, message: Any) -> Any:
        """The answer of ``address`` to ``message``, now (None when nobody is there)."""
        receiver = self.receivers.get(address)
        if receiver is None:
            self.lost += 1
            return None
        return receiver(message)


__all__ = ["Receiver", "Transport"]
