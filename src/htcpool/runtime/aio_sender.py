"""The daemons' HTTP client on the network: one aiohttp session per daemon, kept-alive connections.

Why aiohttp and not httpx, which the command-line tools use (``http.SyncClient``): a daemon's
requests are much of its work on a busy pool (a startd sends four or so per job: the job's end
and its activation's reply to its schedd, its slot's ads to the collector), and for the same
request on loopback httpx's asynchronous client spends 0.63 ms of CPU, this one 0.22 ms
(``benchmarks/bench_http_client.py``; docs/performance.md, "issue 15, sixth pass"). httpx stays
the client of the tests' in-process transport, which aiohttp cannot reach.

``AioSender.post`` sends one JSON body and gives the answer's status, its ``WWW-Authenticate`` and
its body; a failure to reach the daemon or to read its answer is ``Unreachable`` (a
``ConnectionError``, which every caller already counts as a daemon not answering), never one of
aiohttp's own exceptions.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from typing import Any

import aiohttp

from htcpool.runtime.bearer import Bearer
from htcpool.runtime.timeouts import connect_timeout

#: seconds an idle kept-alive connection is kept, under the 5 s after which the daemons' servers
#: (uvicorn's ``timeout_keep_alive``) close theirs: a request is never sent on a connection its
#: server is closing at that moment, which would fail though the daemon is there
IDLE_CLOSE = 4.0


class Unreachable(ConnectionError):
    """The daemon could not be reached, or its answer not read; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    www_authenticate: str
    body: bytes


def _timeout(seconds: float) -> aiohttp.ClientTimeout:
    """As httpx's ``Timeout(seconds, connect=…)``: a limit on each step, not on the whole."""
    return aiohttp.ClientTimeout(total=None, connect=seconds, sock_connect=connect_timeout(seconds),
                                 sock_read=seconds)


class AioSender:
    """Requests of one daemon (see the module docstring); ``tls`` verifies ``https://`` servers
    (True: the system's authorities)."""

    def __init__(self, bearer: Bearer, timeout: float, tls: ssl.SSLContext | bool = True) -> None:
        self.bearer = bearer
        self.timeout = timeout
        self.tls = tls
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # no proxies from the environment (trust_env is off by default): a pool's daemons talk directly
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self.tls,
                                                                                 keepalive_timeout=IDLE_CLOSE))
        return self._session

    async def post(self, url: str, body: Any, timeout: float | None = None) -> Answer:
        """``body`` as JSON to ``url``, sent once more with another token when the first is
        refused (``Bearer.again``)."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()  # as httpx
        token = self.bearer.first(url)
        answer = await self._send(url, data, token, timeout)
        other = self.bearer.again(url, token, answer.status, answer.www_authenticate)
        return answer if other is None else await self._send(url, data, other, timeout)

    async def _send(self, url: str, data: bytes, token: str | None, timeout: float | None) -> Answer:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        seconds = self.timeout if timeout is None else timeout
        try:
            async with self._open().post(url, data=data, headers=headers, timeout=_timeout(seconds)) as response:
                return Answer(response.status, response.headers.get("WWW-Authenticate", ""), await response.read())
        except TimeoutError:  # aiohttp's own timeouts are TimeoutErrors too
            raise Unreachable(f"{url}: no answer within {seconds:g} s") from None
        except aiohttp.ClientError as e:
            raise Unreachable(f"{url}: {e or type(e).__name__}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = ["IDLE_CLOSE", "AioSender", "Answer", "Unreachable"]
