"""ALLOW_/DENY_ lists: HTCondor's syntax, its precedence rules and htcpool's defaults.

Each ``ALLOW_<LEVEL>`` / ``DENY_<LEVEL>`` knob (HTCondor's manual, "Authorization") is a list of
entries separated by commas or blanks. An entry is ``user@domain/host``, ``user@domain`` (any
host), ``host`` (any user, as in host-based security; a bare word is a host name) or ``*``; an
address followed by ``/`` and a net mask is a host. On the user side one ``*`` may stand for any run of
characters (``*@cs.wisc.edu``, ``condor@*``); a user without ``@domain`` means that user in any
domain. On the host side: ``*``; an address (``192.0.2.7``), an address with a trailing ``*``
(``192.0.2.*``), a network (``192.0.2.0/24`` or ``192.0.2.0/255.255.255.0``); a host name
(``submit.example.org``), one with a leading ``*`` (``*.example.org``); or ``{:local_ips:}``,
every address of this machine. ``$(CONDOR_HOST)`` and other macros are expanded by the
configuration before this module sees the text. Netgroups (``+name``) are not supported: such an
entry, like any malformed one, matches nobody and is reported in ``Policy.problems`` with the
knob's name.

A request at level L is allowed when no ``DENY_L`` entry matches it and the ``ALLOW`` list of L,
or of a level that implies L (``levels.IMPLIED_BY``), matches it without that level's own DENY
list matching. A knob that is not set falls back as the manual says (``ALLOW_ADVERTISE_*`` to
``ALLOW_DAEMON``), then to htcpool's defaults, which are those of ``use security:recommended``:
anyone authenticated may READ and WRITE; ``condor@*`` (the daemons' identity) and ``root@*`` may
administer; ``condor@*`` and the OS user the daemons run as (who can read the pool's keys, so
could act as the daemons anyway) are DAEMON and NEGOTIATOR. A pool whose daemons do not run as
root is a personal pool (``use security:user_based``): its user also administers, and only that
user and the daemons may WRITE. ``ALLOW_CONFIG`` is empty unless set.
The subsystem's own knob (``ALLOW_READ_SCHEDD``) is preferred to the general one.

Everything here is pure: the caller gives the knob lookup and the peer's host names.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.runtime.security.levels import CONFIGURED_LEVELS, IMPLIED_BY, Level

Lookup = Callable[[str], "str | None"]
_SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class PeerHost:
    """Where a request came from: its address, the names that address has, and whether it is one
    of this machine's addresses (requests on the local socket are)."""

    ip: str
    names: frozenset[str] = frozenset()
    local: bool = False


@dataclass(frozen=True)
class Entry:
    """One parsed ALLOW/DENY entry."""

    text: str
    user: re.Pattern[str]
    host: Callable[[PeerHost], bool]

    def matches(self, identity: str, peer: PeerHost) -> bool:
        return self.user.fullmatch(identity) is not None and self.host(peer)


class PolicyError(ValueError):
    """An entry that cannot be understood (the message names it)."""


def _user_pattern(text: str) -> re.Pattern[str]:
    if "@" not in text and text != "*":
        text += "@*"
    if text.count("*") > 2:
        raise PolicyError(f"{text!r} has more than two wildcards on the user side")
    return re.compile(".*".join(re.escape(part) for part in text.split("*")), re.IGNORECASE)


def _host_matcher(text: str) -> Callable[[PeerHost], bool]:
    if text == "*":
        return lambda peer: True
    if text == "{:local_ips:}":
        return lambda peer: peer.local
    if text.startswith("+"):
        raise PolicyError(f"{text!r}: netgroups are not supported")
    if "/" in text:
        try:
            network = ipaddress.ip_network(text, strict=False)
        except ValueError as e:
            raise PolicyError(f"{text!r} is not a network: {e}") from None
        return lambda peer: _in_network(peer.ip, network)
    if text.endswith("*"):
        prefix = text[:-1]
        if "*" in prefix or not re.fullmatch(r"[0-9a-fA-F.:]*", prefix):
            raise PolicyError(f"{text!r}: a wildcard in an address must come at its end")
        return lambda peer: peer.ip.startswith(prefix)
    if text.startswith("*"):
        suffix = text[1:].lower()
        if "*" in suffix:
            raise PolicyError(f"{text!r}: a host name may have one wildcard, at its beginning")
        return lambda peer: any(name.lower().endswith(suffix) for name in peer.names)
    if "*" in text:
        raise PolicyError(f"{text!r}: a wildcard must begin a host name or end an address")
    try:
        address = str(ipaddress.ip_address(text))
    except ValueError:
        name = text.lower()
        return lambda peer: any(n.lower() == name for n in peer.names)
    return lambda peer: peer.ip == address


def _in_network(ip: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    try:
        return ipaddress.ip_address(ip) in network
    except ValueError:
        return False


def _is_network(head: str, tail: str) -> bool:
    """Whether ``head/tail`` is an address and a net mask (``192.0.2.0/24``), not user/host."""
    try:
        ipaddress.ip_address(head)
    except ValueError:
        return False
    return tail.isdigit() or "." in tail or ":" in tail


def parse_entry(text: str) -> Entry:
    """One entry (see the module docstring); PolicyError when it cannot be understood."""
    user, host = "*", text
    head, slash, tail = text.partition("/")
    if slash and not _is_network(head, tail):
        user, host = head, tail
    elif "@" in text:
        user, host = text, "*"
    elif text == "*":
        user, host = "*", "*"
    if not user or not host:
        raise PolicyError(f"{text!r} has an empty user or host")
    return Entry(text, _user_pattern(user), _host_matcher(host))


def parse_list(text: str, knob: str, problems: list[str]) -> tuple[Entry, ...]:
    """The entries of one knob's value; the ones that do not parse are left out and reported."""
    out = []
    for word in _SPLIT.split(text.strip()):
        if not word:
            continue
        try:
            out.append(parse_entry(word))
        except PolicyError as e:
            problems.append(f"{knob}: {e}; the entry matches nobody")
    return tuple(out)


def default_allow(level: Level, pool_user: str) -> str:
    """htcpool's value of ``ALLOW_<level>`` when the configuration sets none (module docstring)."""
    if level.name.startswith("ADVERTISE_"):
        level = Level.DAEMON  # the manual: unset ADVERTISE levels take DAEMON's setting
    personal = pool_user not in ("", "root", "condor")
    owner = f" {pool_user}@*" if pool_user and pool_user != "condor" else ""
    return {
        Level.READ: "*",
        Level.WRITE: f"condor@*{owner}" if personal else "*",
        Level.ADMINISTRATOR: "condor@* root@*" + (owner if personal else ""),
        Level.DAEMON: f"condor@*{owner}",
        Level.NEGOTIATOR: f"condor@*{owner}",
    }.get(level, "")


@dataclass
class Policy:
    """The ALLOW and DENY lists of every level, as one daemon reads them."""

    allow: dict[Level, tuple[Entry, ...]] = field(default_factory=dict)
    deny: dict[Level, tuple[Entry, ...]] = field(default_factory=dict)
    knobs: dict[Level, str] = field(default_factory=dict)  # where each ALLOW list came from
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_lookup(cls, lookup: Lookup, subsystem: str = "", pool_user: str = "") -> Policy:
        """The policy ``lookup`` (a knob's expanded value, or None) gives the daemon ``subsystem``."""
        policy = cls()
        for level in CONFIGURED_LEVELS:
            for kind, table in (("ALLOW", policy.allow), ("DENY", policy.deny)):
                knob, text = _knob(lookup, kind, level, subsystem)
                if text is None and level.name.startswith("ADVERTISE_"):
                    knob, text = _knob(lookup, kind, Level.DAEMON, subsystem)
                if text is None and kind == "ALLOW":
                    knob, text = f"the default ALLOW_{level}", default_allow(level, pool_user)
                table[level] = parse_list(text or "", knob, policy.problems)
                if kind == "ALLOW":
                    policy.knobs[level] = knob
        return policy

    def check(self, level: Level, identity: str, peer: PeerHost) -> str | None:
        """None when ``identity`` at ``peer`` may act at ``level``; else the reason it may not."""
        if level is Level.ALLOW:
            return None
        if any(e.matches(identity, peer) for e in self.deny.get(level, ())):
            return f"DENY_{level} matches it"
        for higher in sorted(IMPLIED_BY[level]):
            if higher is Level.ALLOW:
                continue
            if any(e.matches(identity, peer) for e in self.allow.get(higher, ())) and \
                    not any(e.matches(identity, peer) for e in self.deny.get(higher, ())):
                return None
        return f"no entry of {self.knobs.get(level, f'ALLOW_{level}')} matches it"


def _knob(lookup: Lookup, kind: str, level: Level, subsystem: str) -> tuple[str, str | None]:
    if subsystem:
        name = f"{kind}_{level}_{subsystem.upper()}"
        text = lookup(name)
        if text is not None:
            return name, text
    name = f"{kind}_{level}"
    return name, lookup(name)


__all__ = ["Entry", "PeerHost", "Policy", "PolicyError", "default_allow", "parse_entry", "parse_list"]
