"""``htcpool status``: condor_status.

    htcpool status [-long] [-json] [-af ATTR...] [-constraint EXPR] [-available] [-run]
                   [-total] [-direct NAME] [-schedd|-negotiator|-master|-collector|-any] [NAME...]

Slots by default (their machine ads from the collector); ``-direct`` asks the startd
itself. ``-available`` keeps slots that are Unclaimed and willing (HTCondor's
``State == "Unclaimed" && Activity == "Idle"``), ``-run`` shows claimed ones.
"""

from __future__ import annotations

import argparse
import sys
import time

from htcpool.classad import quote
from htcpool.cli.common import connect, console_width, local_zone, request, run_tool
from htcpool.cli.formats import format_autoformat, format_json, format_long, format_status
from htcpool.protocol import AdList, QueryAds

AVAILABLE = 'State == "Unclaimed" && Activity == "Idle"'
RUNNING = 'State == "Claimed" && Activity =!= "Idle"'


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool status", description="Show the pool's slots (condor_status).")
    p.add_argument("-long", "-l", action="store_true", help="whole ads")
    p.add_argument("-json", action="store_true", help="ads as JSON")
    p.add_argument("-af", "-autoformat", nargs="+", metavar="ATTR", help="these attributes, one ad a line")
    p.add_argument("-constraint", metavar="EXPR", help="only ads for which EXPR is true")
    p.add_argument("-available", "-avail", action="store_true", help="slots willing to run jobs now")
    p.add_argument("-run", action="store_true", help="slots running jobs")
    p.add_argument("-total", "-totals", action="store_true", help="only the totals")
    p.add_argument("-direct", metavar="NAME", help="ask the startd itself instead of the collector")
    for kind in ("schedd", "negotiator", "master", "collector", "submitters", "any"):
        p.add_argument(f"-{kind}", action="store_true", help=f"{kind} ads")
    p.add_argument("names", nargs="*", help="slot or machine names")
    return p


def _my_type(args: argparse.Namespace) -> str:
    for kind, my_type in (("schedd", "Scheduler"), ("negotiator", "Negotiator"),
                          ("master", "DaemonMaster"), ("collector", "Collector"),
                          ("submitters", "Submitter"), ("any", "Any")):
        if getattr(args, kind):
            return my_type
    return "Machine"


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        client = connect()
        now = int(time.time())
        parts = []
        if args.constraint:
            parts.append(f"({args.constraint})")
        if args.available:
            parts.append(AVAILABLE)
        if args.run:
            parts.append(RUNNING)
        if args.names:
            parts.append(" || ".join(f"Name == {quote(n)} || Machine == {quote(n)}" for n in args.names))
        query = QueryAds(_my_type(args), " && ".join(f"({p})" for p in parts))
        daemon = "startd" if args.direct else "collector"
        reply = request(client, daemon, query)
        ads = sorted(reply.ads if isinstance(reply, AdList) else [],
                     key=lambda a: (str(a.get("Machine", "")), _slot_order(str(a.get("Name", "")))))
        if args.af:
            sys.stdout.write(format_autoformat(ads, args.af))
        elif args.long:
            sys.stdout.write(format_long(ads))
        elif args.json:
            sys.stdout.write(format_json(ads))
        else:
            view = "total" if args.total else "run" if args.run else "default"
            sys.stdout.write(format_status(ads, view=view, now=now, zone=local_zone(now),
                                           width=console_width()))
        return 0

    return run_tool("htcpool status", body)


def _slot_order(name: str) -> tuple[int, ...]:
    """slot1 < slot1_1 < slot1_2 < slot2 …, as condor_status sorts them."""
    head = name.split("@", 1)[0].removeprefix("slot")
    return tuple(int(p) if p.isdigit() else 0 for p in head.split("_"))
