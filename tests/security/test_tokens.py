"""Identity tokens: made, read, and every way a token can fail to prove anything."""

from __future__ import annotations

import os
from pathlib import Path

import jwt
import pytest

from htcpool.runtime.security.levels import Level
from htcpool.runtime.security.tokens import (
    RECHECK,
    KeyRing,
    TokenError,
    TokenVerifier,
    choose_token,
    create_token,
    describe,
    ensure_key,
    read_tokens,
)

NOW = 1_700_000_000.0


@pytest.fixture
def ring(tmp_path: Path) -> KeyRing:
    ring = KeyRing(tmp_path / "passwords.d", tmp_path / "passwords.d" / "POOL")
    ensure_key(ring.pool_key)
    return ring


def _token(ring: KeyRing, identity: str = "alice@pool", key: str = "POOL", **kw: object) -> str:
    return create_token(ring.key(key), key, identity, "pool.example", NOW, **kw)  # type: ignore[arg-type]


def test_a_token_proves_its_identity_and_scopes(ring: KeyRing) -> None:
    token = _token(ring, authz=[Level.READ, Level.WRITE], lifetime=60)
    header, claims = describe(token)
    assert header["kid"] == "POOL" and header["alg"] == "HS256"
    assert claims["sub"] == "alice@pool" and claims["iss"] == "pool.example" and claims["exp"] == NOW + 60
    assert claims["scope"] == "condor:/READ condor:/WRITE"
    credential = TokenVerifier(ring, "pool.example").verify(token, NOW + 1)
    assert credential.identity == "alice@pool" and credential.scopes == {Level.READ, Level.WRITE}
    assert TokenVerifier(ring, "pool.example").verify(_token(ring), NOW).scopes is None


def test_keys_are_owner_only(ring: KeyRing, tmp_path: Path) -> None:
    assert os.stat(ring.pool_key).st_mode & 0o777 == 0o600
    assert os.stat(ring.directory).st_mode & 0o777 == 0o700
    assert not ensure_key(ring.pool_key)  # an existing key is kept
    os.chmod(ring.pool_key, 0o644)
    with pytest.raises(TokenError, match="readable by others"):
        ring.key("POOL")


@pytest.mark.parametrize("make, reason", [
    (lambda ring: _token(ring, lifetime=10), "expired at"),
    (lambda ring: "not.a.token", "malformed"),
    (lambda ring: "garbage", "malformed"),
    (lambda ring: create_token(b"another key entirely, 32 bytes!!", "POOL", "alice@pool", "pool.example", NOW),
     "signature does not match the key 'POOL'"),
    (lambda ring: create_token(b"k" * 32, "missing", "alice@pool", "pool.example", NOW),
     "there is no signing key"),
    (lambda ring: create_token(ring.key("POOL"), "POOL", "alice@pool", "other.example", NOW),
     "issued by 'other.example', not by this pool"),
    (lambda ring: jwt.encode({"sub": "alice@pool", "iss": "pool.example", "iat": 1}, None, algorithm="none"),
     "only HS256"),
    (lambda ring: create_token(ring.key("POOL"), "../POOL", "alice@pool", "pool.example", NOW),
     "not a key name"),
    (lambda ring: jwt.encode({"sub": "alice@pool", "iss": "pool.example"}, ring.key("POOL"), algorithm="HS256",
                             headers={"kid": "POOL"}), "malformed.*iat"),
])
def test_tokens_that_prove_nothing_are_refused_naming_why(ring: KeyRing, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TokenError, match=reason):
        TokenVerifier(ring, "pool.example").verify(make(ring), NOW + 60)


def test_an_identity_must_have_a_domain(ring: KeyRing) -> None:
    with pytest.raises(TokenError, match="user@domain"):
        _token(ring, identity="alice")


def test_a_deleted_key_invalidates_its_tokens_once_the_cache_is_stale(ring: KeyRing) -> None:
    ensure_key(ring.directory / "extra")
    token = _token(ring, key="extra")
    verifier = TokenVerifier(ring, "pool.example")
    assert verifier.verify(token, NOW).identity == "alice@pool"
    (ring.directory / "extra").unlink()
    assert verifier.verify(token, NOW + 1).identity == "alice@pool"  # remembered for RECHECK s
    with pytest.raises(TokenError, match="no signing key"):
        verifier.verify(token, NOW + RECHECK + 1)


def test_clients_pick_the_first_token_of_the_pool(tmp_path: Path, ring: KeyRing) -> None:
    d = tmp_path / "tokens.d"
    d.mkdir()
    other = create_token(b"x" * 32, "POOL", "alice@other", "other.example", NOW)
    mine = _token(ring)
    (d / "a").write_text(f"# a comment\n{other}\n")
    (d / "b").write_text(mine + "\n")
    found = read_tokens([d, tmp_path / "missing"])
    assert [t for _, t in found] == [other, mine]
    assert choose_token(found, "pool.example") == mine
    assert choose_token(found, None) == other
    assert choose_token(found, "nobody.example") is None
