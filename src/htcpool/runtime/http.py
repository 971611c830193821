"""Protocol messages over HTTP: one Starlette endpoint per daemon, and clients for it.

Every daemon serves ``POST /v1/message``: the body is one encoded protocol
message, the answer is one encoded message (``Ok`` when there is nothing to
say). A request without the pool token (``Authorization: Bearer …``) gets 401;
a body that is not JSON or not a valid message gets 400 naming the problem; a
handler refusing the request raises ``RequestRefused`` (status and detail).
Nothing a client sends can raise out of the endpoint: unexpected errors are
logged and answered with 500, and the daemon keeps running.

``DaemonClient`` (async, for daemons) and ``SyncClient`` (for the command-line
tools) send a message and decode the answer; a ``Failure`` answer raises
``RequestRefused`` on the client side too. Both leave ``HTTP_PROXY`` and the like
alone (``trust_env=False``): daemons of one pool talk to each other directly.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from htcpool import protocol
from htcpool.protocol import Failure, Ok, ProtocolError

log = logging.getLogger("htcpool.http")

Handler = Callable[[Any], Awaitable[Any]]
PATH = "/v1/message"


class RequestRefused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _answer(message: object, status: int = 200) -> JSONResponse:
    return JSONResponse(protocol.encode(message), status_code=status)


def make_app(handler: Handler, token: str, name: str = "daemon") -> Starlette:
    """A Starlette application that feeds decoded messages to ``handler``."""
    expected = f"Bearer {token}".encode()

    async def message(request: Request) -> JSONResponse:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            return _answer(Failure(401, "missing or wrong pool token"), 401)
        body = await request.body()
        try:
            msg = protocol.decode(json.loads(body))
        except json.JSONDecodeError as e:
            return _answer(Failure(400, f"the body is not JSON: {e}"), 400)
        except ProtocolError as e:
            return _answer(Failure(400, str(e)), 400)
        try:
            reply = await handler(msg)
        except RequestRefused as e:
            return _answer(Failure(e.status, e.detail), e.status)
        except Exception as e:  # a daemon must survive any request
            log.exception("%s: handling %s failed", name, type(msg).__name__)
            return _answer(Failure(500, f"{type(e).__name__}: {e}"), 500)
        return _answer(reply if reply is not None else Ok())

    async def ping(request: Request) -> JSONResponse:
        return JSONResponse({"daemon": name})

    return Starlette(routes=[Route(PATH, message, methods=["POST"]), Route("/v1/ping", ping)])


def _decode_reply(response: httpx.Response) -> Any:
    try:
        reply = protocol.decode(response.json())
    except (ValueError, ProtocolError) as e:
        raise RequestRefused(response.status_code, f"unreadable answer: {e}") from None
    if isinstance(reply, Failure):
        raise RequestRefused(reply.status, reply.detail)
    return reply


class DaemonClient:
    """Sends messages to daemons from inside an asyncio daemon. ``transport`` replaces the network
    (httpx's ``ASGITransport`` reaches an application in the same process, as tests do)."""

    def __init__(self, token: str, timeout: float = 10.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._client = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=timeout, trust_env=False,
            transport=transport)

    async def send(self, url: str, message: object, timeout: float | None = None) -> Any:
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        response = await self._client.post(url + PATH, json=protocol.encode(message), **kw)
        return _decode_reply(response)

    async def close(self) -> None:
        await self._client.aclose()


class SyncClient:
    """Sends messages to daemons from a command-line tool."""

    def __init__(self, token: str, timeout: float = 30.0) -> None:
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {token}"}, timeout=timeout, trust_env=False)

    def send(self, url: str, message: object) -> Any:
        response = self._client.post(url + PATH, json=protocol.encode(message))
        return _decode_reply(response)

    def close(self) -> None:
        self._client.close()


__all__ = ["PATH", "DaemonClient", "Ok", "RequestRefused", "SyncClient", "make_app"]
