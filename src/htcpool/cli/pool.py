"""``htcpool up``, ``down``, ``on``, ``off``, ``restart``, ``reconfig``: the pool's life.

    htcpool up [--foreground] [--local-dir DIR]   start a personal pool (default ~/.htcpool)
    htcpool down [-fast|-peaceful]                stop it
    htcpool off|on|restart|reconfig [-fast|-peaceful] [-daemon NAME | -startd ...]... [-name HOST | -addr ADDR]
                                  [-pool HOST[:PORT]]   (another host's master: cli/remote_master.py)
    htcpool master [-f] [-t]                      condor_master: start the configured pool

The pool's local directory is ``--local-dir``, else the ``LOCAL_DIR`` of the configuration
``CONDOR_CONFIG`` names, else ``$HTCPOOL_LOCAL_DIR``, else ``~/.htcpool`` (``cli/locate.py``).
``htcpool up`` and condor_master start the pool the configuration describes: when
``CONDOR_CONFIG`` names a file of the user's own, the pool's ``condor_config`` (written once, when
there is none) includes it, so the daemons read exactly that configuration (one host's role in a
pool across hosts, say); without one, ``up`` writes the personal pool's configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import httpx

from htcpool.cli.locate import LocateError, pool_layout
from htcpool.cli.remote_master import (
    MASTER_QUERY,
    RemoteMasterError,
    Target,
    master_ads,
    pool_url,
    target_of,
)
from htcpool.protocol import Command, DaemonCommand, How
from htcpool.runtime.http_client import RequestRefused
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PoolClient, PoolNotRunning, start_pool, stop_pool


def _layout(prog: str, local_dir: str | None) -> PoolLayout | None:
    try:
        return pool_layout(local_dir)
    except LocateError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None


def _adopt_named_config(layout: PoolLayout, writer: str) -> None:
    """When ``CONDOR_CONFIG`` names a file of the user's own and the pool has no ``condor_config``
    yet, the pool's file includes it (written once), so the daemons read exactly that configuration
    (a host's role, its ``CONDOR_HOST``: docs/security.md, "A pool across hosts")."""
    named = os.environ.get("CONDOR_CONFIG")
    if named and named != "ONLY_ENV" and not layout.config.exists() \
            and Path(named).resolve() != layout.config.resolve():
        layout.make()
        layout.config.write_text(f"# Written by {writer}: the pool reads the configuration CONDOR_CONFIG "
                                 f"named.\ninclude : {Path(named).resolve()}\n")


def up(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool up", description="Start a personal pool.")
    p.add_argument("--foreground", "-f", action="store_true", help="run the master in this terminal")
    p.add_argument("--local-dir", help="the pool's local directory")
    args = p.parse_args(argv)
    layout = _layout("htcpool up", args.local_dir)
    if layout is None:
        return 1
    _adopt_named_config(layout, "htcpool up")
    try:
        pid = start_pool(layout, foreground=args.foreground)
    except PoolNotRunning as e:
        print(f"htcpool up: {e}", file=sys.stderr)
        return 1
    if args.foreground:
        return pid
    print(f"htcpool personal pool running in {layout.root} (master pid {pid})")
    return 0


def _how(args: argparse.Namespace) -> How:
    return How.FAST if args.fast else How.PEACEFUL if args.peaceful else How.GRACEFUL


def _common(prog: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("-fast", action="store_true", help="stop at once, killing jobs")
    p.add_argument("-peaceful", action="store_true", help="wait for running jobs to finish")
    p.add_argument("-graceful", action="store_true", help="vacate jobs, then stop (default)")
    p.add_argument("--local-dir", help="the pool's local directory")
    return p


def down(argv: list[str]) -> int:
    args = _common("htcpool down", "Stop the personal pool.").parse_args(argv)
    layout = _layout("htcpool down", args.local_dir)
    if layout is None:
        return 1
    if not stop_pool(layout, _how(args)):
        print(f"htcpool down: no pool is running in {layout.root}", file=sys.stderr)
        return 1
    print("htcpool personal pool stopped")
    return 0


def _command(command: Command, argv: list[str]) -> int:
    name = str(command)
    p = _common(f"htcpool {name}", f"condor_{name}: {name} daemons of the pool.")
    p.add_argument("-daemon", "-subsystem", action="append", default=[], dest="daemons",
                   help="a daemon (collector, negotiator, schedd, startd); default: all")
    p.add_argument("-master", action="store_true", help="the master itself (off: the whole pool)")
    for kind in SUBSYSTEMS:
        p.add_argument(f"-{kind}", action="append_const", const=kind, dest="daemons", help=f"-daemon {kind}")
    p.add_argument("-name", metavar="HOST", help="the master of HOST, found in the collector (docs/security.md)")
    p.add_argument("-addr", metavar="<ip:port>", help="the master at this address")
    p.add_argument("-pool", metavar="HOST[:PORT]", help="the collector to find -name's master in")
    p.add_argument("host", nargs="?", help="as -name")
    args = p.parse_args(argv)
    daemons = tuple(d.lower() for d in args.daemons) + (("master",) if args.master else ())
    message = DaemonCommand(command, _how(args), daemons)
    try:
        client = PoolClient(pool_layout(args.local_dir))
        target = _target(client, args.name or args.host, args.addr, args.pool)
        if target.url is None:
            client.send("master", message)
        else:
            client.send_to(target.url, message)
    except (PoolNotRunning, RequestRefused, LocateError, RemoteMasterError, httpx.HTTPError, OSError) as e:
        print(f"htcpool {name}: {e}", file=sys.stderr)
        return 1
    for line in reports(command, _how(args), daemons, target.label):
        print(line)
    return 0


#: the daemons ``-startd``, ``-schedd``... name, as condor_off's shorthand for ``-daemon``
SUBSYSTEMS = ("collector", "negotiator", "schedd", "startd")


def _target(client: PoolClient, name: str | None, addr: str | None, pool: str | None) -> Target:
    """The master the command goes to (``cli/remote_master.py``)."""
    if not name or addr:
        return target_of(name, addr, [])
    reply = client.send_to(pool_url(pool), MASTER_QUERY) if pool else client.send("collector", MASTER_QUERY)
    return target_of(name, None, master_ads(reply))


#: (tool, how) -> HTCondor's name of the command the tool sends: for the whole pool, for one daemon
_VERBS: dict[tuple[Command, How], tuple[str, str]] = {
    (Command.OFF, How.GRACEFUL): ("Kill-All-Daemons", "Kill-Daemon"),
    (Command.OFF, How.FAST): ("Kill-All-Daemons-Fast", "Kill-Daemon-Fast"),
    (Command.OFF, How.PEACEFUL): ("Kill-All-Daemons-Peacefully", "Kill-Daemon-Peacefully"),
    (Command.ON, How.GRACEFUL): ("Spawn-All-Daemons", "Spawn-Daemon"),
    (Command.RESTART, How.GRACEFUL): ("Restart", "Restart"),
    (Command.RESTART, How.FAST): ("Restart-Fast", "Restart-Fast"),
    (Command.RESTART, How.PEACEFUL): ("Restart-Peaceful", "Restart-Peaceful"),
    (Command.RECONFIG, How.GRACEFUL): ("Reconfig", "Reconfig"),
}


def reports(name: Command, how: How, daemons: tuple[str, ...], master: str = "local master") -> list[str]:
    """What condor_off, _on, _restart and _reconfig print after sending their command.

    condor_off and condor_on send a daemon's command to the master and name the daemon
    (``Sent "Kill-Daemon" command for "negotiator" to local master``); condor_restart and
    condor_reconfig address the daemon itself (``Sent "Restart" command to local schedd``).
    A peaceful condor_off of one daemon is reported without naming it, as HTCondor does."""
    whole, one = _VERBS.get((name, how), _VERBS[(name, How.GRACEFUL)])
    if not daemons:
        return [f'Sent "{whole}" command to {master}']
    lines = []
    for daemon in daemons:
        if name not in (Command.OFF, Command.ON):
            where = f"local {daemon}" if master == "local master" else f"{daemon} {master.removeprefix('master ')}"
            lines.append(f'Sent "{one}" command to {where}')
        elif name == Command.OFF and how == How.PEACEFUL:
            lines.append(f'Sent "{one}" command to {master}')
        else:
            lines.append(f'Sent "{one}" command for "{daemon}" to {master}')
    return lines


def off(argv: list[str]) -> int:
    return _command(Command.OFF, argv)


def on(argv: list[str]) -> int:
    return _command(Command.ON, argv)


def restart(argv: list[str]) -> int:
    return _command(Command.RESTART, argv)


def reconfig(argv: list[str]) -> int:
    return _command(Command.RECONFIG, argv)


def master(argv: list[str]) -> int:
    """condor_master: start the pool the configuration describes (``-f``: stay in the foreground)."""
    p = argparse.ArgumentParser(prog="condor_master", description="Start the pool the configuration describes.")
    p.add_argument("-f", action="store_true", help="run in the foreground")
    p.add_argument("-t", action="store_true", help="(with -f) the master's log to the terminal as well")
    p.add_argument("-n", metavar="NAME", help="(accepted for HTCondor's sake: one master per local directory)")
    args = p.parse_args(argv)
    layout = _layout("condor_master", None)
    if layout is None:
        return 1
    _adopt_named_config(layout, "condor_master")
    try:
        pid = start_pool(layout, foreground=args.f)
    except PoolNotRunning as e:
        print(f"condor_master: {e}", file=sys.stderr)
        return 1
    if not args.f:
        print(f"htcpool pool running in {layout.root} (master pid {pid})")
    return 0 if not args.f else pid
