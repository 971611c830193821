"""The submit tools' HTTP/1.1 client, against a socket server that answers with set bytes."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.cli.wire import WireClient, WireError
from htcpool.protocol import Ok, Ping, encode

OK_BODY = json.dumps(encode(Ok("fine"))).encode()


def _read_request(conn: socket.socket) -> bytes:
    """One request: headers, then Content-Length bytes of body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


class Server:
    """Answers each request with the next of ``answers``; records requests and connections."""

    def __init__(self, path: Path | None, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        if path is None:  # TCP on loopback
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", 0))
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(str(path))
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                while self.answers:
                    request = _read_request(conn)
                    if not request:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    conn.sendall(answer)
                    if b"Connection: close" in answer:
                        break

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=10)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[Path, list[Server]]]:
    path = tmp_path / "d.sock"
    servers: list[Server] = []
    yield path, servers
    for server in servers:
        server.close()


def _answer(body: bytes, *headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_answers_by_length_in_chunks_after_close_and_after_an_interim_answer_are_read(serve: tuple[Path, list[Server]]) -> None:
    path, servers = serve
    chunked = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n"
                       for part in (OK_BODY[:5], OK_BODY[5:])) + b"0\r\n\r\n"
    servers.append(Server(path, [
        _answer(OK_BODY, f"Content-Length: {len(OK_BODY)}"),
        _answer(chunked, "Transfer-Encoding: chunked"),
        _answer(OK_BODY, f"Content-Length: {len(OK_BODY)}", "Connection: close"),
        b"HTTP/1.1 100 Continue\r\n\r\n" + _answer(OK_BODY, f"Content-Length: {len(OK_BODY)}"),
    ]))
    client = WireClient(f"unix:{path}", timeout=10)
    try:
        assert [client.send(Ping(("x",))) for _ in range(4)] == [Ok("fine")] * 4
    finally:
        client.close()
    assert servers[0].connections == 2  # kept alive, and opened again after "Connection: close"
    first = servers[0].requests[0]
    assert first.startswith(b"POST /v1/message HTTP/1.1\r\n")
    assert json.loads(first.partition(b"\r\n\r\n")[2]) == encode(Ping(("x",)))


@pytest.mark.parametrize(("answer", "says"), [
    (b"SPDY/3 200 OK\r\n\r\n", "HTTP/1.1 status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{}", "bytes before the answer's end"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "has no colon"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
])
def test_a_malformed_answer_is_a_wire_error(serve: tuple[Path, list[Server]], answer: bytes, says: str) -> None:
    path, servers = serve
    servers.append(Server(path, [answer]))
    client = WireClient(f"unix:{path}", timeout=10)
    with pytest.raises(WireError, match=says):
        client.send(Ping(("x",)))
    client.close()


def test_plain_http_on_loopback_carries_the_token(serve: tuple[Path, list[Server]]) -> None:
    _, servers = serve
    server = Server(None, [_answer(OK_BODY, f"Content-Length: {len(OK_BODY)}")])
    servers.append(server)
    port = server.sock.getsockname()[1]
    client = WireClient(f"http://127.0.0.1:{port}", token="secret-token", timeout=10)
    try:
        assert client.send(Ping(("x",))) == Ok("fine")
    finally:
        client.close()
    head = server.requests[0].partition(b"\r\n\r\n")[0].split(b"\r\n")
    assert f"Host: 127.0.0.1:{port}".encode() in head
    assert b"Authorization: Bearer secret-token" in head


def test_a_refused_token_is_replaced_once_by_the_one_the_named_trust_domain_issued(
        serve: tuple[Path, list[Server]]) -> None:
    """A daemon of another pool answers 401 naming its trust domain: the request goes again with
    the token issued there, which is kept for that daemon; a second refusal is final."""
    _, servers = serve
    from htcpool.protocol import Failure

    refusal = json.dumps(encode(Failure(401, "not ours"))).encode()
    refused = ("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"b.test\"\r\n"
               f"Content-Length: {len(refusal)}\r\n\r\n").encode() + refusal
    ok = _answer(OK_BODY, f"Content-Length: {len(OK_BODY)}")
    server = Server(None, [refused, ok, ok, refused])
    servers.append(server)
    asked: list[str] = []
    held = {"b.test": "token-of-b"}

    def chooser(realm: str) -> str | None:
        asked.append(realm)
        return held.get(realm)
    client = WireClient(f"http://127.0.0.1:{server.sock.getsockname()[1]}", token="token-of-a",
                        timeout=10, chooser=chooser)
    try:
        assert client.send(Ping(("x",))) == Ok("fine")
        assert client.send(Ping(("x",))) == Ok("fine")
        with pytest.raises(WireError, match="not ours"):
            client.send(Ping(("x",)))  # token-of-b refused in turn: no loop
    finally:
        client.close()
    sent = [next(line for line in r.split(b"\r\n") if line.startswith(b"Authorization"))
            for r in server.requests]
    assert sent == [b"Authorization: Bearer token-of-a"] + [b"Authorization: Bearer token-of-b"] * 3
    assert asked == ["b.test", "b.test"]


def test_no_daemon_is_a_wire_error(tmp_path: Path) -> None:
    client = WireClient(f"unix:{tmp_path / 'none.sock'}", timeout=5)
    with pytest.raises(WireError, match="no answer from unix:"):
        client.send(Ping(("x",)))
