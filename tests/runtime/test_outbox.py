"""The daemons' outbox: order within a key, independence between keys, nothing left behind."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import patch

from htcpool.runtime.daemon import Outbox


class _Peers:
    """A fake DaemonClient: records what arrives where; a URL in ``slow`` answers after a delay."""

    def __init__(self, slow: dict[str, float] | None = None, failures: int = 0) -> None:
        self.slow = slow or {}
        self.failures = failures
        self.got: list[tuple[str, Any]] = []

    async def send(self, url: str, message: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("not there yet")
        await asyncio.sleep(self.slow.get(url, 0.0))
        self.got.append((url, message))
        return None


def _run(test: Any) -> None:
    asyncio.run(asyncio.wait_for(test(), 5.0))


async def _drained(outbox: Outbox) -> None:
    await outbox.flush()


def test_messages_under_one_key_arrive_in_order_and_the_key_is_then_forgotten() -> None:
    async def test() -> None:
        peers = _Peers()
        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]
        for i in range(5):
            outbox.post("http://schedd", i)
        await _drained(outbox)
        assert peers.got == [("http://schedd", i) for i in range(5)]
        assert not outbox._queues and not outbox._tasks and not outbox._resolvers
        outbox.post("http://schedd", 5)  # a later message starts the key again
        await _drained(outbox)
        assert peers.got[-1] == ("http://schedd", 5)
    _run(test)


def test_a_slow_key_does_not_hold_up_another() -> None:
    async def test() -> None:
        peers = _Peers(slow={"http://a": 0.3})

        async def to_b() -> str:
            return "http://b"

        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]
        outbox.post("http://a", "first")
        outbox.post("b:claim1", "second", to_b)
        outbox.post("b:claim2", "third", to_b)
        await asyncio.sleep(0.1)
        assert [m for _, m in peers.got] == ["second", "third"]
        await _drained(outbox)
        assert peers.got[-1] == ("http://a", "first")
    _run(test)


def test_a_failed_send_is_retried_before_the_next_message() -> None:
    async def test() -> None:
        peers = _Peers(failures=2)
        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]
        outbox.post("http://peer", "one")
        outbox.post("http://peer", "two")
        await _drained(outbox)
        assert peers.got == [("http://peer", "one"), ("http://peer", "two")]
    _run(test)


def test_a_message_posted_after_another_key_waits_for_what_that_key_holds() -> None:
    """A schedd's Reschedule goes out once its new submitter ad reached the collector, so the
    cycle it asks for finds the submitter (under a slow collector, it would overtake the ad)."""
    async def test() -> None:
        peers = _Peers(slow={"http://collector": 0.2})
        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]
        outbox.post("collector", "submitter ad", _fixed("http://collector"))
        outbox.post("negotiator", "reschedule", _fixed("http://negotiator"), after=outbox.keys())
        outbox.post("elsewhere", "unordered", _fixed("http://elsewhere"))
        await _drained(outbox)
        assert [m for _, m in peers.got] == ["unordered", "submitter ad", "reschedule"]
    _run(test)


def test_a_message_waits_for_another_key_only_so_long() -> None:
    async def test() -> None:
        peers = _Peers(slow={"http://collector": 2.0})
        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]
        outbox.post("collector", "ad", _fixed("http://collector"))
        outbox.post("negotiator", "reschedule", _fixed("http://negotiator"), after=["collector", "gone"])
        await asyncio.sleep(0.5)
        assert peers.got == [("http://negotiator", "reschedule")]
        await _drained(outbox)
    with patch("htcpool.runtime.daemon.AFTER_PATIENCE", 0.2):
        _run(test)


def _fixed(url: str) -> Any:
    async def resolve() -> str:
        return url
    return resolve


def test_what_a_reply_handler_posts_elsewhere_leaves_before_the_keys_next_message() -> None:
    """The schedd's answer to a partitionable slot's claim posts the leftovers' claim (a new key)
    and the granted claim's activation (the key that got the reply): the claim goes first, so
    the startd carves the next slot before it starts this one's job."""
    async def test() -> None:
        peers = _Peers()
        outbox = Outbox(peers, clock=lambda: 0.0)  # type: ignore[arg-type]

        async def granted(reply: Any) -> None:
            outbox.post("claim 2", "request claim 2", _fixed("http://startd"))
            outbox.post("claim 1", "activate claim 1", _fixed("http://startd"))

        outbox.post("claim 1", "request claim 1", _fixed("http://startd"), on_reply=granted)
        await _drained(outbox)
        assert [m for _, m in peers.got] == ["request claim 1", "request claim 2", "activate claim 1"]
    _run(test)
