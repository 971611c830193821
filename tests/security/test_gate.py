"""The gate of a daemon: authentication, authorization, ownership stamps and ping, in process."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from htcpool.protocol import (
    JobAction,
    JobActionKind,
    Ok,
    Ping,
    PingReply,
    QueryAds,
    Submit,
    decode,
    encode,
)
from htcpool.protocol.schedd import EditJobs, NewCluster
from htcpool.runtime.http import PATH, make_app
from htcpool.runtime.security.authz import Policy
from htcpool.runtime.security.gate import Gate, Peer, Refused, Settings
from htcpool.runtime.security.levels import Level
from htcpool.runtime.security.peercred import FS_CLIENT
from htcpool.runtime.security.tokens import KeyRing, TokenVerifier, create_token, ensure_key

NOW = 1_700_000_000.0
ISSUER = "pool.test"


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ring(tmp_path: Path) -> KeyRing:
    ring = KeyRing(tmp_path / "passwords.d", tmp_path / "passwords.d" / "POOL")
    ensure_key(ring.pool_key)
    return ring


def _gate(ring: KeyRing, knobs: dict[str, str] | None = None, clock: Clock | None = None) -> Gate:
    values = knobs or {}
    settings = Settings(Policy.from_lookup(values.get, "SCHEDD", "root"), uid_domain="host.test")
    return Gate(TokenVerifier(ring, ISSUER), lambda: settings, clock or Clock(), local_ips=frozenset({"127.0.0.1"}))


def _token(ring: KeyRing, identity: str, **kw: Any) -> str:
    return create_token(ring.key("POOL"), "POOL", identity, ISSUER, NOW, **kw)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


seen: list[Any] = []


async def _handler(message: Any) -> Any:
    seen.append(message)
    return Ok(type(message).__name__)


def test_requests_without_credentials_or_with_bad_ones_are_refused_naming_why(ring: KeyRing) -> None:
    clock = Clock()
    c = TestClient(make_app(_handler, _gate(ring, clock=clock), "schedd"))
    r = c.post(PATH, json=encode(QueryAds("Machine")))
    assert r.status_code == 401 and "not authenticated" in r.json()["detail"]
    assert "PERMISSION DENIED to unauthenticated@unmapped" in r.json()["detail"]
    r = c.post(PATH, json=encode(QueryAds("Machine")), headers=_auth("junk"))
    assert r.status_code == 401 and "malformed" in r.json()["detail"]
    expiring = _token(ring, "alice@pool", lifetime=30)
    assert c.post(PATH, json=encode(QueryAds("Machine")), headers=_auth(expiring)).status_code == 200
    clock.now += 31
    r = c.post(PATH, json=encode(QueryAds("Machine")), headers=_auth(expiring))
    assert r.status_code == 401 and "expired at" in r.json()["detail"]


def test_a_refusal_names_level_identity_and_peer_and_is_logged(ring: KeyRing, caplog: pytest.LogCaptureFixture) -> None:
    c = TestClient(make_app(_handler, _gate(ring), "schedd"))
    caplog.set_level(logging.WARNING, "htcpool.security")
    r = c.post(PATH, json=encode(QueryAds("Machine", private=True)), headers=_auth(_token(ring, "alice@pool")))
    detail = r.json()["detail"]
    assert r.status_code == 403
    assert detail.startswith("PERMISSION DENIED to alice@pool from testclient:")
    assert "for QueryAds at the schedd: access level NEGOTIATOR is needed" in detail
    assert detail in caplog.text


def test_a_scoped_token_is_limited_to_its_scopes(ring: KeyRing) -> None:
    c = TestClient(make_app(_handler, _gate(ring), "schedd"))
    reader = _auth(_token(ring, "alice@pool", authz=[Level.READ]))
    assert c.post(PATH, json=encode(QueryAds("Machine")), headers=reader).status_code == 200
    r = c.post(PATH, json=encode(Submit("alice", ())), headers=reader)
    assert r.status_code == 403 and "the token is limited to READ" in r.json()["detail"]


def test_the_owner_of_a_request_is_the_authenticated_user(ring: KeyRing) -> None:
    c = TestClient(make_app(_handler, _gate(ring), "schedd"))
    alice = _auth(_token(ring, "alice@pool"))
    seen.clear()
    for message in (Submit("mallory", ()), NewCluster("mallory"), JobAction(JobActionKind.REMOVE, "root", ("1",)),
                    EditJobs("root", ("A",), ("1",), ("1",))):
        assert c.post(PATH, json=encode(message), headers=alice).status_code == 200
    assert [getattr(m, "owner", getattr(m, "user", None)) for m in seen] == ["alice"] * 4
    seen.clear()  # a queue super user and the daemons act for the user they name
    for who in ("root@pool", "condor@pool"):
        c.post(PATH, json=encode(Submit("mallory", ())), headers=_auth(_token(ring, who)))
    assert [m.owner for m in seen] == ["mallory", "mallory"]


def test_ping_answers_identity_method_and_levels(ring: KeyRing) -> None:
    c = TestClient(make_app(_handler, _gate(ring), "schedd"))
    r = c.post(PATH, json=encode(Ping(("READ", "WRITE", "DAEMON", "BOGUS"))), headers=_auth(_token(ring, "alice@pool")))
    reply = decode(r.json())
    assert isinstance(reply, PingReply)
    assert (reply.identity, reply.method, reply.authorized) == ("alice@pool", "TOKEN", ("READ", "WRITE"))
    assert reply.denied == ("DAEMON", "BOGUS") and "BOGUS is not an authorization level" in reply.reasons[1]
    r = c.post(PATH, json=encode(Ping(("READ",))))
    assert decode(r.json()).identity == "unauthenticated@unmapped" and decode(r.json()).denied == ("READ",)


def test_optional_authentication_lets_anonymous_clients_read_but_never_manage(ring: KeyRing) -> None:
    settings = Settings(Policy.from_lookup(lambda k: None, "SCHEDD", "root"), optional=frozenset({Level.READ, Level.WRITE}))
    gate = Gate(TokenVerifier(ring, ISSUER), lambda: settings, Clock())
    peer = gate.identify("", ("192.0.2.9", 4000))
    assert gate.check(peer, Level.READ) is None
    assert gate.check(peer, Level.WRITE) == "unauthenticated requests may not manage jobs or daemons"


def test_local_socket_peers_are_their_os_user(ring: KeyRing) -> None:
    gate = _gate(ring)
    peer = gate.identify("Bearer ignored", (FS_CLIENT, 0))
    assert peer == Peer("root@host.test", "FS", peer.host, "the local socket (uid 0)")
    assert peer.host.local and gate.check(peer, Level.ADMINISTRATOR) is None
    with pytest.raises(Refused, match="uid 2000000000 has no account name"):
        gate.identify("", (FS_CLIENT, 2_000_000_000))


def test_decisions_follow_a_new_configuration(ring: KeyRing) -> None:
    current = {"settings": Settings(Policy.from_lookup({}.get, "SCHEDD", "root"))}
    gate = Gate(TokenVerifier(ring, ISSUER), lambda: current["settings"], Clock())
    peer = gate.identify(f"Bearer {_token(ring, 'alice@pool')}", ("192.0.2.9", 4000))
    assert gate.check(peer, Level.WRITE) is None
    current["settings"] = Settings(Policy.from_lookup({"DENY_WRITE": "alice@pool"}.get, "SCHEDD", "root"))
    assert gate.check(peer, Level.WRITE) == "DENY_WRITE matches it"
