"""TLS between hosts: the pool's CA and host certificate, HTTPS verified, tokens never in clear."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from htcpool.cli.wire import WireClient, WireError
from htcpool.protocol import Ok, Ping, PingReply
from htcpool.runtime.http import make_app
from htcpool.runtime.security.authz import Policy
from htcpool.runtime.security.gate import Gate, Settings, SharedSecret
from htcpool.runtime.security.tls import TlsFiles, ensure_tls, token_may_travel


@pytest.mark.parametrize("url, may", [
    ("https://192.0.2.1:9618", True), ("http://127.0.0.1:9618", True), ("http://localhost:1", True),
    ("http://[::1]:9618", True), ("unix:/run/x.sock", True), ("http://192.0.2.1:9618", False),
    ("http://cm.example.org:9618", False),
])
def test_a_token_travels_only_where_nobody_else_reads_it(url: str, may: bool) -> None:
    assert token_may_travel(url) is may


def test_the_ca_and_host_certificate_are_made_once_and_kept_private(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path / "passwords.d", tmp_path / "run" / "ca.pem", ["cm.example.org"], ["192.0.2.5"])
    assert os.stat(tmp_path / "passwords.d" / "ca.key").st_mode & 0o777 == 0o600
    assert os.stat(files.key).st_mode & 0o777 == 0o600 and os.stat(files.ca_cert).st_mode & 0o777 == 0o644
    stamp = files.cert.stat().st_mtime_ns
    again = ensure_tls(tmp_path / "passwords.d", tmp_path / "run" / "ca.pem", ["cm.example.org"], ["192.0.2.5"])
    assert again == files and files.cert.stat().st_mtime_ns == stamp  # same names: kept
    ensure_tls(tmp_path / "passwords.d", tmp_path / "run" / "ca.pem", ["other.example.org"], [])
    assert files.cert.stat().st_mtime_ns != stamp  # other names: a new certificate, same CA


@contextlib.contextmanager
def _https_daemon(files: TlsFiles) -> Iterator[str]:
    async def handler(message: Any) -> Any:
        return Ok()

    settings = Settings(Policy.from_lookup(lambda knob: None, "", "root"))
    app = make_app(handler, Gate(SharedSecret("s3cret", "condor@pool"), lambda: settings), "collector")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", proxy_headers=False,
                                           ssl_certfile=str(files.cert), ssl_keyfile=str(files.key)))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(sockets=[sock])))
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.01)
        yield f"https://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        loop.close()


def test_https_is_verified_against_the_pools_ca(tmp_path: Path) -> None:
    files = ensure_tls(tmp_path / "passwords.d", tmp_path / "run" / "ca.pem", ["cm.example.org"], [])
    stranger = ensure_tls(tmp_path / "other.d", tmp_path / "other.pem", ["cm.example.org"], [])
    with _https_daemon(files) as url:
        reply = WireClient(url, "s3cret", ca_file=files.ca_cert).send(Ping(("DAEMON",)))
        assert isinstance(reply, PingReply)
        assert (reply.identity, reply.encryption, reply.authorized) == ("condor@pool", "TLS", ("DAEMON",))
        with pytest.raises(WireError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            WireClient(url, "s3cret", ca_file=stranger.ca_cert).send(Ping())
    assert isinstance(ssl.create_default_context(cafile=str(files.ca_cert)), ssl.SSLContext)


def test_a_client_keeps_its_token_from_plain_http_off_the_host() -> None:
    assert WireClient("http://192.0.2.1:9618", "s3cret").token is None
    assert WireClient("http://127.0.0.1:9618", "s3cret").token == "s3cret"
