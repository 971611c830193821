"""A light client for the tools that must start fast, on the standard library's HTTP.

``htcpool submit`` sends two messages to the schedd (``NewCluster``, then
``Submit``) and should return in a small fraction of a second; importing httpx
(and, through ``htcpool.runtime.http``, Starlette) costs more than the whole
exchange. ``WireClient`` therefore uses ``http.client`` (about 25 ms to import
on a quiet machine, against httpx's 150 ms) for just what the daemons' endpoint
needs (``docs/pool.md``, "Protocol and transport"): ``POST /v1/message`` with
one encoded protocol message as the JSON body, on one kept-alive connection:
to the daemon's Unix socket (``unix:<path>``), where the kernel tells the
daemon who the user is, or to its TCP address with a token as a bearer token
(docs/security.md): HTTPS verified against the pool's certificate authority, or
plain HTTP on loopback; a token is never sent in clear text across the network. ``daemon_client`` picks the socket when the pool has one.
A ``Failure`` answer, a refused connection or a malformed answer raise
``WireError`` with a sentence that says which.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from htcpool.protocol import Failure, ProtocolError, decode, encode

if TYPE_CHECKING:
    from htcpool.runtime.layout import PoolLayout

PATH = "/v1/message"


class WireError(Exception):
    """The message could not be delivered, or the daemon refused it (the text says which)."""


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix domain socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class WireClient:
    """Messages to one daemon at ``url`` (``http://host:port`` or ``unix:<path>``), over one
    connection; ``token`` (TCP only) is sent as a bearer token when there is one."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0,
                 ca_file: Path | None = None) -> None:
        from htcpool.runtime.security.tls import token_may_travel

        self.url = url
        self.token = token if token and token_may_travel(url) else None  # never in clear off the host
        self._connection: http.client.HTTPConnection
        if url.startswith("unix:"):
            self._connection = _UnixConnection(url.removeprefix("unix:"), timeout)
            return
        scheme, _, rest = url.rstrip("/").rpartition("://")
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit() or scheme not in ("http", "https"):
            raise WireError(f"the daemon's address {url!r} is not http://host:port or https://host:port")
        if scheme == "https":
            import ssl

            context = ssl.create_default_context(cafile=str(ca_file) if ca_file and ca_file.exists() else None)
            self._connection = http.client.HTTPSConnection(host.strip("[]"), int(port), timeout=timeout,
                                                           context=context)
        else:
            self._connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout)

    def send(self, message: object) -> Any:
        """Send ``message`` and return the decoded answer."""
        body = json.dumps(encode(message), separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"}
        if self.token and not self.url.startswith("unix:"):
            headers["Authorization"] = f"Bearer {self.token}"  # only where it may travel (__init__)
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


def daemon_client(layout: PoolLayout, daemon: str, timeout: float = 30.0) -> WireClient:
    """A connection to the pool's ``daemon``: its Unix socket when there is one, else its TCP
    address with the user's token for the pool; WireError when the pool or daemon is missing."""
    if not layout.token_file.exists():
        raise WireError(f"no pool in {layout.root} (run `htcpool up`)")
    sock = layout.socket_file(daemon)
    if sock.exists():
        return WireClient(f"unix:{sock}", None, timeout)
    url = layout.read_address(daemon)
    if url is None:
        raise WireError(f"the {daemon} of the pool in {layout.root} is not running (run `htcpool up`)")
    from htcpool.runtime.security.credentials import client_token

    return WireClient(url, client_token(layout), timeout, layout.ca_file)
