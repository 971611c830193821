"""Which of this host's addresses ``NETWORK_INTERFACE`` names.

The HTCondor manual's ``NETWORK_INTERFACE`` entry ("Configuration Macros", networking) allows an
IP address or the name of a network device (``eth0``), either with ``*`` wildcards
(``192.0.2.*``, ``enp*``); ``*``, the default, names every interface. When several addresses
match, the one chosen is the first (in the system's order of devices) in a public address
space, else the first in a private one, else the first loopback address.

``psutil.net_if_addrs`` lists the devices and their addresses in the system's order. IPv6
link-local addresses (``fe80::``) are left out: a daemon cannot be reached at one without naming
the device, and HTCondor does not advertise them either.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from enum import IntEnum

import psutil

#: (device name, address) pairs in the system's order
Listing = Sequence[tuple[str, str]]


class Space(IntEnum):
    """The preference among matching addresses: lower wins."""

    PUBLIC = 0
    PRIVATE = 1
    LOOPBACK = 2


def host_addresses() -> list[tuple[str, str]]:
    """This host's devices and their IPv4 and IPv6 addresses (link-local IPv6 left out)."""
    found: list[tuple[str, str]] = []
    for device, addresses in psutil.net_if_addrs().items():
        for entry in addresses:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            text = entry.address.split("%", 1)[0]
            try:
                parsed = ipaddress.ip_address(text)
            except ValueError:
                continue
            if parsed.version == 6 and parsed.is_link_local:
                continue
            found.append((device, str(parsed)))
    return found


def _space(address: str) -> Space:
    parsed = ipaddress.ip_address(address)
    if parsed.is_loopback:
        return Space.LOOPBACK
    return Space.PRIVATE if parsed.is_private else Space.PUBLIC


def names_an_address(pattern: str) -> bool:
    """Whether ``pattern`` is one literal IP address (no wildcard, no device name)."""
    try:
        ipaddress.ip_address(pattern.strip("[]"))
    except ValueError:
        return False
    return True


def matching_address(pattern: str, listing: Listing, versions: Iterable[int]) -> str | None:
    """The address ``pattern`` (a device name or an address, ``*`` wildcards allowed) chooses among
    ``listing``'s addresses of the IP ``versions`` given; None when none matches."""
    wanted = set(versions)
    best: tuple[Space, int, str] | None = None
    for order, (device, address) in enumerate(listing):
        if ipaddress.ip_address(address).version not in wanted:
            continue
        if not (fnmatch.fnmatchcase(device, pattern) or fnmatch.fnmatchcase(address, pattern.strip("[]"))):
            continue
        candidate = (_space(address), order, address)
        if best is None or candidate < best:
            best = candidate
    return best[2] if best is not None else None


__all__ = ["Listing", "Space", "host_addresses", "matching_address", "names_an_address"]
