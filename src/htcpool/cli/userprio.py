"""``htcpool userprio``: condor_userprio.

    htcpool userprio [-all|-most|-quotas] [-allusers]
    htcpool userprio -setfactor USER FACTOR | -setprio USER PRIO | -setaccum USER USAGE
                     | -resetusage USER | -resetall | -delete USER

Reads and changes the negotiator's accounting records; the tables are condor_userprio's.
"""

from __future__ import annotations

import argparse
import sys
import time

from htcpool.cli.common import ToolError, connect, local_zone, request, run_tool
from htcpool.negotiator import format_userprio
from htcpool.protocol import Records, UserprioCommand, UserprioQuery


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool userprio", description="User priorities (condor_userprio).")
    p.add_argument("-all", action="store_true", help="every column")
    p.add_argument("-most", action="store_true", help="most columns")
    p.add_argument("-quotas", action="store_true", help="group quotas")
    p.add_argument("-allusers", action="store_true", help="users not seen for a day too")
    p.add_argument("-setfactor", nargs=2, metavar=("USER", "FACTOR"))
    p.add_argument("-setprio", nargs=2, metavar=("USER", "PRIO"))
    p.add_argument("-setaccum", nargs=2, metavar=("USER", "USAGE"))
    p.add_argument("-resetusage", metavar="USER")
    p.add_argument("-resetall", action="store_true")
    p.add_argument("-delete", metavar="USER")
    return p


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ToolError(f"{text!r} is not a number") from None


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        client = connect()
        command = None
        if args.setfactor:
            command = UserprioCommand("setfactor", args.setfactor[0], _number(args.setfactor[1]))
        elif args.setprio:
            command = UserprioCommand("setprio", args.setprio[0], _number(args.setprio[1]))
        elif args.setaccum:
            command = UserprioCommand("setaccum", args.setaccum[0], _number(args.setaccum[1]))
        elif args.resetusage:
            command = UserprioCommand("resetusage", args.resetusage)
        elif args.resetall:
            command = UserprioCommand("resetall")
        elif args.delete:
            command = UserprioCommand("delete", args.delete)
        if command is not None:
            request(client, "negotiator", command)
            print("The operation was successful.")
            return 0
        reply = request(client, "negotiator", UserprioQuery())
        rows = list(reply.rows) if isinstance(reply, Records) else []
        view = "quotas" if args.quotas else "all" if args.all else "most" if args.most else "default"
        now = time.time()
        import datetime as dt
        zone = dt.timezone(dt.timedelta(seconds=local_zone(now)))
        text = format_userprio(rows, now=now, view=view if view != "default" else "most",
                               active_window=None if args.allusers else 86400.0, tz=zone)
        sys.stdout.write(text)
        return 0

    return run_tool("htcpool userprio", body)
