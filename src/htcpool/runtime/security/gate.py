"""The daemon's door: who sent a request (authentication) and whether they may (authorization).

Every request reaches a daemon either on its Unix socket or on its TCP port (``runtime/http.py``).

* On the Unix socket the kernel tells the peer's uid (``peercred``); the identity is that
  account's name in ``UID_DOMAIN`` (HTCondor's FS method), and its host is this machine.
* On the TCP port the request carries a token (``Authorization: Bearer <JWT>``); the identity is
  the token's subject (``tokens``). A token that proves nothing (malformed, wrongly signed, of a
  key the pool lacks, of another pool, expired) is refused with 401 naming why, whatever the
  request. A request with no token is ``unauthenticated@unmapped``: refused with 401 unless
  ``SEC_<LEVEL>_AUTHENTICATION`` (or ``SEC_DEFAULT_AUTHENTICATION``) is OPTIONAL or NEVER for the
  level it needs (the default is REQUIRED, as ``use security:strong`` has it), and never allowed
  to manage jobs (WRITE and above), as HTCondor's hard-coded rule says. Tokens are verified
  against this pool's keys and ``TRUST_DOMAIN`` only; a 401 reply names that trust domain
  (``realm``) so that a client of another pool can present the token this pool issued it.

``Gate.authorize`` then checks the level the message needs (``levels.level_of``) against the
policy (``authz.Policy``) and, for a token limited by ``scope``, against its scopes; a refusal is
403 with a sentence naming the level, the identity and the peer's address, and is logged with
them (HTCondor's "PERMISSION DENIED"). Decisions are remembered per (level, identity, address)
until the configuration changes, so the hot paths pay a dictionary look-up.

``Gate.stamp`` puts the authenticated user into the messages that name an owner (``Submit``,
``NewCluster``, ``JobAction``, ``EditJobs``): whatever the client wrote there is replaced, so the
schedd core sees only the identity the request was authenticated as. A queue super user
(``QUEUE_SUPER_USERS``, root and condor by default) and a peer authorized at the DAEMON level act
for the user they name, as HTCondor lets them set a job's Owner to another user.
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from htcpool.protocol import PingReply
from htcpool.runtime.security.authz import PeerHost, Policy
from htcpool.runtime.security.levels import CONFIGURED_LEVELS, IMPLIED, Level, level_of
from htcpool.runtime.security.peercred import FS_CLIENT, user_name
from htcpool.runtime.security.tokens import Credential, TokenError, TokenVerifier

log = logging.getLogger("htcpool.security")

UNAUTHENTICATED = "unauthenticated@unmapped"
#: message type -> the field that names the user the request acts for
OWNER_FIELDS = {"NewCluster": "owner", "Submit": "owner", "SubmitFactory": "owner", "JobAction": "user",
                "EditJobs": "user"}


class Refused(Exception):
    """A request the gate turns away: an HTTP-like status and the sentence saying why."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(slots=True)
class Peer:
    """Who sent a request: identity, how it was proven (FS, TOKEN or NONE) and from where."""

    identity: str
    method: str
    host: PeerHost
    address: str
    scopes: frozenset[Level] | None = None

    @property
    def user(self) -> str:
        return self.identity.partition("@")[0]


class SharedSecret:
    """A verifier for one bearer secret that stands for the daemons (in-process tests)."""

    def __init__(self, secret: str, identity: str = "condor@localhost") -> None:
        self.secret = secret.encode()
        self.identity = identity

    def verify(self, token: str, now: float) -> Credential:
        if not hmac.compare_digest(token.encode(), self.secret):
            raise TokenError("the token is not the pool's")
        return Credential(self.identity, None, None, "secret")


@dataclass
class Settings:
    """What the gate reads from the configuration (``Gate.settings_from``)."""

    policy: Policy
    uid_domain: str = "localhost"
    optional: frozenset[Level] = frozenset()  # levels that do not require authentication
    host_names: frozenset[str] = frozenset({"localhost"})
    super_users: frozenset[str] = frozenset({"root", "condor"})  # QUEUE_SUPER_USERS


class Gate:
    """Authentication and authorization of one daemon's requests (module docstring)."""

    def __init__(self, verifier: TokenVerifier | SharedSecret, settings: Callable[[], Settings],
                 clock: Callable[[], float] = time.time, local_ips: frozenset[str] | None = None) -> None:
        self.verifier = verifier
        self._settings_source = settings
        self._settings: Settings | None = None
        self.clock = clock
        self.local_ips = local_ips if local_ips is not None else local_addresses()
        self._decisions: dict[tuple[Level, str, str], str | None] = {}
        self._hosts: dict[str, PeerHost] = {}
        self._accounts: dict[int, tuple[str | None, float]] = {}

    @property
    def realm(self) -> str | None:
        """The trust domain whose tokens this gate accepts (a 401 reply names it); None when it
        knows one shared secret only."""
        return self.verifier.issuer if isinstance(self.verifier, TokenVerifier) else None

    @property
    def settings(self) -> Settings:
        current = self._settings_source()
        if current is not self._settings:
            self._settings = current
            self._decisions.clear()
            for problem in current.policy.problems:
                log.warning("security configuration: %s", problem)
        return current

    # ------------------------------------------------------------------ authentication
    def identify(self, authorization: str, client: Any) -> Peer:
        """The peer of a request: ``authorization`` is its Authorization header, ``client`` the
        ASGI scope's client tuple. Refused (401) for a token that proves nothing."""
        settings = self.settings
        if client is not None and client[0] == FS_CLIENT:
            uid = int(client[1])
            name = self._account(uid)
            where = f"the local socket (uid {uid})"
            if name is None:
                raise self._refuse(401, f"uid {uid} has no account name on this host", where)
            return Peer(f"{name}@{settings.uid_domain}", "FS", self._host("127.0.0.1", settings), where)
        ip = plain_address(str(client[0])) if client else "?"
        where = f"{ip}:{client[1]}" if client else "an unknown address"
        host = self._host(ip, settings)
        scheme, _, token = authorization.partition(" ")
        if not token or scheme.lower() != "bearer":
            return Peer(UNAUTHENTICATED, "NONE", host, where)
        try:
            credential = self.verifier.verify(token.strip(), self.clock())
        except TokenError as e:
            raise self._refuse(401, f"authentication failed: {e}", where) from None
        return Peer(credential.identity, "TOKEN", host, where, credential.scopes)

    def _account(self, uid: int) -> str | None:
        """The account name of ``uid``, looked up at most once a minute (a look-up reads the
        password database: tens of microseconds)."""
        now = time.monotonic()
        known = self._accounts.get(uid)
        if known is None or now - known[1] > 60.0:
            if len(self._accounts) > 4096:
                self._accounts.clear()
            known = self._accounts[uid] = (user_name(uid), now)
        return known[0]

    def _host(self, ip: str, settings: Settings) -> PeerHost:
        """What the policy knows of address ``ip`` (remembered: a client sends many requests)."""
        host = self._hosts.get(ip)
        if host is None or (host.local and host.names is not settings.host_names):
            if len(self._hosts) > 4096:
                self._hosts.clear()
            local = ip in self.local_ips
            host = self._hosts[ip] = PeerHost(ip, settings.host_names if local else frozenset(), local)
        return host

    # ------------------------------------------------------------------ authorization
    def check(self, peer: Peer, level: Level) -> str | None:
        """None when ``peer`` may act at ``level``, else the reason it may not."""
        settings = self.settings  # first: a new configuration forgets the decisions
        key = (level, peer.identity, peer.host.ip)
        if peer.scopes is None and key in self._decisions:
            return self._decisions[key]
        reason: str | None
        if peer.method == "NONE" and level is not Level.ALLOW and level not in settings.optional:
            reason = "the request is not authenticated (it carries no token; SEC_DEFAULT_AUTHENTICATION is REQUIRED)"
        elif peer.method == "NONE" and level in IMPLIED_ABOVE_READ:
            reason = "unauthenticated requests may not manage jobs or daemons"
        elif peer.scopes is not None and level is not Level.ALLOW and \
                not any(level in IMPLIED[scope] for scope in peer.scopes):
            allowed = " ".join(sorted(peer.scopes)) or "nothing"
            reason = f"the token is limited to {allowed}"
        else:
            reason = settings.policy.check(level, peer.identity, peer.host)
        if peer.scopes is None:
            self._decisions[key] = reason
        return reason

    def authorize(self, peer: Peer, message: object, daemon: str = "daemon") -> None:
        """Refused (403, or 401 when authentication was needed) unless ``peer`` may send ``message``."""
        level = level_of(message)
        reason = self.check(peer, level)
        if reason is not None:
            status = 401 if peer.method == "NONE" else 403
            raise self._refuse(status, f"PERMISSION DENIED to {peer.identity} from {peer.address} "
                                       f"for {type(message).__name__} at the {daemon}: access level "
                                       f"{level} is needed and {reason}", peer.address, logged=True)

    def stamp(self, message: Any, peer: Peer) -> Any:
        """``message`` with its owner field set to the authenticated user (module docstring)."""
        name = OWNER_FIELDS.get(type(message).__name__)
        if name is None or getattr(message, name) == peer.user:
            return message
        if peer.method != "NONE" and (peer.user in self.settings.super_users
                                      or self.check(peer, Level.DAEMON) is None):
            return message  # a queue super user or a daemon acts for the user it names
        return dataclasses.replace(message, **{name: peer.user})

    def ping(self, peer: Peer, asked: tuple[str, ...], encryption: str = "none") -> PingReply:
        """condor_ping's answer: which of the ``asked`` levels (all when empty) ``peer`` holds."""
        levels = [Level(a.upper()) for a in asked if a.upper() in Level.__members__] if asked \
            else list(CONFIGURED_LEVELS)
        unknown = [a for a in asked if a.upper() not in Level.__members__]
        authorized, denied, reasons = [], [], []
        for level in levels:
            reason = self.check(peer, level)
            if reason is None:
                authorized.append(str(level))
            else:
                denied.append(str(level))
                reasons.append(reason)
        for name in unknown:
            denied.append(name)
            reasons.append(f"{name} is not an authorization level")
        return PingReply(peer.identity, peer.method, peer.address, tuple(authorized), tuple(denied),
                         tuple(reasons), encryption)

    def _refuse(self, status: int, detail: str, where: str, logged: bool = False) -> Refused:
        if logged:
            log.warning("%s", detail)
        else:
            log.warning("refused a request from %s: %s", where, detail)
        return Refused(status, detail)


IMPLIED_ABOVE_READ = frozenset(level for level in Level if Level.WRITE in IMPLIED[level])


def plain_address(ip: str) -> str:
    """``ip``, an IPv4 peer of a socket that takes both families (``::ffff:192.0.2.7``) written as
    IPv4, so that ALLOW/DENY entries naming IPv4 addresses match it."""
    if ip.startswith("::ffff:") and "." in ip:
        return ip.removeprefix("::ffff:")
    return ip


def local_addresses() -> frozenset[str]:
    """This machine's addresses (loopback included)."""
    out = {"127.0.0.1", "::1"}
    try:
        import psutil

        for addresses in psutil.net_if_addrs().values():
            out.update(a.address.split("%")[0] for a in addresses
                       if a.family in (socket.AF_INET, socket.AF_INET6))
    except Exception:  # a sandbox without /proc/net: loopback is still local
        pass
    return frozenset(out)


__all__ = ["OWNER_FIELDS", "UNAUTHENTICATED", "Gate", "Peer", "Refused", "Settings", "SharedSecret",
           "local_addresses", "plain_address"]
