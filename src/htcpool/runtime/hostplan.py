"""What ``htcpool up`` starts on this host, and what a host joining a pool on other hosts needs.

A host runs the daemons of its ``DAEMON_LIST`` (``use ROLE : CentralManager`` adds the collector
and the negotiator, ``Submit`` the schedd, ``Execute`` the startd, ``Personal`` all four; the
HTCondor manual, "Configuration Templates"). When ``COLLECTOR_HOST`` names a collector on another
host (``runtime/network.py``) and this host runs none, or runs one that is not the first of the
list (a second central manager, "High Availability of the Central Manager"), ``prepare_host``

* checks that the first central manager's keys were copied here (the signing key, and the
  certificate authority's key and certificate unless the ``AUTH_SSL_`` knobs name this host's
  certificate): without them this host would make keys of its own, and every daemon of the pool
  would refuse its daemons; ``HostSetupError`` names the missing files and where they come from;
* without a collector of its own, writes the first collector's URL to ``run/collector.address``,
  where the daemons and the tools of this host look for the collector as they look for any daemon
  of theirs; with several collectors, all their URLs to ``run/collectors``, which the tools try in
  order when one does not answer.

``HostPlan.ready`` tells ``start_pool`` when the host is up: every daemon has written its address,
and a startd's slots are in the collector (or, without a startd, the collector answers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from htcpool.config import Config, ConfigError, read_config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import DaemonEntry, daemon_entries
from htcpool.runtime.network import (
    bind_host,
    collector_url,
    collector_urls,
    families,
    own_collector,
)
from htcpool.runtime.security.credentials import SecurityPaths, missing_shared_credentials
from htcpool.runtime.security.tls import encryption_wanted


class HostSetupError(RuntimeError):
    """This host's configuration or files do not let it start or join its pool."""


@dataclass(frozen=True)
class HostPlan:
    """The daemons this host runs, and the collector on another host it joins (None: its own)."""

    daemons: tuple[DaemonEntry, ...]
    remote_collector: str | None

    def runs(self, kind: str) -> bool:
        return any(e.kind == kind for e in self.daemons)

    def addresses_written(self, layout: PoolLayout) -> bool:
        return all(layout.read_address(e.name) for e in self.daemons)


def _config(layout: PoolLayout) -> Config:
    env = dict(os.environ, CONDOR_CONFIG=str(layout.config))
    try:
        return read_config(str(layout.config), environ=env, subsystem="MASTER")
    except ConfigError as e:
        raise HostSetupError(f"{layout.config}: {e}") from None


def _plan(layout: PoolLayout, config: Config) -> HostPlan:
    try:
        families(config)  # ENABLE_IPV4 / ENABLE_IPV6 readable, one of them on
        bind_host(config)  # NETWORK_INTERFACE names an address of this host
        return HostPlan(tuple(daemon_entries(config)), collector_url(config))
    except ConfigError as e:
        raise HostSetupError(f"{layout.config}: {e}") from None


def read_plan(layout: PoolLayout) -> HostPlan:
    """The plan the pool's configuration gives; ``HostSetupError`` naming the file when it is wrong."""
    return _plan(layout, _config(layout))


def prepare_host(layout: PoolLayout) -> HostPlan:
    """The plan, with a joining host checked and pointed at its collector (module docstring)."""
    config = _config(layout)
    plan = _plan(layout, config)
    if plan.remote_collector is None:
        return plan
    try:
        urls = collector_urls(config)
        own = own_collector(config)
    except ConfigError as e:
        raise HostSetupError(f"{layout.config}: {e}") from None
    layout.write_collectors(urls if len(urls) > 1 else [])
    if plan.runs("collector") and (own is None or own[0] == 0):
        return plan
    paths = SecurityPaths.of(config, layout)
    tls = encryption_wanted(config.get_str("SEC_DEFAULT_ENCRYPTION") or "", bind_host(config))
    missing = [p for p in missing_shared_credentials(config, paths) if tls or p == paths.pool_key]
    if missing:
        names = ", ".join(str(p) for p in missing)
        raise HostSetupError(
            f"this host joins the pool whose collector is {plan.remote_collector} (COLLECTOR_HOST), "
            f"but {names} {'is' if len(missing) == 1 else 'are'} missing: copy them from the central "
            f"manager's SEC_PASSWORD_DIRECTORY (mode 0600), as docs/security.md, \"Setting up three hosts\", says")
    if not plan.runs("collector"):
        layout.write_address("collector", plan.remote_collector)
    return plan


__all__ = ["HostPlan", "HostSetupError", "prepare_host", "read_plan"]
