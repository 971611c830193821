"""``htcpool userprio``: condor_userprio.

    htcpool userprio [-all|-most|-quotas] [-allusers]
    htcpool userprio -setfactor USER FACTOR | -setprio USER PRIO | -setaccum USER USAGE
                     | -resetusage USER | -resetall | -delete USER

Reads and changes the negotiator's accounting records; the tables are condor_userprio's.
A change names a submitter in full (``user@uid.domain``), as condor_userprio demands, and
reports what it did in condor_userprio's words (``The priority factor of alice@host was set
to 2.000000``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time

from htcpool.cli.common import ToolError, connect, request, run_tool
from htcpool.clock import local_zone
from htcpool.negotiator import format_userprio
from htcpool.protocol import Records, UserprioCommand, UserprioOp, UserprioQuery


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool userprio", description="User priorities (condor_userprio).")
    p.add_argument("-all", action="store_true", help="every column")
    p.add_argument("-most", action="store_true", help="most columns")
    p.add_argument("-quotas", action="store_true", help="group quotas")
    p.add_argument("-allusers", action="store_true", help="users not seen for a day too")
    p.add_argument("-setfactor", nargs=2, metavar=("USER", "FACTOR"))
    p.add_argument("-setprio", nargs=2, metavar=("USER", "PRIO"))
    p.add_argument("-setaccum", nargs=2, metavar=("USER", "USAGE"))
    p.add_argument("-setceiling", nargs=2, metavar=("USER", "CEILING"))
    p.add_argument("-setfloor", nargs=2, metavar=("USER", "FLOOR"))
    p.add_argument("-duration", type=float, default=0.0, metavar="SECONDS",
                   help="with -setfactor, -setceiling or -setfloor: a lease for this long")
    p.add_argument("-resetusage", metavar="USER")
    p.add_argument("-resetall", action="store_true")
    p.add_argument("-delete", metavar="USER")
    return p


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ToolError(f"{text!r} is not a number") from None


def _full_name(name: str, what: str = "priority") -> str:
    """A submitter named in full; condor_userprio refuses a bare user (or group) name."""
    if "@" not in name:
        raise ToolError(f"You must specify the full name of the submittor you wish\n"
                        f"\tto update the {what} of (user@uid.domain or user@full.host.name)")
    return name


def _change(args: argparse.Namespace) -> tuple[UserprioCommand, str] | None:
    """The command a change option asks for and condor_userprio's report of it."""
    if args.setfactor:
        name, factor = _full_name(args.setfactor[0]), _number(args.setfactor[1])
        if factor < 1:
            raise ToolError("Priority factors must be greater than or equal to 1.")
        return (UserprioCommand(UserprioOp.SETFACTOR, name, factor, args.duration),
                f"The priority factor of {name} was set to {factor:f}")
    if args.setceiling:
        name, ceiling = _full_name(args.setceiling[0], "ceiling"), _number(args.setceiling[1])
        return (UserprioCommand(UserprioOp.SETCEILING, name, ceiling, args.duration),
                f"The ceiling of {name} was set to {ceiling:f}")
    if args.setfloor:
        name, floor = _full_name(args.setfloor[0], "floor"), _number(args.setfloor[1])
        return (UserprioCommand(UserprioOp.SETFLOOR, name, floor, args.duration),
                f"The floor of {name} was set to {floor:f}")
    if args.setprio:
        name, prio = _full_name(args.setprio[0]), _number(args.setprio[1])
        return UserprioCommand(UserprioOp.SETPRIO, name, prio), f"The priority of {name} was set to {prio:f}"
    if args.setaccum:
        name, usage = _full_name(args.setaccum[0], "Accumulated usage"), _number(args.setaccum[1])
        if usage < 0:
            raise ToolError("Usage must be greater than 0 seconds")
        return (UserprioCommand(UserprioOp.SETACCUM, name, usage),
                f"The Accumulated Usage of {name} was set to {usage:f}")
    if args.resetusage:
        name = _full_name(args.resetusage)
        return UserprioCommand(UserprioOp.RESETUSAGE, name), f"The accumulated usage of {name} was reset"
    if args.resetall:
        return UserprioCommand(UserprioOp.RESETALL), "The accumulated usage was reset for all users"
    if args.delete:
        name = args.delete
        if "@" not in name:
            raise ToolError("You must specify the full name of the record you wish\n"
                            "\tto delete (user@uid.domain or user@full.host.name)")
        return UserprioCommand(UserprioOp.DELETE, name), f"The accountant record named {name} was deleted"
    return None


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        change = _change(args)
        client = connect()
        if change is not None:
            command, report = change
            request(client, "negotiator", command)
            print(report)
            return 0
        reply = request(client, "negotiator", UserprioQuery())
        rows = list(reply.rows) if isinstance(reply, Records) else []
        view = "quotas" if args.quotas else "all" if args.all else "most" if args.most else "default"
        now = time.time()
        zone = dt.timezone(dt.timedelta(seconds=local_zone(now)))
        text = format_userprio(rows, now=now, view=view if view != "default" else "most",
                               active_window=None if args.allusers else 86400.0, tz=zone)
        sys.stdout.write(text)
        return 0

    return run_tool("htcpool userprio", body)
