"""Protocol messages over HTTP: one Starlette endpoint per daemon, and clients for it.

Every daemon serves ``POST /v1/message`` on its TCP port and on its Unix socket:
the body is one encoded protocol message, the answer is one encoded message
(``Ok`` when there is nothing to say). Each request first passes the daemon's
gate (``runtime/security/gate.py``, docs/security.md): the peer is identified
(its uid on the Unix socket, its token ``Authorization: Bearer …`` on TCP; a
token that proves nothing gets 401 naming why, with ``WWW-Authenticate: Bearer
realm="<TRUST_DOMAIN>"`` naming whose tokens the daemon accepts), the message is checked against
the level it needs (403 naming level, identity and address), and the owner it
names is replaced by the authenticated user. A ``Ping`` is answered by the gate
itself (condor_ping). A body that is not JSON or not a valid message gets 400
naming the problem; a handler refusing the request raises ``RequestRefused``
(status and detail). Nothing a client sends can raise out of the endpoint:
unexpected errors are logged and answered with 500, and the daemon keeps running.

``DaemonClient`` (async, for daemons) and ``SyncClient`` (for the command-line
tools, in ``runtime/http_client.py``; what both share is in ``runtime/http_answer.py``, so that a
tool imports no server and a daemon no httpx) send a message and decode the answer (a daemon
that does not answer is a ``ConnectionError`` from ``DaemonClient``, httpx's own error from
``SyncClient``); a ``Failure`` answer raises
``RequestRefused`` on the client side too. An address ``unix:<path>`` reaches a
daemon's Unix socket; ``https://`` addresses are verified against the pool's
certificate authority; a token is attached only where it may travel (HTTPS,
loopback, in process), never in clear text across the network. Both leave ``HTTP_PROXY`` and the like alone
(``trust_env=False``): daemons of one pool talk to each other directly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from htcpool import protocol
from htcpool.gcpause import paused_gc
from htcpool.protocol import Failure, Ok, Ping, ProtocolError
from htcpool.runtime.aio_sender import AioSender, Unreachable
from htcpool.runtime.bearer import Bearer, Chooser
from htcpool.runtime.http_answer import PATH, RequestRefused, decode_answer, verify
from htcpool.runtime.security.authz import Policy
from htcpool.runtime.security.gate import Gate, Refused, Settings, SharedSecret

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("htcpool.http")

Handler = Callable[[Any], Awaitable[Any]]


def _answer(message: object, status: int = 200, realm: str | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": f'Bearer realm="{realm}"'} if status == 401 and realm else None
    return JSONResponse(protocol.encode(message), status_code=status, headers=headers)


def shared_secret_gate(token: str) -> Gate:
    """A gate that knows one bearer secret, standing for the daemons (in-process pools and tests)."""
    settings = Settings(Policy.from_lookup(lambda knob: None, "", "condor"))
    return Gate(SharedSecret(token), lambda: settings)


#: The largest request body a daemon reads (``MAX_REQUEST_BYTES``, docs/reliability.md): a
#: 20,000-job submit, the largest HTCondor's default MAX_JOBS_PER_SUBMISSION allows, is well under it.
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: a body at least this long (some hundreds of a cluster's job ads) is parsed with the cyclic collector
#: held off
LARGE_BODY = 16 * 1024


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` bytes (declared or sent)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def make_app(handler: Handler, gate: Gate | str, name: str = "daemon",
             max_body: int = DEFAULT_MAX_REQUEST_BYTES) -> Starlette:
    """A Starlette application that feeds decoded, authorized messages to ``handler``; ``gate`` may
    be a bare token (``shared_secret_gate``). A body over ``max_body`` bytes is refused with 413
    before it is read whole."""
    door = shared_secret_gate(gate) if isinstance(gate, str) else gate

    async def message(request: Request) -> JSONResponse:
        try:
            peer = door.identify(request.headers.get("authorization", ""), request.scope.get("client"))
        except Refused as e:
            return _answer(Failure(e.status, e.detail), e.status, door.realm)
        body = await _read_body(request, max_body)
        if body is None:
            detail = f"the request is larger than MAX_REQUEST_BYTES = {max_body} bytes"
            log.warning("%s: refused a request from %s: %s", name, request.scope.get("client"), detail)
            return _answer(Failure(413, detail), 413)
        try:
            if len(body) < LARGE_BODY:
                msg = protocol.decode(json.loads(body))
            else:  # a large submit: no collection of the whole heap in the middle (htcpool.gcpause)
                with paused_gc():
                    msg = protocol.decode(json.loads(body))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:  # bytes that are not UTF-8 text either
            return _answer(Failure(400, f"the body is not JSON: {e}"), 400)
        except ProtocolError as e:
            return _answer(Failure(400, str(e)), 400)
        if isinstance(msg, Ping):
            return _answer(door.ping(peer, msg.levels, "TLS" if request.url.scheme == "https" else "none"))
        try:
            door.authorize(peer, msg, name)
        except Refused as e:
            return _answer(Failure(e.status, e.detail), e.status, door.realm)
        msg = door.stamp(msg, peer)
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


class DaemonClient:
    """Sends messages to daemons from inside an asyncio daemon: over the network with aiohttp
    (``aio_sender``, which says why); ``transport`` replaces the network with httpx's
    (``ASGITransport`` reaches an application in the same process, as tests do). ``ca_file`` is the
    pool's certificate authority, for daemons that speak HTTPS; ``chooser`` finds the token to
    present to a daemon of another trust domain (``bearer``)."""

    def __init__(self, token: str, timeout: float = 10.0,
                 transport: httpx.AsyncBaseTransport | None = None, ca_file: Path | None = None,
                 chooser: Chooser | None = None) -> None:
        bearer = Bearer(token, anywhere=transport is not None, chooser=chooser)
        self._sender: AioSender | None = None
        self._client: httpx.AsyncClient | None = None
        #: the in-process client's request limits and its failures to reach a daemon (httpx's)
        self._limits: Callable[[float], httpx.Timeout] | None = None
        self._unreachable: tuple[type[Exception], ...] = ()
        if transport is None:
            self._sender = AioSender(bearer, timeout, verify(ca_file))
        else:  # httpx only here: a daemon on the network never imports it (``http_answer``)
            import httpx

            from htcpool.runtime.http_client import HttpxBearer, limits

            self._limits, self._unreachable = limits, (httpx.HTTPError,)
            self._client = httpx.AsyncClient(auth=HttpxBearer(bearer), timeout=limits(timeout), trust_env=False,
                                             transport=transport)

    async def send(self, url: str, message: object, timeout: float | None = None) -> Any:
        body = protocol.encode(message)
        if self._sender is not None:
            answer = await self._sender.post(url + PATH, body, timeout)
            return decode_answer(answer.status, answer.body)
        assert self._client is not None and self._limits is not None
        kw: dict[str, Any] = {} if timeout is None else {"timeout": self._limits(timeout)}
        try:
            response = await self._client.post(url + PATH, json=body, **kw)
        except self._unreachable as e:  # as the network's sender: a daemon not answering is a ConnectionError
            raise Unreachable(f"{url}: {e or type(e).__name__}") from None
        return decode_answer(response.status_code, response.content)

    async def close(self) -> None:
        if self._sender is not None:
            await self._sender.close()
        if self._client is not None:
            await self._client.aclose()


__all__ = ["PATH", "DaemonClient", "Ok", "RequestRefused", "make_app", "shared_secret_gate"]
