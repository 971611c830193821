"""The daemons' client on a real loopback server (``http.DaemonClient`` over ``aio_sender``): the
message and its answer, the token and where it may go, the second try with another pool's token
after a 401 naming its realm (docs/flocking.md, "Credentials"), and a daemon that does not answer
as a ``ConnectionError`` naming the address."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from htcpool import protocol
from htcpool.protocol import Failure, Ok
from htcpool.runtime.aio_sender import IDLE_CLOSE
from htcpool.runtime.bearer import Bearer, realm_of
from htcpool.runtime.http import PATH, DaemonClient, RequestRefused, make_app

TOKEN = "home-token"


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` served by uvicorn on a free loopback port, for the length of the block."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off"))
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


def run(test: Callable[[], Any]) -> None:
    asyncio.run(test())


def test_a_message_goes_with_the_token_and_its_answer_comes_back() -> None:
    seen: list[Any] = []

    async def handler(message: Any) -> Any:
        seen.append(message)
        return Ok()

    async def test() -> None:
        async with serving(make_app(handler, TOKEN)) as url:
            client = DaemonClient(TOKEN)
            try:
                for _ in range(3):  # the same kept-alive connection
                    assert await client.send(url, protocol.Reschedule()) == Ok()
            finally:
                await client.close()
        assert seen == [protocol.Reschedule()] * 3

    run(test)


def test_a_refusal_is_request_refused_with_its_status_and_detail() -> None:
    async def handler(message: Any) -> Any:
        raise RequestRefused(409, "not now")

    async def test() -> None:
        async with serving(make_app(handler, TOKEN)) as url:
            client = DaemonClient(TOKEN)
            try:
                with pytest.raises(RequestRefused) as refused:
                    await client.send(url, protocol.Reschedule())
                assert (refused.value.status, refused.value.detail) == (409, "not now")
                wrong = DaemonClient("not-the-token")
                with pytest.raises(RequestRefused) as unknown:
                    await wrong.send(url, protocol.Reschedule())
                await wrong.close()
                assert unknown.value.status == 401
            finally:
                await client.close()

    run(test)


def _other_pool(accepted: str, realm: str, tokens: list[str]) -> Starlette:
    """A daemon of another trust domain: 401 naming ``realm`` for any token but ``accepted``."""

    async def message(request: Request) -> JSONResponse:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        tokens.append(token)
        if token != accepted:
            return JSONResponse(protocol.encode(Failure(401, "not ours")), status_code=401,
                                headers={"WWW-Authenticate": f'Bearer realm="{realm}"'})
        return JSONResponse(protocol.encode(Ok()))

    return Starlette(routes=[Route(PATH, message, methods=["POST"])])


def test_a_401_naming_another_realm_is_tried_once_more_with_that_pools_token_then_remembered() -> None:
    tokens: list[str] = []
    asked: list[str] = []

    def chooser(realm: str) -> str | None:
        asked.append(realm)
        return "b-token" if realm == "b.test" else None

    async def test() -> None:
        async with serving(_other_pool("b-token", "b.test", tokens)) as url:
            client = DaemonClient(TOKEN, chooser=chooser)
            try:
                assert await client.send(url, protocol.Reschedule()) == Ok()
                assert await client.send(url, protocol.Reschedule()) == Ok()
            finally:
                await client.close()
        assert tokens == [TOKEN, "b-token", "b-token"] and asked == ["b.test"]

    run(test)


def test_without_a_token_of_that_realm_the_401_stands() -> None:
    tokens: list[str] = []

    async def test() -> None:
        async with serving(_other_pool("c-token", "c.test", tokens)) as url:
            client = DaemonClient(TOKEN, chooser=lambda realm: None)
            try:
                with pytest.raises(RequestRefused) as refused:
                    await client.send(url, protocol.Reschedule())
            finally:
                await client.close()
        assert refused.value.status == 401 and tokens == [TOKEN]

    run(test)


def test_a_daemon_that_does_not_answer_is_a_connection_error_naming_it() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def test() -> None:
        client = DaemonClient(TOKEN, timeout=2.0)
        try:
            with pytest.raises(ConnectionError, match=f"127.0.0.1:{port}"):
                await client.send(f"http://127.0.0.1:{port}", protocol.Reschedule())
        finally:
            await client.close()

    run(test)


def test_a_daemon_that_hangs_is_a_connection_error_after_the_timeout() -> None:
    async def slow(request: Request) -> JSONResponse:
        await asyncio.sleep(2)
        return JSONResponse(protocol.encode(Ok()))

    async def test() -> None:
        async with serving(Starlette(routes=[Route(PATH, slow, methods=["POST"])])) as url:
            client = DaemonClient(TOKEN, timeout=0.3)
            try:
                with pytest.raises(ConnectionError, match="no answer within 0.3 s"):
                    await client.send(url, protocol.Reschedule())
            finally:
                await client.close()

    run(test)


def test_a_token_goes_only_where_it_may_travel() -> None:
    """HTTPS and loopback carry the token; plain HTTP to another host does not, nor a second try
    there (docs/security.md)."""
    bearer = Bearer("t", chooser=lambda realm: "other")
    assert bearer.first("http://127.0.0.1:9618/v1/message") == "t"
    assert bearer.first("https://cm.example.org:9618/v1/message") == "t"
    assert bearer.first("http://cm.example.org:9618/v1/message") is None
    assert bearer.again("http://cm.example.org:9618/v1/message", None, 401, 'Bearer realm="x"') is None
    assert bearer.again("https://cm.example.org:9618/v1/message", "t", 403, 'Bearer realm="x"') is None
    assert bearer.again("https://cm.example.org:9618/v1/message", "t", 401, 'Bearer realm="x"') == "other"
    assert bearer.first("https://cm.example.org:9618/v1/message") == "other"  # remembered for that server
    assert bearer.first("https://other.example.org:9618/v1/message") == "t"
    assert Bearer("t", anywhere=True).first("http://cm.example.org:9618/v1/message") == "t"
    assert realm_of('Bearer realm="a.test"') == "a.test" and realm_of("Bearer") is None


def test_idle_connections_are_dropped_before_the_daemons_servers_drop_theirs() -> None:
    """A request sent on a connection its server is closing fails though the daemon is up: the
    client lets idle connections go first (``aio_sender.IDLE_CLOSE``)."""
    assert IDLE_CLOSE < uvicorn.Config(Starlette()).timeout_keep_alive
