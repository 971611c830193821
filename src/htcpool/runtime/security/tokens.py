"""Identity tokens as HTCondor's IDTOKENS: JSON Web Tokens signed with a key of the pool.

A token (HTCondor's manual, "Token Authentication") is a JWT signed with HMAC-SHA256 (``HS256``).
Its header names the signing key (``kid``, ``POOL`` by default); its claims are the identity
(``sub``, ``user@domain``), the issuer (``iss``, the pool's ``TRUST_DOMAIN``), when it was made
(``iat``), optionally when it stops being valid (``exp``) and optionally the authorization levels
it is limited to (``scope``, ``condor:/READ condor:/WRITE`` …). Keys are random bytes in files
readable by their owner only: ``POOL`` is ``SEC_TOKEN_POOL_SIGNING_KEY_FILE``, any other name a
file of ``SEC_PASSWORD_DIRECTORY``; deleting a key invalidates every token it signed.

``TokenVerifier.verify(token, now)`` gives the ``Credential`` a token proves, or raises
``TokenError`` with a sentence naming why not: malformed, an algorithm other than HS256, a key
this pool does not have, a signature that does not match, another issuer, expired. A verified
token is remembered for ``RECHECK`` seconds (expiry is still checked on every use), so a client
that sends the same token with every request costs one dictionary look-up; after that the token
is checked again in full, which notices a deleted key.

Clients find tokens in files, one or more per file (one a line), in ``SEC_TOKEN_DIRECTORY``
(``~/.condor/tokens.d``) and the pool's own directories; ``choose_token`` takes the first whose
issuer is the one wanted: the pool's for the tools, the server's trust domain for a daemon talking
to another pool (docs/flocking.md, "Credentials").
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from htcpool.runtime.security.levels import Level

POOL_KEY = "POOL"
KEY_BYTES = 32
RECHECK = 10.0
_CACHE_LIMIT = 4096


class TokenError(Exception):
    """A token that proves nothing; the message says why."""


@dataclass(frozen=True)
class Credential:
    """What a verified token proves: who, limited to which levels (None: not limited), until when."""

    identity: str
    scopes: frozenset[Level] | None
    expires: float | None
    key: str


def ensure_key(path: Path) -> bool:
    """Create a signing key at ``path`` (owner-only, in an owner-only directory) when there is none;
    True when one was made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(KEY_BYTES))
    return True


def read_key(path: Path) -> bytes:
    """The key in ``path``; TokenError when it is missing, empty or readable by others."""
    try:
        if path.stat().st_mode & 0o077:
            raise TokenError(f"the signing key {path} is readable by others (it must be mode 0600)")
        data = path.read_bytes()
    except FileNotFoundError:
        raise TokenError(f"there is no signing key {path}") from None
    except OSError as e:
        raise TokenError(f"cannot read the signing key {path}: {e.strerror or e}") from None
    if not data:
        raise TokenError(f"the signing key {path} is empty")
    return data


class KeyRing:
    """The pool's signing keys by name: ``POOL`` is ``pool_key``, others live in ``directory``."""

    def __init__(self, directory: Path, pool_key: Path) -> None:
        self.directory = directory
        self.pool_key = pool_key

    def path(self, name: str) -> Path:
        if name == POOL_KEY:
            return self.pool_key
        if not name or "/" in name or name.startswith("."):
            raise TokenError(f"{name!r} is not a key name")
        return self.directory / name

    def key(self, name: str) -> bytes:
        try:
            return read_key(self.path(name))
        except TokenError as e:
            raise TokenError(f"the signing key {name!r} cannot be used: {e}") from None


def create_token(key: bytes, key_name: str, identity: str, issuer: str, now: float,
                 lifetime: float | None = None, authz: Iterable[Level] = ()) -> str:
    """A signed token (see the module docstring); TokenError for an identity without a domain."""
    if "@" not in identity or identity.startswith("@") or any(c.isspace() for c in identity):
        raise TokenError(f"the identity {identity!r} must be user@domain")
    claims: dict[str, Any] = {"sub": identity, "iss": issuer, "iat": int(now),
                              "jti": secrets.token_hex(16)}
    if lifetime is not None:
        claims["exp"] = int(now + lifetime)
    scopes = [f"condor:/{level}" for level in dict.fromkeys(authz)]
    if scopes:
        claims["scope"] = " ".join(scopes)
    return jwt.encode(claims, key, algorithm="HS256", headers={"kid": key_name})


def parse_scopes(text: object) -> frozenset[Level] | None:
    """The levels a ``scope`` claim allows; None when there is none (no limit)."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TokenError("the token's scope claim is not a string")
    out = set()
    for word in text.split():
        name = word.removeprefix("condor:/")
        if name != word and name in Level.__members__:
            out.add(Level(name))
    return frozenset(out)


def describe(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of ``token`` without checking its signature (condor_token_list)."""
    try:
        return jwt.get_unverified_header(token), jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as e:
        raise TokenError(f"the token is malformed: {e}") from None


class TokenVerifier:
    """Verifies tokens against the pool's keys and issuer, remembering recent answers."""

    def __init__(self, keys: KeyRing, issuer: str) -> None:
        self.keys = keys
        self.issuer = issuer
        self._seen: dict[str, tuple[Credential, float]] = {}

    def verify(self, token: str, now: float) -> Credential:
        seen = self._seen.get(token)
        if seen is not None and 0 <= now - seen[1] < RECHECK:
            credential = seen[0]
        else:
            credential = self._check(token)
            if len(self._seen) >= _CACHE_LIMIT:
                self._seen.clear()
            self._seen[token] = (credential, now)
        if credential.expires is not None and now >= credential.expires:
            raise TokenError(f"the token of {credential.identity} expired at "
                             f"{_when(credential.expires)}")
        return credential

    def _check(self, token: str) -> Credential:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as e:
            raise TokenError(f"the token is malformed: {e}") from None
        if header.get("alg") != "HS256":
            raise TokenError(f"the token is signed with {header.get('alg')!r}; only HS256 is accepted")
        issuer = token_issuer(token)
        if issuer is not None and issuer != self.issuer:  # another pool's: its key says nothing here
            raise TokenError(f"the token was issued by {issuer!r}, not by this pool (TRUST_DOMAIN {self.issuer})")
        kid = header.get("kid", POOL_KEY)
        if not isinstance(kid, str):
            raise TokenError("the token's key name (kid) is not a string")
        key = self.keys.key(kid)
        try:
            claims = jwt.decode(token, key, algorithms=["HS256"], issuer=self.issuer,
                                options={"verify_exp": False, "require": ["sub", "iss", "iat"]})
        except jwt.InvalidSignatureError:
            raise TokenError(f"the token's signature does not match the key {kid!r}") from None
        except jwt.InvalidIssuerError:
            raise TokenError(f"the token was issued by {_issuer(token)!r}, not by this pool "
                             f"(TRUST_DOMAIN {self.issuer})") from None
        except jwt.PyJWTError as e:
            raise TokenError(f"the token is malformed: {e}") from None
        identity = claims["sub"]
        if not isinstance(identity, str) or "@" not in identity:
            raise TokenError(f"the token's identity {identity!r} is not user@domain")
        expires = claims.get("exp")
        if expires is not None and not isinstance(expires, int | float):
            raise TokenError("the token's expiry (exp) is not a number")
        return Credential(identity, parse_scopes(claims.get("scope")), expires, kid)


def _issuer(token: str) -> str:
    return token_issuer(token) or "?"


def token_issuer(token: str) -> str | None:
    """The issuer (``iss``) ``token`` names, unverified; None when it is malformed or names none."""
    try:
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
    except jwt.PyJWTError:
        return None
    return issuer if isinstance(issuer, str) else None


def _when(epoch: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def read_tokens(directories: Iterable[Path]) -> list[tuple[Path, str]]:
    """Every token in the files of ``directories`` (sorted by name; unreadable ones skipped)."""
    out: list[tuple[Path, str]] = []
    for directory in directories:
        try:
            files = sorted(p for p in directory.iterdir() if p.is_file())
        except OSError:
            continue
        for path in files:
            try:
                lines = path.read_text().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            out.extend((path, line.strip()) for line in lines if line.strip() and not line.startswith("#"))
    return out


def choose_token(candidates: Iterable[tuple[Path, str]], issuer: str | None) -> str | None:
    """The first token issued by ``issuer`` (any issuer when None)."""
    for _path, token in candidates:
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            continue
        if issuer is None or claims.get("iss") == issuer:
            return token
    return None


__all__ = ["POOL_KEY", "Credential", "KeyRing", "TokenError", "TokenVerifier", "choose_token",
           "create_token", "describe", "ensure_key", "parse_scopes", "read_key", "read_tokens", "token_issuer"]
