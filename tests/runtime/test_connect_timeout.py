"""A collector host that drops packets (down, or behind a firewall) costs a client the connect
limit (runtime/timeouts.py), not the request's whole timeout, before the next collector of
COLLECTOR_HOST is asked: the tools' queries (``PoolClient``, ``cli/wire.ask_collectors``, used
by ``submit -name``), the bindings, and the daemons' ``SyncClient``/``DaemonClient``."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from htcpool import protocol
from htcpool.classad import ClassAd
from htcpool.cli.wire import Unreachable, WireClient, ask_collectors
from htcpool.protocol import AdList, QueryAds
from htcpool.runtime import timeouts
from htcpool.runtime.http_client import SyncClient
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PoolClient

LIMIT = 1.0  # the connect limit the tests set, against a request timeout of 30 s


@pytest.fixture(autouse=True)
def short_connect_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeouts, "CONNECT_TIMEOUT", LIMIT)


@pytest.fixture
def silent() -> Iterator[str]:
    """A loopback port whose accept queue is full: the kernel drops new SYNs, as a host that is
    down or firewalled drops them, so a connect neither succeeds nor is refused."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held: list[socket.socket] = []
    for _ in range(16):  # fill the queue until a connect hangs
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.settimeout(0.3)
        try:
            probe.connect(("127.0.0.1", port))
        except TimeoutError:
            probe.close()
            break
        held.append(probe)
    else:
        pytest.fail("the listener's accept queue never filled")
    yield f"http://127.0.0.1:{port}"
    for sock in held:
        sock.close()
    listener.close()


@pytest.fixture
def answering() -> Iterator[str]:
    """A stand-in collector on loopback answering every message with one ad naming it."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps(protocol.encode(AdList((ClassAd({"Answered": "second"}),)))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _within(seconds: float, started: float) -> None:
    took = time.monotonic() - started
    assert took < seconds, f"took {took:.1f} s, more than {seconds} s"


def test_a_silent_host_fails_at_the_connect_limit_not_the_request_timeout(silent: str) -> None:
    started = time.monotonic()
    with pytest.raises(httpx.ConnectTimeout):
        SyncClient("token", timeout=30.0).send(silent, QueryAds("Machine"))
    _within(LIMIT + 3, started)
    started = time.monotonic()
    with pytest.raises(Unreachable, match="no answer from"):
        WireClient(silent, None, timeout=30.0).send(QueryAds("Machine"))
    _within(LIMIT + 3, started)


def _layout(tmp_path: Path, first: str, second: str) -> PoolLayout:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.ensure_token()
    layout.write_address("collector", first)
    layout.write_collectors([first, second])
    return layout


def test_the_tools_ask_the_next_collector_after_a_silent_one(tmp_path: Path, silent: str, answering: str) -> None:
    layout = _layout(tmp_path, silent, answering)
    started = time.monotonic()
    reply = ask_collectors(layout, QueryAds("Scheduler"))  # submit -name's lookup
    assert [ad["Answered"] for ad in reply.ads] == ["second"]
    _within(LIMIT + 5, started)
    started = time.monotonic()
    assert [ad["Answered"] for ad in PoolClient(layout).query("Machine")] == ["second"]
    _within(LIMIT + 5, started)


def test_the_bindings_ask_the_next_collector_after_a_silent_one(tmp_path: Path, silent: str, answering: str) -> None:
    from htcpool.htcondor2._pool import Connection

    layout = _layout(tmp_path, silent, answering)
    connection = Connection(layout.root, timeout=30.0)
    started = time.monotonic()
    reply = connection.send("collector", QueryAds("Machine"))
    assert [ad["Answered"] for ad in reply.ads] == ["second"]
    _within(LIMIT + 5, started)
    connection.close()


def test_without_another_collector_a_silent_one_is_a_clear_error(tmp_path: Path, silent: str) -> None:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.ensure_token()
    layout.write_address("collector", silent)
    with pytest.raises(Unreachable, match=f"no answer from {silent}"):
        ask_collectors(layout, QueryAds("Scheduler"))
