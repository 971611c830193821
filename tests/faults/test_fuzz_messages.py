"""Every protocol message, valid and hostile, at every daemon's HTTP endpoint (in-process).

The collector, negotiator, schedd and startd services run in one process behind their real
Starlette applications (``make_app``) with the pool's token; hypothesis draws request bodies
(``fuzzing.bodies``): well-formed messages of every registered type, the same with hostile
field values, and bytes that are no message at all. Every answer must come within a few
seconds, never be a 500, and a refusal must be the documented JSON ``Failure``; afterwards each
daemon still answers its ordinary queries and the schedd still holds the job it had.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from htcpool.classad import parseOne
from htcpool.protocol import QueryAds, QueueQuery, Submit, UserprioQuery, decode
from htcpool.runtime.http import PATH, make_app
from tests.faults.fuzzing import bodies
from tests.runtime.test_negotiator_service import Pool as NegotiatorPool
from tests.runtime.test_schedd_service import Pool as ScheddPool
from tests.runtime.test_startd_service import Startd

ANSWER_WITHIN = 5.0  # seconds: no request may take longer
DAEMONS = ("collector", "negotiator", "schedd", "startd")


class Daemons:
    """The four services in-process, each behind its own application and token."""

    def __init__(self, root: Path) -> None:
        self.schedd = ScheddPool(root / "s")
        self.negotiator = NegotiatorPool(root / "n")
        self.startd = Startd(root / "e")
        self.handlers: dict[str, tuple[Callable[[Any], Awaitable[Any]], str]] = {
            "schedd": (self.schedd.schedd.handle, self.schedd.layout.read_token()),
            "collector": (self.negotiator.collector.handle, self.negotiator.daemon.layout.read_token()),
            "negotiator": (self.negotiator.negotiator.handle, self.negotiator.daemon.layout.read_token()),
            "startd": (self.startd.service.handle, self.startd.layout.read_token()),
        }
        self.clients = {name: httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(handler, token, name)),
                                                base_url=f"http://{name}.test",
                                                headers={"Authorization": f"Bearer {token}"})
                        for name, (handler, token) in self.handlers.items()}

    async def start(self) -> None:
        await self.schedd.schedd.start()
        await self.negotiator.start()
        await self.startd.begin()
        await self.schedd.send(Submit("alice", (parseOne("[JobStatus = 1; Requirements = false]"),)))

    async def post(self, daemon: str, body: bytes) -> httpx.Response:
        return await asyncio.wait_for(self.clients[daemon].post(PATH, content=body), ANSWER_WITHIN)

    async def healthy(self) -> dict[str, Any]:
        """Each daemon's answer to an ordinary query, decoded."""
        schedd = await self.schedd.send(QueueQuery())
        collector = await self.negotiator.collector.handle(QueryAds("Any"))
        negotiator = await self.negotiator.negotiator.handle(UserprioQuery())
        startd = await self.startd.service.handle(QueryAds("Machine"))
        return {"schedd": schedd, "collector": collector, "negotiator": negotiator, "startd": startd}

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()
        await self.schedd.close()


def check_answer(daemon: str, body: bytes, response: httpx.Response, took: float) -> None:
    shown = body[:200]
    assert took < ANSWER_WITHIN, f"{daemon} took {took:.1f} s for {shown!r}"
    assert response.status_code != 500, f"{daemon} answered 500 to {shown!r}: {response.text[:300]}"
    answer = response.json()  # every answer is JSON, refusals included
    if response.status_code >= 400:
        assert answer.get("type") == "Failure", f"{daemon}: {response.status_code} {answer!r} for {shown!r}"
        assert isinstance(decode(answer).detail, str)


def fuzz(tmp_path: Path, examples: int, derandomize: bool) -> None:
    loop = asyncio.new_event_loop()
    daemons = Daemons(tmp_path)
    try:
        loop.run_until_complete(asyncio.wait_for(daemons.start(), 30))

        @settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.function_scoped_fixture])
        @given(body=bodies())
        def one(body: bytes) -> None:
            for daemon in DAEMONS:
                started = time.monotonic()
                response = loop.run_until_complete(daemons.post(daemon, body))
                check_answer(daemon, body, response, time.monotonic() - started)

        one()
        health = loop.run_until_complete(asyncio.wait_for(daemons.healthy(), 30))
        assert [ad["ClusterId"] for ad in health["schedd"].ads] == [1]  # the queue is as it was
        assert health["startd"].ads, "the startd has no slot ads after the fuzzing"
        loop.run_until_complete(daemons.close())
    finally:
        loop.close()


def test_every_daemon_answers_every_message_without_a_500(tmp_path: Path) -> None:
    fuzz(tmp_path, examples=300, derandomize=True)  # the same draws on every run


@pytest.mark.slow
def test_every_daemon_answers_many_more_messages_without_a_500(tmp_path: Path) -> None:
    fuzz(tmp_path, examples=3000, derandomize=False)


def test_the_fuzzer_draws_every_message_type() -> None:
    """The strategy reaches every registered type with a body the codec accepts."""
    from htcpool.protocol import MESSAGE_TYPES
    from tests.faults.fuzzing import valid

    seen: set[str] = set()

    @settings(max_examples=len(MESSAGE_TYPES) * 4, deadline=None, database=None, derandomize=True)
    @given(data=bodies())
    def one(data: bytes) -> None:
        try:
            seen.add(type(decode(json.loads(data))).__name__)
        except Exception:  # hostile bodies are meant not to decode
            return

    one()
    assert seen, "no drawn body decoded"
    for name, cls in MESSAGE_TYPES.items():  # and each one's well-formed draw decodes as itself

        @settings(max_examples=3, deadline=None, database=None, derandomize=True)
        @given(body=valid(cls))
        def decodes(body: dict[str, Any]) -> None:
            assert type(decode(body)).__name__ == name, body  # noqa: B023 (run at once, in the loop)

        decodes()
