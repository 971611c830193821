"""The gate of a daemon (``gate.Gate``), built from the pool's configuration and credentials
(``credentials``): apart from ``credentials`` because only a daemon needs it, and a tool, which
reads credentials to find its token, should not import the gate (``runtime/http_client.py``)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable

from htcpool.config import Config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.security.authz import Policy
from htcpool.runtime.security.credentials import SecurityPaths, schedd_negotiator_default
from htcpool.runtime.security.gate import Gate, Settings
from htcpool.runtime.security.levels import CONFIGURED_LEVELS
from htcpool.runtime.security.tokens import TokenVerifier


def gate_settings(config: Config, paths: SecurityPaths, subsystem: str, pool_user: str) -> Settings:
    """What the gate of daemon ``subsystem`` takes from ``config``."""
    negotiators = schedd_negotiator_default(config, paths, pool_user) if subsystem.upper() == "SCHEDD" else None

    def lookup(knob: str) -> str | None:
        return negotiators if negotiators is not None and knob == "ALLOW_NEGOTIATOR_SCHEDD" \
            else config.get_str(knob)
    policy = Policy.from_lookup(lookup, subsystem, pool_user)
    default = (config.get_str("SEC_DEFAULT_AUTHENTICATION") or "REQUIRED").upper()
    optional = set()
    for level in CONFIGURED_LEVELS:
        value = (config.get_str(f"SEC_{level}_AUTHENTICATION") or default).upper()
        if value in ("OPTIONAL", "NEVER"):
            optional.add(level)
    names = {"localhost", config.get_str("FULL_HOSTNAME") or "", config.get_str("HOSTNAME") or ""}
    supers = frozenset(u for u in re.split(r"[\s,]+", config.get_str("QUEUE_SUPER_USERS") or "") if u)
    return Settings(policy, paths.uid_domain, frozenset(optional), frozenset(n for n in names if n), supers)


def daemon_gate(layout: PoolLayout, config: Callable[[], Config], subsystem: str,
                clock: Callable[[], float] = time.time) -> Gate:
    """The gate of a daemon whose current configuration ``config`` returns (re-read on reconfig)."""
    import pwd

    pool_user = pwd.getpwuid(os.geteuid()).pw_name
    paths = SecurityPaths.of(config(), layout)
    cache: dict[int, Settings] = {}

    def settings() -> Settings:
        current = config()
        found = cache.get(id(current))
        if found is None:
            cache.clear()
            found = cache[id(current)] = gate_settings(current, SecurityPaths.of(current, layout),
                                                       subsystem, pool_user)
        return found

    return Gate(TokenVerifier(paths.keyring(), paths.trust_domain), settings, clock)


__all__ = ["daemon_gate", "gate_settings"]
