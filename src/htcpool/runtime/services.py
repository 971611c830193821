"""The service of each daemon, and the command that runs one.

``python -m htcpool.runtime.services NAME --local-dir DIR`` reads the pool's
configuration (subsystem NAME), logs to ``log/<Name>Log``, and runs the service
of NAME (collector, negotiator, schedd or startd) in a ``Daemon`` until it is
told to stop. The master starts every daemon of ``DAEMON_LIST`` this way.

``SERVICES`` is the table from a daemon's name to its service; this module
imports every service, and none of them imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.daemon import Daemon, Service, bind_host, daemon_config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.negotiator_service import NegotiatorService
from htcpool.runtime.schedd_service import ScheddService
from htcpool.runtime.startd_service import StartdService

log = logging.getLogger("htcpool.daemon")

#: a daemon's name -> what builds its service around the daemon
SERVICES: dict[str, Callable[[Daemon], Service]] = {
    "collector": CollectorService,
    "negotiator": NegotiatorService,
    "schedd": ScheddService,
    "startd": StartdService,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="htcpool-daemon")
    parser.add_argument("name", choices=sorted(SERVICES))
    parser.add_argument("--local-dir", required=True)
    args = parser.parse_args(argv)
    layout = PoolLayout(Path(args.local_dir))
    logging.basicConfig(filename=layout.log_file(args.name), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    config = daemon_config(layout, args.name.upper())
    daemon = Daemon(args.name, layout, config)

    async def go() -> None:
        await daemon.run(SERVICES[args.name](daemon), bind_host(config))

    try:
        asyncio.run(go())
    except Exception:
        log.exception("%s failed", args.name)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
