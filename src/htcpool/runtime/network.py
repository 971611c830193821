"""Where a pool's daemons listen, what address they advertise, and where its collector is.

HTCondor's knobs decide it (the HTCondor manual, "Introduction to Configuration",
"Configuration Templates", and the configuration macros ``COLLECTOR_HOST``, ``NETWORK_INTERFACE``
and ``BIND_ALL_INTERFACES``):

* ``COLLECTOR_HOST`` (by default ``$(CONDOR_HOST)``) is ``host[:port]``, HTCondor's port 9618 when
  none is given; the first entry counts when it lists several, and ``<host:port?...>`` is accepted.
  A pool whose ``COLLECTOR_HOST`` is unset, names loopback (``localhost``, ``127.0.0.1``) or port
  0 (``use ROLE : Personal`` sets ``$(CONDOR_HOST):0``) lives on one host: its daemons find one
  another through the address files of the pool's ``run/`` directory, as a personal pool always
  has. Otherwise the pool **spans hosts**: the collector listens on that port, and the daemons of
  every other host reach it at ``https://host:port`` (``http://`` where encryption is off, see
  ``tls.encryption_wanted``).
* Binding. On one host the daemons bind loopback, or ``NETWORK_INTERFACE`` when it names an
  address. Across hosts they bind every interface when ``BIND_ALL_INTERFACES`` is true (HTCondor's
  default), else ``NETWORK_INTERFACE``'s address, and they advertise ``NETWORK_INTERFACE``'s
  address when it names one, else this host's address on the route to the collector.

``ConfigError`` names the knob when ``COLLECTOR_HOST`` cannot be read.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.config.errors import ConfigError
from htcpool.runtime.security.tls import encryption_wanted

if TYPE_CHECKING:
    from htcpool.config import Config

#: HTCondor's collector port (COLLECTOR_HOST without a port)
DEFAULT_COLLECTOR_PORT = 9618
LOOPBACK = "127.0.0.1"
ANY = "0.0.0.0"


@dataclass(frozen=True)
class CollectorHost:
    """The collector ``COLLECTOR_HOST`` names, on another host or reachable from other hosts."""

    host: str
    port: int

    def url(self, config: Config) -> str:
        scheme = "https" if encryption_wanted(_encryption(config), self.host) else "http"
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{shown}:{self.port}"


def _encryption(config: Config) -> str:
    return (config.get_str("SEC_DEFAULT_ENCRYPTION") or "").upper()


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
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


def collector_host(config: Config) -> CollectorHost | None:
    """The collector of a pool that spans hosts; None for a pool on one host (module docstring)."""
    raw = (config.get_str("COLLECTOR_HOST") or "").strip()
    first = re.split(r"[\s,]+", raw)[0] if raw else ""
    if not first:
        return None
    host, port = parse_collector_host(first)
    if port == 0 or is_loopback(host):
        return None
    return CollectorHost(host, port)


def collector_url(config: Config) -> str | None:
    """Where daemons and tools of this host reach a collector on another host; None on one host."""
    found = collector_host(config)
    return None if found is None else found.url(config)


def _interface(config: Config) -> str | None:
    """``NETWORK_INTERFACE`` when it names an IPv4 address (not ``*``, not an interface name; the
    daemons listen on IPv4 only)."""
    wanted = (config.get_str("NETWORK_INTERFACE") or "").strip()
    try:
        address = ipaddress.ip_address(wanted)
    except ValueError:
        return None
    return str(address) if address.version == 4 else None


def bind_host(config: Config) -> str:
    """The address the daemons of this host bind (module docstring)."""
    wanted = _interface(config)
    if collector_host(config) is None:
        return wanted or LOOPBACK
    if config.get_bool("BIND_ALL_INTERFACES", default=True):
        return ANY
    return wanted or advertised_host(config, ANY)


def listen_port(config: Config, kind: str) -> int:
    """The port a daemon of ``kind`` binds: the collector of a pool across hosts the port of
    ``COLLECTOR_HOST``, every other daemon one the kernel picks."""
    found = collector_host(config)
    return found.port if kind == "collector" and found is not None else 0


def route_address(host: str, port: int) -> str | None:
    """This host's address on the route to ``host`` (a UDP ``connect`` sends nothing)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except OSError:
        return None
    for family, kind, proto, _, target in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.connect(target)
                return str(probe.getsockname()[0])
        except OSError:
            continue
    return None


def advertised_host(config: Config, bind: str) -> str:
    """The address a daemon bound to ``bind`` gives other daemons (module docstring)."""
    if bind != ANY:
        return bind
    wanted = _interface(config)
    if wanted and wanted != ANY:
        return wanted
    found = collector_host(config)
    routed = route_address(found.host, found.port) if found is not None else None
    if routed and ":" not in routed and not is_loopback(routed):  # IPv4, as the daemons listen
        return routed
    return config.get_str("IP_ADDRESS") or LOOPBACK


__all__ = ["DEFAULT_COLLECTOR_PORT", "CollectorHost", "advertised_host", "bind_host", "collector_host",
           "collector_url", "listen_port", "parse_collector_host", "route_address"]
