"""Where a pool's daemons listen, what address they advertise, and where its collectors are.

HTCondor's knobs decide it (the HTCondor manual, "Introduction to Configuration",
"Configuration Templates", "High Availability of the Central Manager", "Enabling IPv6", and the
configuration macros ``COLLECTOR_HOST``, ``NETWORK_INTERFACE``, ``BIND_ALL_INTERFACES``,
``ENABLE_IPV4``, ``ENABLE_IPV6`` and ``PREFER_IPV4``):

* ``COLLECTOR_HOST`` (by default ``$(CONDOR_HOST)``) lists one or more collectors, separated by
  commas or blanks, each ``host[:port]``, ``[v6-address]:port`` or ``<host:port?...>``, HTCondor's
  port 9618 when none is given. A pool whose first entry is unset, names loopback (``localhost``,
  ``127.0.0.1``, ``::1``) or port 0 (``use ROLE : Personal`` sets ``$(CONDOR_HOST):0``) lives on
  one host: its daemons find one another through the address files of the pool's ``run/``
  directory, as a personal pool always has. Otherwise the pool **spans hosts**: a collector
  listens on the port of the entry that names its host (``own_collector``), and daemons reach the
  collectors at ``https://host:port`` (``http://`` where encryption is off, see
  ``tls.encryption_wanted``). Several entries are collectors kept for high availability: daemons
  send their ads to every one, and queries try them in the list's order (``collector_urls``).
* Families. IPv4 is used unless ``ENABLE_IPV4`` is false; IPv6 when ``ENABLE_IPV6`` is true, or
  (``auto``, the default) when ``NETWORK_INTERFACE`` or the first collector is an IPv6 address.
  A host with both binds both (one IPv6 socket that also takes IPv4, whose peers the security gate
  sees as IPv4 addresses); ``PREFER_IPV4`` picks the loopback it falls back to advertising when
  nothing below decides.
* Binding. On one host the daemons bind loopback (``::1`` where IPv4 is off), or
  ``NETWORK_INTERFACE`` when it names an address (a literal one, or one a device name or a
  wildcard pattern chooses: ``runtime/interfaces.py``). Across hosts they bind every interface when
  ``BIND_ALL_INTERFACES`` is true (HTCondor's default), else ``NETWORK_INTERFACE``'s address, and
  they advertise ``NETWORK_INTERFACE``'s address when it names one, else this host's address on
  the route to the first collector.

``ConfigError`` names the knob when ``COLLECTOR_HOST`` cannot be read.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from htcpool.config.errors import ConfigError
from htcpool.runtime.interfaces import host_addresses, matching_address, names_an_address
from htcpool.runtime.security.tls import encryption_wanted

if TYPE_CHECKING:
    from htcpool.config import Config

T = TypeVar("T")

#: HTCondor's collector port (COLLECTOR_HOST without a port)
DEFAULT_COLLECTOR_PORT = 9618
LOOPBACK = "127.0.0.1"
LOOPBACK6 = "::1"
ANY = "0.0.0.0"
ANY6 = "::"
WILDCARDS = (ANY, ANY6)


@dataclass(frozen=True)
class CollectorHost:
    """A collector ``COLLECTOR_HOST`` names, on another host or reachable from other hosts."""

    host: str
    port: int

    def url(self, config: Config) -> str:
        scheme = "https" if encryption_wanted(_encryption(config), self.host) else "http"
        return f"{scheme}://{url_host(self.host)}:{self.port}"


def url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _encryption(config: Config) -> str:
    return (config.get_str("SEC_DEFAULT_ENCRYPTION") or "").upper()


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_collector_host(text: str) -> tuple[str, int]:
    """(host, port) of one ``COLLECTOR_HOST`` entry; port 0 when it says 0, 9618 when none."""
    entry = text.strip().removeprefix("<").split("?", 1)[0].removesuffix(">")
    if entry.startswith("["):  # [v6]:port
        host, _, rest = entry[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif entry.count(":") == 1:
        host, _, port_text = entry.partition(":")
    else:
        host, port_text = entry, ""
    if not host:
        raise ConfigError(f"COLLECTOR_HOST = {text!r} names no host (expected host[:port])")
    if not port_text:
        return host, DEFAULT_COLLECTOR_PORT
    if not port_text.isdigit() or int(port_text) > 65535:
        raise ConfigError(f"COLLECTOR_HOST = {text!r}: the port {port_text!r} is not a number "
                          "from 0 to 65535 (expected host[:port])")
    return host, int(port_text)


def collector_hosts(config: Config) -> tuple[CollectorHost, ...]:
    """Every collector of a pool that spans hosts, in ``COLLECTOR_HOST``'s order; none for a pool
    on one host (module docstring)."""
    raw = (config.get_str("COLLECTOR_HOST") or "").strip()
    found = tuple(CollectorHost(*parse_collector_host(e)) for e in re.split(r"[\s,]+", raw) if e)
    if not found or found[0].port == 0 or is_loopback(found[0].host):
        return ()
    return found


def collector_host(config: Config) -> CollectorHost | None:
    """The first collector of a pool that spans hosts; None for a pool on one host."""
    found = collector_hosts(config)
    return found[0] if found else None


def collector_url(config: Config) -> str | None:
    """Where daemons and tools of this host reach the first collector on another host; None on one host."""
    found = collector_host(config)
    return None if found is None else found.url(config)


def collector_urls(config: Config) -> list[str]:
    """Every collector's URL, in ``COLLECTOR_HOST``'s order; empty on one host."""
    return [each.url(config) for each in collector_hosts(config)]


def is_this_host(host: str) -> bool:
    """Whether ``host`` is an address (or a name of an address) of this machine: one this host
    could bind."""
    def bound(probe: socket.socket, target: Any) -> bool:
        probe.bind(target)
        return True
    return _first_probe(host, 0, bound) is True


def own_collector(config: Config) -> tuple[int, CollectorHost] | None:
    """The position and entry of ``COLLECTOR_HOST`` that names this host; None when none does."""
    for i, each in enumerate(collector_hosts(config)):
        if is_this_host(each.host):
            return i, each
    return None


def _family_knob(config: Config, knob: str) -> bool | None:
    """ENABLE_IPV4 / ENABLE_IPV6: True, False, or None for ``auto``; ConfigError naming the knob."""
    text = (config.get_str(knob) or "auto").strip().lower()
    if text == "auto":
        return None
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise ConfigError(f"{knob} = {text!r} is not true, false or auto")


def _version(text: str) -> int | None:
    try:
        return ipaddress.ip_address(text.strip("[]")).version
    except ValueError:
        return None


def families(config: Config) -> tuple[bool, bool]:
    """(IPv4, IPv6): which address families the daemons of this host use (module docstring)."""
    v4 = _family_knob(config, "ENABLE_IPV4") is not False
    wanted6 = _family_knob(config, "ENABLE_IPV6")
    if wanted6 is None:
        first = collector_host(config)
        named = [(config.get_str("NETWORK_INTERFACE") or "").strip(), first.host if first else ""]
        wanted6 = any(_version(n) == 6 for n in named) or not v4
    if not v4 and not wanted6:
        raise ConfigError("ENABLE_IPV4 and ENABLE_IPV6 are both false: the daemons would have no address")
    return v4, wanted6


def _interface(config: Config) -> str | None:
    """The address ``NETWORK_INTERFACE`` names, of a family in use: a literal address, or the one
    a device name or wildcard pattern chooses (``runtime/interfaces.py``); None for ``*`` (every
    interface) or a literal address of a family not in use. ``ConfigError`` naming the knob when a
    pattern matches none of this host's addresses."""
    wanted = (config.get_str("NETWORK_INTERFACE") or "").strip()
    if not wanted or wanted == "*":
        return None
    v4, v6 = families(config)
    versions = [version for version, used in ((4, v4), (6, v6)) if used]
    if names_an_address(wanted):
        address = ipaddress.ip_address(wanted.strip("[]"))
        return str(address) if address.version in versions else None
    listing = host_addresses()
    found = matching_address(wanted, listing, versions)
    if found is None:
        devices = ", ".join(sorted({device for device, _ in listing})) or "none"
        families_used = " or ".join(f"IPv{v}" for v in versions)
        raise ConfigError(f"NETWORK_INTERFACE = {wanted!r} matches no {families_used} address of this host "
                          f"(its devices: {devices}); give a device name or an address, '*' wildcards allowed")
    return found


def bind_host(config: Config) -> str:
    """The address the daemons of this host bind (module docstring)."""
    wanted = _interface(config)
    v4, v6 = families(config)
    if collector_host(config) is None:
        return wanted or (LOOPBACK if v4 else LOOPBACK6)
    if config.get_bool("BIND_ALL_INTERFACES", default=True):
        return ANY6 if v6 else ANY
    return wanted or advertised_host(config, ANY6 if v6 else ANY)


def listen_port(config: Config, kind: str) -> int:
    """The port a daemon of ``kind`` binds: the collector of a pool across hosts the port of the
    ``COLLECTOR_HOST`` entry naming this host (else the first's), every other daemon one the
    kernel picks."""
    if kind != "collector":
        return 0
    own = own_collector(config)
    if own is not None:
        return own[1].port
    found = collector_host(config)
    return found.port if found is not None else 0


def listen_socket(config: Config, host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port``; IPv6 for an IPv6 address, taking IPv4 too on the
    wildcard where IPv4 is in use."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that
    # say they are TCP, and accepted connections inherit the protocol. With Nagle on, a reply
    # written as headers then body waits for the client's delayed ACK: 40 ms per message.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if host == ANY6 and families(config)[0] else 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


def route_address(host: str, port: int) -> str | None:
    """This host's address on the route to ``host`` (a UDP ``connect`` sends nothing)."""
    def source(probe: socket.socket, target: Any) -> str:
        probe.connect(target)
        return str(probe.getsockname()[0])
    return _first_probe(host, port, source)


def _first_probe(host: str, port: int, use: Callable[[socket.socket, Any], T]) -> T | None:
    """What ``use`` gives for the first of ``host``'s addresses (a UDP socket of its family) that it
    does not raise OSError on; None when it raises on all, or ``host`` does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except OSError:
        return None
    for family, kind, proto, _, target in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                return use(probe, target)
        except OSError:
            continue
    return None


def advertised_host(config: Config, bind: str) -> str:
    """The address a daemon bound to ``bind`` gives other daemons (module docstring)."""
    if bind not in WILDCARDS:
        return bind
    wanted = _interface(config)
    if wanted and wanted not in WILDCARDS:
        return wanted
    v4, v6 = families(config)
    found = collector_host(config)
    routed = route_address(found.host, found.port) if found is not None else None
    if routed and not is_loopback(routed) and ((v4 and ":" not in routed) or (v6 and ":" in routed)):
        return routed
    fallback = config.get_str("IP_ADDRESS")
    if fallback:
        return fallback
    return LOOPBACK if v4 and (config.get_bool("PREFER_IPV4", default=True) or not v6) else LOOPBACK6


__all__ = ["DEFAULT_COLLECTOR_PORT", "CollectorHost", "advertised_host", "bind_host", "collector_host",
           "collector_hosts", "collector_url", "collector_urls", "families", "is_this_host", "listen_port",
           "listen_socket", "own_collector", "parse_collector_host", "route_address", "url_host"]
