"""Which pool a tool talks to, found as HTCondor's tools find theirs.

1. ``CONDOR_CONFIG`` names the configuration file: the pool is the one whose local
   directory that configuration's ``LOCAL_DIR`` says. A personal pool's own file
   (``LOCAL_DIR/condor_config``, beside its ``pool.token``) is recognised without reading
   the configuration at all, so the common case costs nothing.
2. Otherwise htcpool's default: ``$HTCPOOL_LOCAL_DIR``, else ``~/.htcpool``.

An explicit directory (``--local-dir``) overrides both. A ``CONDOR_CONFIG`` that cannot be
read, or that sets no ``LOCAL_DIR``, is an error naming the file (``LocateError``), never a
silent fall back to another pool.

A pool may run several schedds (one per submit host, or several under one master);
``pick_schedd`` finds the one a tool's ``-name`` names among the collector's ``Scheduler`` ads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from htcpool.runtime.layout import PoolLayout, default_local_dir


class LocateError(RuntimeError):
    """The configuration named by CONDOR_CONFIG does not say where a pool is."""


def pool_dir(explicit: str | None = None, environ: dict[str, str] | None = None) -> Path:
    """The local directory of the pool a tool should use (see the module docstring)."""
    env = os.environ if environ is None else environ
    if explicit:
        return Path(explicit)
    named = env.get("CONDOR_CONFIG")
    if not named or named == "ONLY_ENV":
        return Path(env["HTCPOOL_LOCAL_DIR"]) if env.get("HTCPOOL_LOCAL_DIR") else default_local_dir()
    path = Path(named)
    if (path.parent / "pool.token").exists():
        return path.parent
    return _local_dir_of(path, env)


def _local_dir_of(path: Path, env: dict[str, str] | os._Environ[str]) -> Path:
    from htcpool.config import ConfigError, read_config

    if not path.is_file():
        raise LocateError(f"CONDOR_CONFIG names {path}, which is not a file")
    try:
        config = read_config(str(path), environ=dict(env))
    except ConfigError as e:
        raise LocateError(f"cannot read the configuration {path} (CONDOR_CONFIG): {e}") from None
    local_dir = config.get_str("LOCAL_DIR")
    if not local_dir:
        raise LocateError(f"the configuration {path} (CONDOR_CONFIG) sets no LOCAL_DIR")
    return Path(local_dir)


def pool_layout(explicit: str | None = None) -> PoolLayout:
    return PoolLayout(pool_dir(explicit))


def pick_schedd(ads: list[Any], name: str) -> Any | None:
    """The ``Scheduler`` ad of ``ads`` that ``name`` names (``condor_q -name``, ``condor_submit
    -name``): its whole ``Name``, else the part before or after its ``@`` (``B`` or ``host`` of
    ``B@host``) when only one schedd has it; None when no schedd, or several, answer to it."""
    wanted = name.strip().lower()
    for ad in ads:
        if str(ad.get("Name", "")).lower() == wanted:
            return ad
    for side in (0, 2):
        found = [ad for ad in ads if str(ad.get("Name", "")).lower().partition("@")[side] == wanted]
        if len(found) == 1:
            return found[0]
    return None
