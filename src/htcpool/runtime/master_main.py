"""The master's process: ``python -m htcpool.runtime.master_main --local-dir DIR`` (what ``htcpool up``
starts). It takes the pool directory's lock before anything else (``runtime/poollock.py``;
``EXIT_LOCKED`` when another master holds it), writes its pid file, and runs the master service
(``runtime/master.py``) where the other daemons listen."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from htcpool.runtime.childalive import log_stream, register_stack_dump
from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.master import MasterService
from htcpool.runtime.network import bind_host
from htcpool.runtime.pidfile import remove_pid_file, write_pid_file
from htcpool.runtime.poollock import EXIT_LOCKED, InstanceLock, PoolLocked

log = logging.getLogger("htcpool.master")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="htcpool-master")
    parser.add_argument("--local-dir", required=True)
    args = parser.parse_args(argv)
    layout = PoolLayout(Path(args.local_dir))
    logging.basicConfig(filename=layout.log_file("master"), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        lock = InstanceLock.acquire(layout.run, layout.master_pid)
    except PoolLocked as e:
        log.error("not starting: %s", e)
        print(f"htcpool master: {e}", file=sys.stderr)
        return EXIT_LOCKED
    except OSError as e:
        log.error("not starting: cannot lock the pool's directory: %s", e)
        print(f"htcpool master: cannot lock the pool's directory {layout.run}: {e}", file=sys.stderr)
        return 1
    write_pid_file(layout.master_pid, os.getpid())  # at once: a refused master names this one
    register_stack_dump(log_stream())
    try:
        config = daemon_config(layout, "MASTER")
        daemon = Daemon("master", layout, config)
        asyncio.run(daemon.run(MasterService(daemon), bind_host(config)))  # where the other daemons listen
    except Exception:
        log.exception("the master failed")
        return 1
    finally:
        remove_pid_file(layout.master_pid, os.getpid())
        lock.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
