"""The local socket's authentication: the kernel's SO_PEERCRED, through real Unix sockets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from htcpool.cli.wire import WireClient, WireError
from htcpool.protocol import Ok, Ping, PingReply, QueryAds
from htcpool.runtime.http import make_app
from htcpool.runtime.security.authz import Policy
from htcpool.runtime.security.gate import Gate, Settings, SharedSecret
from htcpool.runtime.security.peercred import bind_unix, peer_uid, user_name, with_peer_credentials

ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody").pw_uid if ROOT else os.geteuid()


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every user may reach (pytest's own are its user's only)."""
    path = Path(tempfile.mkdtemp(prefix="htcsec-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _in_child_as(uid: int, work: Any) -> bytes:
    """Run ``work()`` (returning bytes) in a forked child that became ``uid``; its result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            if os.geteuid() != uid:
                os.setgid(pwd.getpwuid(uid).pw_gid)
                os.setuid(uid)
            os.write(write, work())
        except BaseException as e:  # reported to the parent as text
            os.write(write, f"child failed: {e!r}".encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks)


def test_the_peer_uid_is_the_connecting_processs(open_dir: Path) -> None:
    path = str(open_dir / "s.sock")
    server = bind_unix(path)
    assert server is not None and os.stat(path).st_mode & 0o777 == 0o666
    server.listen(1)
    server.settimeout(10)

    def connect() -> bytes:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        c.recv(1)
        return b"done"

    done: list[bytes] = []
    child = threading.Thread(target=lambda: done.append(_in_child_as(NOBODY, connect)))
    child.start()
    conn, _ = server.accept()
    try:
        assert peer_uid(conn) == NOBODY
        if ROOT:
            assert peer_uid(conn) != os.geteuid()  # another user, and the kernel says so
    finally:
        conn.send(b"x")
        conn.close()
        child.join(10)
        server.close()
    assert done == [b"done"]


def test_a_path_too_long_for_a_unix_socket_gives_none(tmp_path: Path) -> None:
    assert bind_unix(str(tmp_path / ("x" * 120))) is None
    assert user_name(os.geteuid()) == pwd.getpwuid(os.geteuid()).pw_name
    assert user_name(2_000_000_000) is None


@contextlib.contextmanager
def _daemon_on(path: str) -> Iterator[None]:
    """A daemon endpoint behind a gate on the Unix socket ``path``, served from a thread."""
    async def handler(message: Any) -> Any:
        return Ok(type(message).__name__)

    settings = Settings(Policy.from_lookup(lambda knob: None, "", "root"), uid_domain="host.test")
    app = make_app(handler, Gate(SharedSecret("s3cret"), lambda: settings), "schedd")
    sock = bind_unix(path)
    assert sock is not None
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", proxy_headers=False,
                                           http=with_peer_credentials(AutoHTTPProtocol)))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(sockets=[sock])))
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.01)
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        loop.close()


def test_the_gate_knows_a_local_user_by_uid_and_no_token_is_needed(open_dir: Path) -> None:
    path = str(open_dir / "schedd.sock")
    name = pwd.getpwuid(NOBODY).pw_name

    def ask() -> bytes:
        client = WireClient(f"unix:{path}", "a token the socket ignores", timeout=10)
        reply = client.send(Ping(("READ", "WRITE", "DAEMON")))
        assert isinstance(reply, PingReply)
        try:
            client.send(QueryAds("Machine", private=True))
            refused = "not refused"
        except WireError as e:
            refused = str(e)
        return f"{reply.identity}|{reply.method}|{','.join(reply.authorized)}|{refused}".encode()

    with _daemon_on(path):
        answer = _in_child_as(NOBODY, ask).decode()
    identity, method, authorized, refused = answer.split("|")
    assert (identity, method, authorized) == (f"{name}@host.test", "FS", "READ,WRITE"), answer
    assert refused.startswith(f"PERMISSION DENIED to {name}@host.test from the local socket (uid {NOBODY})")
    assert "access level NEGOTIATOR" in refused


@pytest.mark.skipif(not ROOT, reason="needs root to connect as another user")
def test_two_users_are_two_identities(open_dir: Path) -> None:
    path = str(open_dir / "schedd.sock")
    with _daemon_on(path):
        mine = WireClient(f"unix:{path}").send(Ping(("READ",)))
        theirs = _in_child_as(NOBODY, lambda: WireClient(f"unix:{path}").send(Ping(("READ",))).identity.encode())
    assert mine.identity == "root@host.test" and theirs.decode() == "nobody@host.test"
