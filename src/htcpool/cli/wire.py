"""A light client for the tools that must start fast, on the standard library's HTTP.

``htcpool submit`` sends two messages to the schedd (``NewCluster``, then
``Submit``) and should return in a small fraction of a second; importing httpx
(and, through ``htcpool.runtime.http``, Starlette) costs more than the whole
exchange. ``WireClient`` therefore uses ``http.client`` (about 25 ms to import
on a quiet machine, against httpx's 150 ms) for just what the daemons' endpoint
needs (``docs/pool.md``, "Protocol and transport"): ``POST /v1/message`` with
the pool token as a bearer token and one encoded protocol message as the JSON
body, on one kept-alive connection. A ``Failure`` answer, a refused connection
or a malformed answer raise ``WireError`` with a sentence that says which.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

from htcpool.protocol import Failure, ProtocolError, decode, encode

PATH = "/v1/message"


class WireError(Exception):
    """The message could not be delivered, or the daemon refused it (the text says which)."""


class WireClient:
    """Messages to one daemon at ``url`` (``http://host:port``), over one connection."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        rest = url.split("://", 1)[-1].rstrip("/")
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit():
            raise WireError(f"the daemon's address {url!r} is not http://host:port")
        self.url = url
        self.token = token
        self._connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout)

    def send(self, message: object) -> Any:
        """Send ``message`` and return the decoded answer."""
        body = json.dumps(encode(message), separators=(",", ":")).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        try:
            self._connection.request("POST", PATH, body=body, headers=headers)
            response = self._connection.getresponse()
            status, payload = response.status, response.read()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            reason = getattr(e, "strerror", None) or e
            raise WireError(f"no answer from {self.url}: {reason}") from None
        try:
            reply = decode(json.loads(payload))
        except (ValueError, ProtocolError) as e:
            raise WireError(f"unreadable answer from {self.url} (HTTP {status}): {e}") from None
        if isinstance(reply, Failure):
            raise WireError(reply.detail)
        return reply

    def close(self) -> None:
        self._connection.close()
