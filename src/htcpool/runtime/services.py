"""The service of each daemon, and the command that runs one.

``python -m htcpool.runtime.services NAME --local-dir DIR`` reads the pool's
configuration (subsystem NAME), logs to ``log/<Name>Log``, and runs the service
of NAME (collector, negotiator, schedd, startd or defrag) in a ``Daemon`` until it is
told to stop. The master starts every daemon of ``DAEMON_LIST`` this way; a
second instance of a daemon (``STARTD_B = $(STARTD)``, ``STARTD_B_ARGS =
-local-name B``) gets ``--local-name B --as startd_b``: it reads its
configuration with that local name and keeps its own files
(``runtime/local_names.py``). The daemon binds the address ``runtime/network.py`` chooses; the
collector of a pool that spans hosts binds the port of ``COLLECTOR_HOST``.

``SERVICES`` is the table from a daemon's name to its service's module and class; a daemon
imports only its own service (``service_for``), none of the others': each daemon is a fresh
Python process, and importing all five services cost every one of them a fifth more modules
(807 against 630 for a collector), paid again at every start and restart. No service imports
this module.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from htcpool.runtime.daemon import Daemon, Service, daemon_config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import DaemonEntry, log_file
from htcpool.runtime.network import bind_host, listen_port

log = logging.getLogger("htcpool.daemon")

#: a daemon's name -> the module and the class that builds its service around the daemon
SERVICES: dict[str, tuple[str, str]] = {
    "collector": ("htcpool.runtime.collector_service", "CollectorService"),
    "defrag": ("htcpool.runtime.defrag_service", "DefragService"),
    "negotiator": ("htcpool.runtime.negotiator_service", "NegotiatorService"),
    "schedd": ("htcpool.runtime.schedd_service", "ScheddService"),
    "startd": ("htcpool.runtime.startd_service", "StartdService"),
}


def service_for(name: str) -> Callable[[Daemon], Service]:
    """What builds the service of daemon ``name`` (a key of ``SERVICES``), its module imported now."""
    module, cls = SERVICES[name]
    built: Callable[[Daemon], Service] = getattr(importlib.import_module(module), cls)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="htcpool-daemon")
    parser.add_argument("name", choices=sorted(SERVICES))
    parser.add_argument("--local-dir", required=True)
    parser.add_argument("--local-name", default=None, help="HTCondor's -local-name (a second startd or schedd)")
    parser.add_argument("--as", dest="entry", default=None, help="its DAEMON_LIST name (default: NAME)")
    args = parser.parse_args(argv)
    layout = PoolLayout(Path(args.local_dir))
    entry = DaemonEntry(args.entry or args.name, args.name, args.local_name)
    config = daemon_config(layout, args.name.upper(), args.local_name)
    logging.basicConfig(filename=log_file(layout, config, entry), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    daemon = Daemon(entry.name, layout, config, kind=entry.kind, local_name=entry.local_name)
    service = service_for(args.name)

    async def go() -> None:
        await daemon.run(service(daemon), bind_host(config), listen_port(config, entry.kind))

    try:
        asyncio.run(go())
    except Exception:
        log.exception("%s failed", args.name)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
