"""The master a daemon command goes to: this host's, or another host's found in the collector.

condor_off, condor_on, condor_restart and condor_reconfig send their command to a master (the
HTCondor manual, "condor_off": ``-name hostname``, ``-addr "<a.b.c.d:port>"``, ``-pool
centralmanagerhostname[:portnumber]``). Without ``-name`` or ``-addr`` it is this host's master, on
its Unix socket. With ``-name`` the tool asks the collector (``-pool``'s, else the pool's own) for
its ``DaemonMaster`` ads and sends to the ``MyAddress`` of the one that host runs: an ad matches when
its ``Name`` or ``Machine`` is the name given, its host part before the first dot is, or the address
in its ``MyAddress`` is. ``-addr`` names the master's address itself. The master answers only an
identity the ``ADMINISTRATOR`` level allows (docs/security.md), whichever host asks.

``RemoteMasterError`` says what was asked and what the collector knows when no master matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from htcpool.config.errors import ConfigError
from htcpool.protocol import AdList, QueryAds
from htcpool.runtime.network import parse_collector_host, url_host
from htcpool.runtime.security.tls import encryption_wanted


class RemoteMasterError(RuntimeError):
    """No master matches ``-name``/``-addr``, or ``-pool`` cannot be read."""


@dataclass(frozen=True)
class Target:
    """Where a command goes: ``url`` None for this host's master; ``label`` as the report names it."""

    url: str | None
    label: str = "local master"


def _url(option: str, text: str) -> str:
    try:
        host, port = parse_collector_host(text)
    except ConfigError as e:  # the message names COLLECTOR_HOST's form
        raise RemoteMasterError(f"{option} {text!r}: {e}") from None
    scheme = "https" if encryption_wanted("", host) else "http"  # as the daemons: HTTPS off loopback
    return f"{scheme}://{url_host(host)}:{port}"


def pool_url(pool: str) -> str:
    """The URL of the collector ``-pool host[:port]`` names."""
    return _url("-pool", pool)


def addr_url(addr: str) -> str:
    """The URL of a master given as ``-addr "<ip:port?...>"`` (or ``http(s)://host:port``)."""
    return addr if "://" in addr else _url("-addr", addr)


def _names(ad: Any) -> set[str]:
    out: set[str] = set()
    for key in ("Name", "Machine"):
        value = str(ad.get(key) or "").lower()
        if value:
            out.update((value, value.split(".", 1)[0], value.rpartition("@")[2]))
    host = urlsplit(str(ad.get("MyAddress") or "")).hostname
    if host:
        out.add(host.lower())
    return out


def pick_master(ads: list[Any], name: str) -> Any | None:
    """The ``DaemonMaster`` ad of ``ads`` that ``name`` names (module docstring)."""
    wanted = name.lower()
    return next((ad for ad in ads if wanted in _names(ad) and ad.get("MyAddress")), None)


def master_ads(reply: Any) -> list[Any]:
    return list(reply.ads) if isinstance(reply, AdList) else []


MASTER_QUERY = QueryAds("DaemonMaster", "", ("Name", "Machine", "MyAddress"))


def target_of(name: str | None, addr: str | None, ads: list[Any]) -> Target:
    """Where the command goes, from ``-name``/``-addr`` and the collector's Master ``ads``."""
    if addr:
        url = addr_url(addr)
        return Target(url, f"master at <{url.partition('://')[2]}>")  # HTCondor's idStr, parameters dropped
    if not name:
        return Target(None)
    found = pick_master(ads, name)
    if found is None:
        known = ", ".join(sorted(str(ad.get("Name")) for ad in ads)) or "none"
        raise RemoteMasterError(f"Can't find address for master {name} (the collector knows: {known})")
    return Target(str(found["MyAddress"]), f"master {found.get('Name') or name}")


__all__ = ["MASTER_QUERY", "RemoteMasterError", "Target", "addr_url", "master_ads", "pick_master", "pool_url",
           "target_of"]
