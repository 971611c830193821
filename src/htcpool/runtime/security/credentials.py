"""The pool's keys and tokens on disk, read from the configuration (the gate each daemon builds from
them is ``daemon_gate``'s).

At first start (``ensure_pool_credentials``, called by ``htcpool up`` and by every daemon) the
pool gets a random signing key, ``SEC_TOKEN_POOL_SIGNING_KEY_FILE`` (by default
``SEC_PASSWORD_DIRECTORY/POOL``, that is ``$(LOCAL_DIR)/passwords.d/POOL``), and the daemons'
own token, ``condor@<TRUST_DOMAIN>`` signed with it, in ``LOCAL_DIR/pool.token``; both are
readable by the pool's user only. The daemons present that token to each other. A token that no
longer verifies (another issuer, a replaced key, an old shared secret) is made again.

Tools and the bindings look for a token to present on a TCP port (``client_token``) in
``SEC_TOKEN_DIRECTORY`` (``~/.condor/tokens.d`` by default), then ``SEC_TOKEN_SYSTEM_DIRECTORY``
(``$(LOCAL_DIR)/tokens.d``), then the pool's own ``pool.token``, taking the first issued by the
pool's trust domain (written, public, to ``run/trust_domain`` at start); files they cannot read
are skipped. On the pool's own host they rarely need one: the Unix socket authenticates them.
A daemon that refuses a token names its trust domain (``WWW-Authenticate: Bearer realm=…``);
daemons (``token_chooser``) and tools (``client_chooser``) then present the token that domain
issued, once, and keep that choice for the daemon's address (docs/flocking.md, "Credentials").
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from htcpool.runtime.security.levels import CONFIGURED_LEVELS, Level
from htcpool.runtime.security.tls import TlsFiles, encryption_wanted, ensure_tls
from htcpool.runtime.security.tokens import (
    POOL_KEY,
    KeyRing,
    TokenError,
    TokenVerifier,
    choose_token,
    create_token,
    ensure_key,
    read_key,
    read_tokens,
)

if TYPE_CHECKING:
    from htcpool.config import Config
    from htcpool.runtime.layout import PoolLayout

DAEMON_USER = "condor"


@dataclass(frozen=True)
class SecurityPaths:
    """Where the configuration puts the pool's keys and tokens, and the pool's trust domain."""

    password_dir: Path
    pool_key: Path
    system_tokens: Path
    user_tokens: Path
    trust_domain: str
    uid_domain: str

    @classmethod
    def of(cls, config: Config, layout: PoolLayout) -> SecurityPaths:
        def path(knob: str, default: Path) -> Path:
            value = config.get_str(knob)
            return Path(value) if value else default

        password_dir = path("SEC_PASSWORD_DIRECTORY", layout.root / "passwords.d")
        user_dir = config.get_str("SEC_TOKEN_DIRECTORY") or str(Path("~/.condor/tokens.d").expanduser())
        uid_domain = config.get_str("UID_DOMAIN") or "localhost"
        return cls(password_dir, path("SEC_TOKEN_POOL_SIGNING_KEY_FILE", password_dir / POOL_KEY),
                   path("SEC_TOKEN_SYSTEM_DIRECTORY", layout.root / "tokens.d"), Path(user_dir),
                   config.get_str("TRUST_DOMAIN") or uid_domain, uid_domain)

    def keyring(self) -> KeyRing:
        return KeyRing(self.password_dir, self.pool_key)


def ensure_pool_credentials(layout: PoolLayout, paths: SecurityPaths, now: float | None = None) -> str:
    """The daemons' token, with the signing key it needs made first when missing (module docstring)."""
    ensure_key(paths.pool_key)
    verifier = TokenVerifier(paths.keyring(), paths.trust_domain)
    moment = time.time() if now is None else now
    try:
        token = layout.token_file.read_text().strip()
        if verifier.verify(token, moment).identity == daemon_identity(paths):
            _write_public(layout.run / "trust_domain", paths.trust_domain)
            return token
    except (OSError, TokenError):
        pass
    token = create_token(read_key(paths.pool_key), POOL_KEY, daemon_identity(paths), paths.trust_domain, moment)
    tmp = layout.token_file.with_name(f".pool.token.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.replace(tmp, layout.token_file)
    _write_public(layout.run / "trust_domain", paths.trust_domain)
    return token


def daemon_identity(paths: SecurityPaths) -> str:
    return f"{DAEMON_USER}@{paths.trust_domain}"


def _write_public(path: Path, text: str) -> None:
    try:
        if path.read_text().strip() == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def token_chooser(paths: SecurityPaths, own: str) -> Callable[[str], str | None]:
    """What a daemon presents to a server of trust domain ``realm``: its own token at home, else
    the first token issued by ``realm`` in ``SEC_TOKEN_SYSTEM_DIRECTORY`` or ``SEC_TOKEN_DIRECTORY``
    (read again each time: a token copied in later is found), None when it holds none."""

    def choose(realm: str) -> str | None:
        if realm == paths.trust_domain:
            return own
        return choose_token(read_tokens([paths.system_tokens, paths.user_tokens]), realm)

    return choose


def flock_negotiators(config: Config) -> list[str]:
    """The hosts of ``FLOCK_NEGOTIATOR_HOSTS`` (default ``$(FLOCK_TO)``), ports dropped, with the
    addresses each name resolves to (a peer is known to the gate by its address)."""
    import socket

    out: list[str] = []
    for item in re.split(r"[\s,]+", config.get_str("FLOCK_NEGOTIATOR_HOSTS") or ""):
        if item.startswith("["):
            host = item[1:].partition("]")[0]
        else:
            host = item.partition(":")[0] if item.count(":") == 1 else item
        if not host:
            continue
        out.append(host)
        try:
            out += [str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)]
        except (OSError, UnicodeError):
            pass
    return list(dict.fromkeys(out))


def schedd_negotiator_default(config: Config, paths: SecurityPaths, pool_user: str) -> str | None:
    """HTCondor's ``ALLOW_NEGOTIATOR_SCHEDD = $(ALLOW_NEGOTIATOR), $(FLOCK_NEGOTIATOR_HOSTS)`` in
    htcpool's terms, for a schedd that flocks and whose configuration sets neither knob: the own
    pool's daemons (``condor@<TRUST_DOMAIN>``, and the OS user the daemons run as) from any
    host, and daemons of other pools only from the hosts of ``FLOCK_NEGOTIATOR_HOSTS``. None when
    the schedd does not flock (the ordinary default applies)."""
    if config.get_str("ALLOW_NEGOTIATOR_SCHEDD") is not None or config.get_str("ALLOW_NEGOTIATOR") is not None:
        return None
    hosts = flock_negotiators(config)
    if not hosts:
        return None
    own = [daemon_identity(paths)]
    if pool_user and pool_user != DAEMON_USER:  # as htcpool's default ALLOW_NEGOTIATOR has it
        own.append(f"{pool_user}@*")
    return " ".join(own + [f"{DAEMON_USER}@*/{host}" for host in hosts])


def user_token_directory(layout: PoolLayout) -> Path:
    """``SEC_TOKEN_DIRECTORY`` as the pool's configuration (or the environment) sets it, else
    ``~/.condor/tokens.d``."""
    from htcpool.config import ConfigError, read_config

    named = os.environ.get("_CONDOR_SEC_TOKEN_DIRECTORY")
    if named:
        return Path(named).expanduser()
    if layout.config.exists():
        try:
            env = dict(os.environ, CONDOR_CONFIG=str(layout.config))
            value = read_config(str(layout.config), environ=env, subsystem="TOOL").get_str("SEC_TOKEN_DIRECTORY")
        except (ConfigError, OSError):
            value = None
        if value:
            return Path(value).expanduser()
    return Path("~/.condor/tokens.d").expanduser()


def _client_candidates(layout: PoolLayout, user_tokens: Path | None) -> list[tuple[Path, str]]:
    """The tokens a tool may present, in the order it looks (module docstring)."""
    candidates = read_tokens([user_tokens or user_token_directory(layout), layout.root / "tokens.d"])
    try:
        candidates.append((layout.token_file, layout.token_file.read_text().strip()))
    except OSError:
        pass
    return candidates


def client_token(layout: PoolLayout, user_tokens: Path | None = None) -> str | None:
    """A token for the pool in ``layout`` that this user can read (module docstring); None if none."""
    try:
        issuer: str | None = (layout.run / "trust_domain").read_text().strip() or None
    except OSError:
        issuer = None
    return choose_token(_client_candidates(layout, user_tokens), issuer)


def client_chooser(layout: PoolLayout, user_tokens: Path | None = None) -> Callable[[str], str | None]:
    """What a tool presents to a daemon of trust domain ``realm`` that refused its token (a daemon
    of another pool, reached with ``-pool`` or ``-name``): the first token issued by ``realm``
    where ``client_token`` looks, the files read again on each refusal; None when it has none."""

    def choose(realm: str) -> str | None:
        return choose_token(_client_candidates(layout, user_tokens), realm)

    return choose


def ping_levels(names: tuple[str, ...]) -> tuple[str, ...]:
    """condor_ping's level arguments, ``ALL`` standing for every level."""
    if any(n.upper() == "ALL" for n in names):
        return tuple(str(level) for level in CONFIGURED_LEVELS)
    return tuple(n.upper() for n in names)




def _first_file(value: str | None) -> Path | None:
    for item in re.split(r"[\s,]+", value or ""):
        if item and Path(item).is_file():
            return Path(item)
    return None


def pool_tls(config: Config, layout: PoolLayout, paths: SecurityPaths, bind: str,
             advertised: str | None = None) -> TlsFiles | None:
    """The TLS files of a daemon bound to ``bind`` (known to others as ``advertised``), made when
    missing; None for plain HTTP.

    HTTPS when ``SEC_DEFAULT_ENCRYPTION`` is REQUIRED, or the daemon binds an address other than
    loopback and encryption is not OPTIONAL or NEVER (``tls.encryption_wanted``). The certificate
    is the pool's own (``tls.ensure_tls``) unless ``AUTH_SSL_CLIENT_CAFILE``,
    ``AUTH_SSL_SERVER_CERTFILE`` and ``AUTH_SSL_SERVER_KEYFILE`` all name files: then those, the CA
    published to ``run/ca.pem``."""
    import shutil

    if not encryption_wanted(config.get_str("SEC_DEFAULT_ENCRYPTION") or "", bind):
        return None
    ca = _first_file(config.get_str("AUTH_SSL_CLIENT_CAFILE"))
    cert = _first_file(config.get_str("AUTH_SSL_SERVER_CERTFILE"))
    key = _first_file(config.get_str("AUTH_SSL_SERVER_KEYFILE"))
    if ca is not None and cert is not None and key is not None:
        if not layout.ca_file.exists() or layout.ca_file.read_bytes() != ca.read_bytes():
            shutil.copyfile(ca, layout.ca_file)
            os.chmod(layout.ca_file, 0o644)
        return TlsFiles(layout.ca_file, cert, key)
    names = [n for n in (config.get_str("FULL_HOSTNAME"), config.get_str("HOSTNAME")) if n]
    addresses = [a for a in (bind, advertised, config.get_str("IP_ADDRESS")) if a and a not in ("0.0.0.0", "::")]
    return ensure_tls(paths.password_dir, layout.ca_file, names, addresses)


def missing_shared_credentials(config: Config, paths: SecurityPaths) -> list[Path]:
    """What a host joining a pool on other hosts lacks of the central manager's keys (docs/security.md,
    "A pool across hosts"): the signing key, and the CA's key and certificate unless the AUTH_SSL_ knobs
    name the host's certificate."""
    wanted = [paths.pool_key]
    if not all(_first_file(config.get_str(k)) for k in
               ("AUTH_SSL_CLIENT_CAFILE", "AUTH_SSL_SERVER_CERTFILE", "AUTH_SSL_SERVER_KEYFILE")):
        wanted += [paths.password_dir / "ca.key", paths.password_dir / "ca.pem"]
    return [p for p in wanted if not p.exists()]


__all__ = ["DAEMON_USER", "Level", "SecurityPaths", "client_chooser", "client_token", "daemon_identity",
           "ensure_pool_credentials", "flock_negotiators", "missing_shared_credentials",
           "ping_levels", "pool_tls", "schedd_negotiator_default", "token_chooser", "user_token_directory"]
