"""Pools with their own trust domains: a daemon presents to each server the token that server's
pool issued (learnt from the realm a 401 reply names), and a flocking schedd takes negotiation
only from its own pool's daemons and the hosts of FLOCK_NEGOTIATOR_HOSTS (docs/flocking.md)."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from htcpool.config import Config
from htcpool.protocol import AdList, QueryAds, encode
from htcpool.runtime.http import PATH, DaemonClient, RequestRefused, make_app
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.security.authz import PeerHost, Policy
from htcpool.runtime.security.credentials import (
    SecurityPaths,
    client_chooser,
    token_chooser,
)
from htcpool.runtime.security.daemon_gate import gate_settings
from htcpool.runtime.security.gate import Gate, Settings
from htcpool.runtime.security.levels import Level
from htcpool.runtime.security.tokens import (
    KeyRing,
    TokenError,
    TokenVerifier,
    create_token,
    ensure_key,
)

NOW = 1_700_000_000.0


def _ring(root: Path) -> KeyRing:
    ring = KeyRing(root / "passwords.d", root / "passwords.d" / "POOL")
    ensure_key(ring.pool_key)
    return ring


def _token(ring: KeyRing, identity: str, issuer: str) -> str:
    return create_token(ring.key("POOL"), "POOL", identity, issuer, NOW)


def _gate(ring: KeyRing, issuer: str) -> Gate:
    settings = Settings(Policy.from_lookup(lambda knob: None, "COLLECTOR", "condor"))
    return Gate(TokenVerifier(ring, issuer), lambda: settings, lambda: NOW, local_ips=frozenset())


async def _ads(message: Any) -> Any:
    return AdList(())


def test_a_token_of_another_trust_domain_is_refused_naming_its_issuer_and_the_realm(tmp_path: Path) -> None:
    home, other = _ring(tmp_path / "a"), _ring(tmp_path / "b")
    app = make_app(_ads, _gate(home, "a.test"), "collector")
    foreign = _token(other, "condor@b.test", "b.test")
    with TestClient(app) as client:
        r = client.post(PATH, json=encode(QueryAds("Machine")), headers={"Authorization": f"Bearer {foreign}"})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer realm="a.test"'
    assert "issued by 'b.test', not by this pool (TRUST_DOMAIN a.test)" in r.json()["detail"]
    with pytest.raises(TokenError, match="issued by 'b.test'"):  # named before the unknown key
        TokenVerifier(home, "a.test").verify(foreign, NOW)


class _Pools:
    """Two daemons' applications, of pools a.test and b.test, behind one in-process transport that
    routes by host and counts the requests each receives."""

    def __init__(self, root: Path) -> None:
        self.rings = {"a.test": _ring(root / "a"), "b.test": _ring(root / "b")}
        self.apps = {name: make_app(_ads, _gate(ring, name), name) for name, ring in self.rings.items()}
        self.requests: Counter[str] = Counter()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        host = scope["server"][0]
        self.requests[host] += 1
        await self.apps[host](scope, receive, send)

    def client(self, own: str, chooser: Callable[[str], str | None]) -> DaemonClient:
        return DaemonClient(own, transport=httpx.ASGITransport(app=self), chooser=chooser)


def test_a_daemon_presents_each_server_the_token_its_trust_domain_issued(tmp_path: Path) -> None:
    pools = _Pools(tmp_path)
    own = _token(pools.rings["a.test"], "condor@a.test", "a.test")
    from_b = _token(pools.rings["b.test"], "condor@a.test", "b.test")
    asked: list[str] = []

    def chooser(realm: str) -> str | None:
        asked.append(realm)
        return {"a.test": own, "b.test": from_b}.get(realm)

    async def run() -> None:
        client = pools.client(own, chooser)
        try:
            for _ in range(3):
                assert isinstance(await client.send("http://b.test:9618", QueryAds("Machine")), AdList)
                assert isinstance(await client.send("http://a.test:9618", QueryAds("Machine")), AdList)
        finally:
            await client.close()

    asyncio.run(run())
    assert asked == ["b.test"]  # learnt once, from B's first 401
    assert pools.requests == Counter({"b.test": 4, "a.test": 3})  # one refused request, then its token


def test_without_a_token_of_the_servers_trust_domain_the_refusal_names_the_issuer(tmp_path: Path) -> None:
    pools = _Pools(tmp_path)
    own = _token(pools.rings["a.test"], "condor@a.test", "a.test")

    async def run() -> None:
        client = pools.client(own, lambda realm: own if realm == "a.test" else None)
        try:
            with pytest.raises(RequestRefused, match="issued by 'a.test', not by this pool .TRUST_DOMAIN b.test"):
                await client.send("http://b.test:9618", QueryAds("Machine"))
        finally:
            await client.close()

    asyncio.run(run())
    assert pools.requests["b.test"] == 1


def test_the_token_chooser_reads_the_token_directories_for_other_trust_domains(tmp_path: Path) -> None:
    paths = SecurityPaths(tmp_path / "passwords.d", tmp_path / "passwords.d" / "POOL", tmp_path / "tokens.d",
                          tmp_path / "user-tokens.d", "a.test", "a.test")
    choose = token_chooser(paths, "OWN")
    assert choose("a.test") == "OWN"
    assert choose("b.test") is None
    other = _token(_ring(tmp_path / "b"), "condor@a.test", "b.test")
    paths.system_tokens.mkdir()
    fd = os.open(paths.system_tokens / "b-flock.token", os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(_token(_ring(tmp_path / "c"), "condor@a.test", "c.test") + "\n" + other + "\n")
    assert choose("b.test") == other  # copied in after the daemon started: found


def test_the_tools_choose_a_token_by_trust_domain_in_their_own_directory_first(tmp_path: Path) -> None:
    """A user holding tokens of two pools: a tool presents to each pool's daemons the token that
    pool issued, looking in SEC_TOKEN_DIRECTORY before the pool's tokens.d."""
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    mine = tmp_path / "user-tokens.d"
    choose = client_chooser(layout, mine)
    assert choose("b.test") is None
    from_b = _token(_ring(tmp_path / "b"), "alice@b.test", "b.test")
    system_b = _token(_ring(tmp_path / "b2"), "condor@a.test", "b.test")
    for directory, token in ((mine, from_b), (layout.root / "tokens.d", system_b)):
        directory.mkdir(exist_ok=True)
        fd = os.open(directory / "b.token", os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
    assert choose("b.test") == from_b  # found on the next refusal, the user's own first
    assert choose("c.test") is None


def _schedd_policy(tmp_path: Path, text: str) -> Policy:
    config = Config.from_text("TRUST_DOMAIN = a.test\n" + text, subsystem="SCHEDD", environ={})
    paths = SecurityPaths.of(config, PoolLayout(tmp_path))
    return gate_settings(config, paths, "SCHEDD", "condor").policy


def test_a_flocking_schedd_takes_negotiation_only_from_its_pool_and_flock_negotiator_hosts(tmp_path: Path) -> None:
    policy = _schedd_policy(tmp_path, "FLOCK_TO = 192.0.2.1:9618, [2001:db8::5]\n")
    listed, ipv6, elsewhere = PeerHost("192.0.2.1"), PeerHost("2001:db8::5"), PeerHost("198.51.100.7")
    assert policy.check(Level.NEGOTIATOR, "condor@b.test", listed) is None
    assert policy.check(Level.NEGOTIATOR, "condor@b.test", ipv6) is None
    assert policy.check(Level.NEGOTIATOR, "condor@a.test", elsewhere) is None  # its own pool's
    refused = policy.check(Level.NEGOTIATOR, "condor@c.test", elsewhere)
    assert refused == "no entry of ALLOW_NEGOTIATOR_SCHEDD matches it"
    assert policy.check(Level.DAEMON, "condor@c.test", elsewhere) is None  # only negotiation narrowed

    named = _schedd_policy(tmp_path, "FLOCK_TO = 192.0.2.1\nFLOCK_NEGOTIATOR_HOSTS = 192.0.2.9\n")
    assert named.check(Level.NEGOTIATOR, "condor@b.test", PeerHost("192.0.2.9")) is None
    assert named.check(Level.NEGOTIATOR, "condor@b.test", listed) is not None


def test_without_flocking_or_with_the_knob_set_the_schedd_keeps_its_negotiator_list(tmp_path: Path) -> None:
    anywhere = PeerHost("198.51.100.7")
    assert _schedd_policy(tmp_path, "").check(Level.NEGOTIATOR, "condor@c.test", anywhere) is None
    set_by_admin = _schedd_policy(tmp_path, "FLOCK_TO = 192.0.2.1\nALLOW_NEGOTIATOR_SCHEDD = condor@*\n")
    assert set_by_admin.check(Level.NEGOTIATOR, "condor@c.test", anywhere) is None
