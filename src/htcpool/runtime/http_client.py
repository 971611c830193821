"""The client side of ``runtime/http.py``'s protocol: what a command-line tool needs to send a daemon
a message and read its answer (``SyncClient``, ``RequestRefused``), apart from the daemons'
server and their asynchronous client. A tool is a fresh process for every command, and what it
imports is paid at every one of them: the server side brings Starlette, the token gate (PyJWT,
cryptography) and aiohttp, which a tool never uses (they were more than half of ``condor_q``'s
start). What both sides share is ``runtime/http_answer.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from htcpool import protocol
from htcpool.runtime.bearer import Bearer, Chooser
from htcpool.runtime.http_answer import PATH, RequestRefused, decode_answer, verify
from htcpool.runtime.timeouts import connect_timeout


class HttpxBearer(httpx.Auth):
    """``bearer.Bearer``'s choice of token as httpx's authentication (``SyncClient`` and the
    in-process transport of ``DaemonClient``)."""

    def __init__(self, bearer: Bearer) -> None:
        self.bearer = bearer
        self.requires_request_body = bearer.chooser is not None  # a refused request is sent again

    def auth_flow(self, request: httpx.Request) -> Any:
        url = str(request.url)
        token = self.bearer.first(url)
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        other = self.bearer.again(url, token, response.status_code, response.headers.get("www-authenticate", ""))
        if other is not None:
            request.headers["Authorization"] = f"Bearer {other}"
            yield request


def limits(timeout: float) -> httpx.Timeout:
    """A request's limit, with a shorter one for connecting (runtime/timeouts.py)."""
    return httpx.Timeout(timeout, connect=connect_timeout(timeout))


class SyncClient:
    """Sends messages to daemons from a command-line tool: ``http://host:port`` with the token (when
    there is one), or ``unix:<path>``, a daemon's Unix socket, where the uid identifies the user;
    ``chooser`` finds the token for a daemon of another trust domain, as for ``DaemonClient``."""

    def __init__(self, token: str | None | Callable[[], str | None], timeout: float = 30.0,
                 ca_file: Path | None = None, chooser: Chooser | None = None) -> None:
        self.timeout = timeout
        self.ca_file = ca_file
        self.chooser = chooser
        self._token = token  # a callable is asked on the first TCP request (finding one reads files)
        self._remote: httpx.Client | None = None
        self._local: dict[str, httpx.Client] = {}

    @property
    def _client(self) -> httpx.Client:
        if self._remote is None:
            token = self._token() if callable(self._token) else self._token
            self._remote = httpx.Client(auth=HttpxBearer(Bearer(token, chooser=self.chooser)), timeout=limits(self.timeout),
                                        trust_env=False, verify=verify(self.ca_file))
        return self._remote

    def send(self, url: str, message: object) -> Any:
        if url.startswith("unix:"):
            path = url.removeprefix("unix:")
            client = self._local.get(path)
            if client is None:
                client = self._local[path] = httpx.Client(
                    transport=httpx.HTTPTransport(uds=path), timeout=self.timeout, trust_env=False)
            response = client.post("http://localhost" + PATH, json=protocol.encode(message))
        else:
            response = self._client.post(url + PATH, json=protocol.encode(message))
        return decode_answer(response.status_code, response.content)

    def close(self) -> None:
        if self._remote is not None:
            self._remote.close()
        for client in self._local.values():
            client.close()


__all__ = ["PATH", "RequestRefused", "SyncClient"]
