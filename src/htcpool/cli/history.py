"""``htcpool history``: condor_history.

    htcpool history [-long] [-af ATTR...] [-constraint EXPR] [-limit N] [cluster|cluster.proc|user]...
"""

from __future__ import annotations

import argparse
import re
import sys

from htcpool.classad import quote
from htcpool.cli.common import (
    check_constraint,
    check_expressions,
    connect,
    request,
    run_tool,
    without_private,
)
from htcpool.cli.formats import format_autoformat, format_history, format_long
from htcpool.clock import local_zone, wall_clock
from htcpool.protocol import HistoryQuery


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool history", description="Jobs that left the queue (condor_history).")
    p.add_argument("-long", "-l", action="store_true")
    p.add_argument("-af", "-autoformat", nargs="+", metavar="ATTR")
    p.add_argument("-constraint", metavar="EXPR")
    p.add_argument("-limit", "-match", type=int, default=0)
    p.add_argument("targets", nargs="*")
    args = p.parse_args(argv)

    def body() -> int:
        check_constraint(args.constraint)
        check_expressions(args.af)
        picks = []
        for t in args.targets:
            found = re.fullmatch(r"(\d+)(?:\.(\d+))?", t)
            if found is not None:
                c, proc = found.groups()
                picks.append(f"(ClusterId == {c}" + (f" && ProcId == {proc})" if proc else ")"))
            else:
                picks.append(f"(Owner == {quote(t)})")
        parts = [" || ".join(picks)] if picks else []
        if args.constraint:
            parts.append(f"({args.constraint})")
        client = connect()
        # The schedd answers newest first, the order condor_history prints in.
        ads = without_private(request(client, "schedd", HistoryQuery(" && ".join(parts), args.limit)).ads)
        if args.af:
            sys.stdout.write(format_autoformat(ads, args.af, now=wall_clock()))
        elif args.long:
            sys.stdout.write(format_long(ads))
        else:
            sys.stdout.write(format_history(ads, zone=local_zone()))
        return 0

    return run_tool("htcpool history", body)
