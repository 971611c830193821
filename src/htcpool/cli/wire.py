"""A light client for the tools that must start fast, on plain sockets.

``htcpool submit`` sends two messages to the schedd (``NewCluster``, then
``Submit``) and should return in a small fraction of a second; importing httpx
(and, through ``htcpool.runtime.http``, Starlette) costs more than the whole
exchange, and even the standard library's ``http.client`` (with ``email`` and
``ssl``) costs about 10 ms. ``WireClient`` therefore speaks just what the
daemons' endpoint needs (``docs/pool.md``, "Protocol and transport"):
``POST /v1/message`` with one encoded protocol message as the JSON body, on one
kept-alive HTTP/1.1 connection: to the daemon's Unix socket (``unix:<path>``),
where the kernel tells the daemon who the user is, or to its TCP address with a
token as a bearer token (docs/security.md): HTTPS verified against the pool's
certificate authority (through ``http.client`` and ``ssl``, imported only then),
or plain HTTP on loopback; a token is never sent in clear text across the
network. ``daemon_client`` picks the socket when the pool has one. A ``Failure``
answer, a refused connection or a malformed answer raise ``WireError`` with a
sentence that says which.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from htcpool.protocol import Failure, ProtocolError, decode, encode
from htcpool.runtime.timeouts import connect_timeout

if TYPE_CHECKING:
    from htcpool.runtime.layout import PoolLayout

PATH = "/v1/message"
_REALM = re.compile(r'realm="([^"]*)"')  # the trust domain a 401 answer names
_MAX_LINE = 65536  # the longest status or header line taken from a daemon
_MAX_HEADERS = 100


class WireError(Exception):
    """The message could not be delivered, or the daemon refused it (the text says which)."""


class Unreachable(WireError):
    """No connection could be made to the daemon, or it went away before answering."""


class _BadAnswer(Exception):
    """The daemon's answer is not the HTTP/1.1 this client reads (the text says how)."""


class _Plain:
    """One kept-alive HTTP/1.1 connection on a plain socket (a Unix socket, or TCP to loopback),
    written here rather than taken from ``http.client``, whose import (with ``email`` and
    ``ssl``) costs more than a one-job submit's exchange. It reads what the daemons' server
    sends: a status line, headers, and a body of ``Content-Length`` bytes, in chunks, or up
    to the end of the connection."""

    def __init__(self, connect: Callable[[], socket.socket], host: str) -> None:
        self._connect = connect
        self._host = host
        self._sock: socket.socket | None = None
        self._reader: Any = None

    def exchange(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self._sock is None:
            self._sock = self._connect()
            self._reader = self._sock.makefile("rb")
        lines = [f"POST {PATH} HTTP/1.1", f"Host: {self._host}", f"Content-Length: {len(body)}",
                 *(f"{name}: {value}" for name, value in headers.items())]
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        status, fields = self._head()
        while status < 200:  # an interim answer (100 Continue): the real one follows
            status, fields = self._head()
        payload = b"" if status in (204, 304) else self._body(fields)  # these have no body
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status, fields, payload

    def _line(self) -> bytes:
        line = self._reader.readline(_MAX_LINE + 1)
        if not line:
            raise _BadAnswer("the connection closed before the answer")
        if len(line) > _MAX_LINE:
            raise _BadAnswer("a line of the answer is too long")
        return bytes(line)

    def _head(self) -> tuple[int, dict[str, str]]:
        parts = self._line().split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise _BadAnswer("the answer does not start with an HTTP/1.1 status line")
        fields: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            line = self._line()
            if line in (b"\r\n", b"\n"):
                return int(parts[1]), fields
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon:
                raise _BadAnswer(f"a header line of the answer has no colon: {line[:40]!r}")
            fields[name.strip().lower()] = value.strip()
        raise _BadAnswer(f"the answer has more than {_MAX_HEADERS} header lines")

    def _exactly(self, size: int) -> bytes:
        data = self._reader.read(size)
        if len(data) != size:
            raise _BadAnswer(f"the connection closed {size - len(data)} bytes before the answer's end")
        return bytes(data)

    def _body(self, fields: dict[str, str]) -> bytes:
        if "chunked" in fields.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size_text = self._line().split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise _BadAnswer(f"a chunk size of the answer is not hexadecimal: {size_text[:20]!r}") from None
                if size == 0:
                    while self._line() not in (b"\r\n", b"\n"):  # trailer fields, if any
                        pass
                    return b"".join(chunks)
                chunks.append(self._exactly(size))
                self._line()  # the chunk's CRLF
        length = fields.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise _BadAnswer(f"the answer's Content-Length is {length!r}")
            return self._exactly(int(length))
        data = bytes(self._reader.read())  # neither: the body runs to the connection's end
        self.close()
        return data

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None


class _Tls:
    """HTTPS through ``http.client`` (imported only here: a pool across the network)."""

    def __init__(self, host: str, port: int, timeout: float, ca_file: Path | None) -> None:
        import http.client
        import ssl

        context = ssl.create_default_context(cafile=str(ca_file) if ca_file and ca_file.exists() else None)
        self._connection = http.client.HTTPSConnection(host, port, timeout=connect_timeout(timeout), context=context)
        self._timeout = timeout
        self._errors: tuple[type[Exception], ...] = (http.client.HTTPException,)

    def exchange(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        try:
            if self._connection.sock is None:
                self._connect()
            self._connection.request("POST", PATH, body=body, headers=headers)
            response = self._connection.getresponse()
            fields = {name.lower(): value for name, value in response.getheaders()}
            return response.status, fields, response.read()
        except self._errors as e:
            raise _BadAnswer(str(e) or type(e).__name__) from None

    def _connect(self) -> None:
        """Connect within the connect limit, then allow the request's whole limit for the answer."""
        self._connection.connect()
        connected = self._connection.sock
        if connected is not None:
            connected.settimeout(self._timeout)

    def close(self) -> None:
        self._connection.close()


def _unix_socket(path: str, timeout: float) -> Callable[[], socket.socket]:
    def connect() -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        return sock
    return connect


def _tcp_socket(host: str, port: int, timeout: float) -> Callable[[], socket.socket]:
    def connect() -> socket.socket:
        sock = socket.create_connection((host, port), connect_timeout(timeout))  # a host not there: runtime/timeouts.py
        sock.settimeout(timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    return connect


class WireClient:
    """Messages to one daemon at ``url`` (``http://host:port`` or ``unix:<path>``), over one
    connection; ``token`` (TCP only) is sent as a bearer token when there is one. A daemon that
    refuses it (401) names its trust domain (``WWW-Authenticate: Bearer realm="…"``): the request
    is sent once more with the token ``chooser`` gives for that domain, which is then kept for
    this daemon (docs/flocking.md, "Credentials")."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0,
                 ca_file: Path | None = None, chooser: Callable[[str], str | None] | None = None) -> None:
        self.url = url
        self.chooser = chooser
        self._connection: _Plain | _Tls
        if url.startswith("unix:"):  # the kernel names the user here: no token goes
            self.token = token or None
            self._connection = _Plain(_unix_socket(url.removeprefix("unix:"), timeout), "localhost")
            return
        from htcpool.runtime.security.tls import token_may_travel

        self.token = token if token and token_may_travel(url) else None  # never in clear off the host
        scheme, _, rest = url.rstrip("/").rpartition("://")
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit() or scheme not in ("http", "https"):
            raise WireError(f"the daemon's address {url!r} is not http://host:port or https://host:port")
        if scheme == "https":
            self._connection = _Tls(host.strip("[]"), int(port), timeout, ca_file)
        else:
            self._connection = _Plain(_tcp_socket(host.strip("[]"), int(port), timeout), f"{host}:{port}")

    def send(self, message: object) -> Any:
        """Send ``message`` and return the decoded answer."""
        body = json.dumps(encode(message), separators=(",", ":")).encode()
        status, fields, payload = self._exchange(body)
        other = self._other_token(status, fields)
        if other is not None:
            self.token = other
            status, fields, payload = self._exchange(body)
        try:
            reply = decode(json.loads(payload))
        except (ValueError, ProtocolError) as e:
            raise WireError(f"unreadable answer from {self.url} (HTTP {status}): {e}") from None
        if isinstance(reply, Failure):
            raise WireError(reply.detail)
        return reply

    def _exchange(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        headers = {"Content-Type": "application/json"}
        if self.token and not self.url.startswith("unix:"):
            headers["Authorization"] = f"Bearer {self.token}"  # only where it may travel (__init__)
        try:
            return self._connection.exchange(body, headers)
        except (OSError, _BadAnswer) as e:
            self.close()
            reason = getattr(e, "strerror", None) or e
            raise Unreachable(f"no answer from {self.url}: {reason}") from None

    def _other_token(self, status: int, fields: dict[str, str]) -> str | None:
        """After a 401 naming a trust domain, the token ``chooser`` holds from it when that is
        another one than the token just refused (and it may travel to this daemon); else None."""
        if status != 401 or self.chooser is None or self.url.startswith("unix:"):
            return None
        match = _REALM.search(fields.get("www-authenticate", ""))
        if match is None:
            return None
        from htcpool.runtime.security.tls import token_may_travel

        other = self.chooser(match.group(1))
        return other if other and other != self.token and token_may_travel(self.url) else None

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
    from htcpool.runtime.security.credentials import client_chooser, client_token

    return WireClient(url, client_token(layout), timeout, layout.ca_file, client_chooser(layout))


def ask_collectors(layout: PoolLayout, message: object, timeout: float = 30.0) -> Any:
    """``message``'s answer from the pool's collector, or, when it cannot be reached and
    COLLECTOR_HOST lists several (``run/collectors``), from the next of them that answers, in
    order, as every query of the pool does (``PoolClient.send``, ``Daemon.ask_collector``)."""
    tried: list[str] = []
    try:
        first = daemon_client(layout, "collector", timeout)
    except WireError:
        if not layout.read_collectors():
            raise
    else:
        try:
            return first.send(message)
        except Unreachable:
            if not layout.read_collectors():
                raise
            tried.append(first.url)
        finally:
            first.close()
    from htcpool.runtime.security.credentials import client_chooser, client_token

    primary = layout.read_address("collector")
    for url in layout.read_collectors():
        if url in tried or url == primary:
            continue
        client = WireClient(url, client_token(layout), timeout, layout.ca_file, client_chooser(layout))
        try:
            return client.send(message)
        except Unreachable:
            tried.append(url)
        finally:
            client.close()
    raise Unreachable(f"no collector answers (tried {', '.join(tried)})")
