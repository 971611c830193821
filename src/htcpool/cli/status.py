"""``htcpool status``: condor_status.

    htcpool status [-long|-json|-xml|-af[:jlhVrTY,tng] ATTR...|-format FMT ATTR...] [-attributes A,B]
                   [-constraint EXPR] [-available] [-run] [-claimed] [-state] [-server] [-gpus]
                   [-compact] [-startd] [-total] [-sort EXPR]... [-limit N] [-wide[:N]] [-direct NAME]
                   [-absent] [-offline] [-print-format FILE] [-statistics WHICH]
                   [-schedd|-negotiator|-master|-collector|-submitters|-defrag|-any|-subsystem TYPE]
                   [NAME...]

The output options are ``cli/options.py``'s. ``-claimed`` shows claimed slots in the ``-run``
columns; ``-state``, ``-server``, ``-gpus`` (slots with GPUs) and ``-compact`` (a row per
machine) are ``formats/status_views.py``'s; ``-startd`` is the default slot view. ``-sort EXPR``
(repeatable) orders the ads by each expression in turn, ``-limit N`` keeps the first N.
``-absent`` shows the machines the collector keeps as absent (``ABSENT_REQUIREMENTS``) and
``-offline`` those with offline universes, in ``formats/status_absent.py``'s views.
``-print-format FILE`` (``-pr``) prints with the columns of a print-format file.
``-statistics WHICH`` (``STATISTICS_TO_PUBLISH``'s syntax, such as ``DC:2`` or ``COLLECTOR:2R``)
asks the daemon that answers, the collector or with ``-direct`` the startd, to put those
statistics in its own ads (see them with ``-long``); a WHICH that does not read is refused.

Slots by default (their machine ads from the collector); ``-direct NAME`` asks the
startd named NAME (its machine or one of its slots) itself. ``-available`` keeps
slots that are Unclaimed and willing (HTCondor's ``State == "Unclaimed" && Activity ==
"Idle"``), ``-run`` shows claimed ones.

The daemon views print HTCondor's columns for each ad type, headings as HTCondor
sets them (text columns left-aligned, counts right-aligned under right-aligned
headings), a blank line, then one row per ad; an attribute an ad lacks prints ``??``
(``None`` in ``-any``):

    -schedd      Name (18) Machine (18) RunningJobs (11) IdleJobs (10) HeldJobs (10)
    -submitters  Name (28) Machine (18) RunningJobs (11) IdleJobs (8) HeldJobs (8)
    -negotiator  Name (20) Machine (20)
    -collector   Name (28) Machine (18) RunningJobs (11) IdleJobs (8) HostsTotal (10)
    -master      Name (20)
    -defrag      Name (as wide as the longest) Draining (8) Peak (8) TotalDrained (12)
    -any         MyType (18) TargetType (18) Name (41)

(the schedd's ``RunningJobs`` … are its ``TotalRunningJobs`` … attributes).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from htcpool.classad import ClassAd, quote
from htcpool.cli.common import (
    ToolError,
    check_constraint,
    check_expressions,
    connect,
    console_width,
    pool_collector,
    request,
    run_tool,
    startd_identity,
    startd_url,
    without_private,
)
from htcpool.cli.formats import format_status
from htcpool.cli.formats.fields import fit_line, lookup_int, lookup_str
from htcpool.cli.formats.printformat import PrintFormatError, QueryType
from htcpool.cli.formats.printformat_output import load_print_format, status_output
from htcpool.cli.formats.status_absent import format_absent, format_offline
from htcpool.cli.options import OptionError, render, take_output_options
from htcpool.clock import local_zone
from htcpool.protocol import AdList, QueryAds
from htcpool.statistics import Collection, parse_publish

AVAILABLE = 'State == "Unclaimed" && Activity == "Idle"'
RUNNING = 'State == "Claimed" && Activity =!= "Idle"'

#: option -> (MyType, columns); a column is (heading, attribute, width: negative = left-aligned)
DAEMON_VIEWS: dict[str, tuple[str, tuple[tuple[str, str, int], ...]]] = {
    "schedd": ("Scheduler", (("Name", "Name", -18), ("Machine", "Machine", -18),
                             ("RunningJobs", "TotalRunningJobs", 11), ("IdleJobs", "TotalIdleJobs", 10),
                             ("HeldJobs", "TotalHeldJobs", 10))),
    "submitters": ("Submitter", (("Name", "Name", -28), ("Machine", "Machine", -18),
                                 ("RunningJobs", "RunningJobs", 11), ("IdleJobs", "IdleJobs", 8),
                                 ("HeldJobs", "HeldJobs", 8))),
    "negotiator": ("Negotiator", (("Name", "Name", -20), ("Machine", "Machine", -20))),
    "collector": ("Collector", (("Name", "Name", -28), ("Machine", "Machine", -18),
                                ("RunningJobs", "RunningJobs", 11), ("IdleJobs", "IdleJobs", 8),
                                ("HostsTotal", "HostsTotal", 10))),
    "master": ("DaemonMaster", (("Name", "Name", -20),)),
    "defrag": ("Defrag", (("Name", "Name", 0), ("Draining", "MachinesDraining", 8),
                          ("Peak", "MachinesDrainingPeak", 8), ("TotalDrained", "DrainedMachines", 12))),
    "any": ("Any", (("MyType", "MyType", -18), ("TargetType", "TargetType", -18), ("Name", "Name", -41))),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool status", description="Show the pool's slots (condor_status).")
    p.add_argument("-constraint", metavar="EXPR", help="only ads for which EXPR is true")
    p.add_argument("-claimed", action="store_true", help="claimed slots")
    p.add_argument("-state", action="store_true", help="slots' states and how long they have been in them")
    p.add_argument("-server", action="store_true", help="slots' memory, disk and benchmarks")
    p.add_argument("-gpus", action="store_true", help="slots with GPUs")
    p.add_argument("-compact", action="store_true", help="one row per machine")
    p.add_argument("-startd", action="store_true", help="slots (the default)")
    p.add_argument("-sort", action="append", metavar="EXPR", help="order the ads by EXPR (repeatable)")
    p.add_argument("-limit", type=int, metavar="N", help="at most N ads")
    p.add_argument("-subsystem", metavar="TYPE", help="ads of daemon TYPE (schedd, negotiator …)")
    p.add_argument("-pool", metavar="HOST[:PORT]", help="ask this central manager's collector")
    p.add_argument("-expert", "-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("-available", "-avail", action="store_true", help="slots willing to run jobs now")
    p.add_argument("-run", action="store_true", help="slots running jobs")
    p.add_argument("-total", "-totals", action="store_true", help="only the totals")
    p.add_argument("-direct", metavar="NAME", help="ask the startd NAME itself instead of the collector")
    p.add_argument("-absent", action="store_true", help="machines that stopped advertising (ABSENT_REQUIREMENTS)")
    p.add_argument("-offline", action="store_true", help="machines with offline universes")
    p.add_argument("-statistics", metavar="WHICH", default="",
                   help="the statistics the answering daemon publishes (STATISTICS_TO_PUBLISH's syntax)")
    p.add_argument("-print-format", "-pr", dest="print_format", metavar="FILE",
                   help="print with the columns of print-format FILE")
    for kind in DAEMON_VIEWS:
        p.add_argument(f"-{kind}", action="store_true", help=f"{kind} ads")
    p.add_argument("names", nargs="*", help="slot or machine names")
    return p


def _daemon_view(args: argparse.Namespace) -> str | None:
    if args.subsystem:
        kind = args.subsystem.lower().removeprefix("condor_")
        if kind in ("startd", "machine", "slot"):
            return None
        if kind not in DAEMON_VIEWS:
            raise ToolError(f"-subsystem {args.subsystem}: expected one of startd, {', '.join(DAEMON_VIEWS)}")
        return kind
    return next((kind for kind in DAEMON_VIEWS if getattr(args, kind)), None)


def sort_ads(ads: list[ClassAd], exprs: Sequence[str], now: int) -> list[ClassAd]:
    """``-sort``: by each expression in turn; numbers before strings, undefined last."""
    from htcpool.classad import EvalContext, ExprTree, fixed_clock

    trees = [ExprTree(e) for e in exprs]
    context = EvalContext(clock=fixed_clock(now))

    def key(ad: ClassAd) -> tuple[tuple[int, object], ...]:
        out: list[tuple[int, object]] = []
        for tree in trees:
            value = tree.evaluate(ad, context=context)
            if type(value) in (int, float, bool):
                out.append((0, float(value)))
            elif type(value) is str:
                out.append((1, value.lower()))
            else:
                out.append((2, 0))
        return tuple(out)

    return sorted(ads, key=key)


def _slot_view(args: argparse.Namespace) -> str:
    for name in ("state", "server", "gpus", "compact"):
        if getattr(args, name):
            return name
    return "total" if args.total else "run" if args.run or args.claimed else "default"


def main(argv: list[str]) -> int:
    try:
        rest, out = take_output_options(argv)
    except OptionError as e:
        print(f"htcpool status: {e}", file=sys.stderr)
        return 1
    args = _parser().parse_args(rest)

    def body() -> int:
        check_constraint(args.constraint)
        check_expressions(out.af)
        check_expressions(args.sort, "-sort")
        check_statistics(args.statistics)
        try:
            pf = load_print_format(args.print_format) if args.print_format else None
        except PrintFormatError as e:
            raise ToolError(str(e)) from None
        if pf is not None and pf.query is not QueryType.ADS:
            raise ToolError(f"{args.print_format}: SELECT {pf.query.value} is for condor_q only (the manual's "
                            "print format tables); condor_status lists the ads themselves")
        kind = _daemon_view(args)
        if args.direct and kind is not None:
            raise ToolError(f"-direct asks a startd for its slots; it does not go with -{kind}")
        client = connect()
        now = int(time.time())
        parts = []
        if args.constraint:
            parts.append(f"({args.constraint})")
        if args.available:
            parts.append(AVAILABLE)
        if args.run:
            parts.append(RUNNING)
        if args.claimed:
            parts.append('State == "Claimed"')
        if args.names:
            parts.append(" || ".join(f"Name == {quote(n)} || Machine == {quote(n)}" for n in args.names))
        parts.extend(test for flag, test in (("absent", "Absent"), ("offline", "size(OfflineUniverses) != 0"))
                     if getattr(args, flag))
        my_type = DAEMON_VIEWS[kind][0] if kind else "Machine"
        query = QueryAds(my_type, " && ".join(f"({p})" for p in parts), statistics=args.statistics)
        if args.direct:
            startd_identity(client, args.direct)  # HTCondor: Can't find address for startd NAME
        if args.direct:  # the startd of that machine or slot (one of several, docs/defrag.md)
            reply = request(client, "startd", query, startd_url(client, args.direct))
        else:
            reply = request(client, "collector", query, pool_collector(args.pool))
        ads = sorted(without_private(reply.ads if isinstance(reply, AdList) else []),
                     key=lambda a: (str(a.get("Machine", "")), _slot_order(str(a.get("Name", "")))))
        if args.sort:
            ads = sort_ads(ads, args.sort, now)
        if args.limit is not None:
            ads = ads[:max(0, args.limit)]
        width = console_width() if out.wide is None else (out.wide or None)
        try:
            text = render(ads, out, now=now, zone=local_zone(now), ids=lambda ad: str(ad.get("Name", "")))
        except OptionError as e:
            raise ToolError(str(e)) from None
        if text is not None:
            sys.stdout.write(text)
        elif pf is not None:
            sys.stdout.write(status_output(pf, ads, now=now, zone=local_zone(now)))
        elif kind is None and (args.absent or args.offline) and not args.total:
            sys.stdout.write(format_absent(ads, zone=local_zone(now), width=width) if args.absent
                             else format_offline(ads, width=width))
        elif kind is not None:
            if not args.total:
                sys.stdout.write(format_daemons(ads, DAEMON_VIEWS[kind][1], width,
                                                missing="None" if kind == "any" else "??"))
        else:
            sys.stdout.write(format_status(ads, view=_slot_view(args), now=now, zone=local_zone(now), width=width))
        return 0

    return run_tool("htcpool status", body)


def check_statistics(which: str) -> None:
    """``-statistics WHICH``: a ToolError naming what does not read in it."""
    if not which:
        return
    problems: list[str] = []
    for collection in Collection:
        parse_publish(which, collection, problems)
    if problems:
        raise ToolError(f"-statistics {which}: {problems[0]}")


def format_daemons(ads: Sequence[ClassAd], columns: Sequence[tuple[str, str, int]],
                   width: int | None = None, missing: str = "??") -> str:
    """A daemon view: headings, a blank line, one row per ad (nothing at all for no ads);
    ``missing`` stands for an attribute an ad lacks (``-any`` prints ``None``)."""
    if not ads:
        return ""
    cells = [[_cell(ad, attr, missing) for _, attr, _ in columns] for ad in ads]
    # a width of 0: left-aligned, as wide as the column's longest text (HTCondor's WIDTH AUTO)
    widths = [w or -max(len(heading), *(len(row[i]) for row in cells))
              for i, (heading, _, w) in enumerate(columns)]

    def line(texts: Sequence[str]) -> str:
        text = " ".join(c.ljust(-w) if w < 0 else c.rjust(w) for c, w in zip(texts, widths, strict=True))
        return fit_line(text, width)

    rows = [line(row) for row in cells]
    return "\n".join([line([heading for heading, _, _ in columns]), "", *rows]) + "\n"


def _cell(ad: ClassAd, attr: str, missing: str) -> str:
    """A string as it is, a number as an integer, anything else (absent, UNDEFINED) ``missing``."""
    text = lookup_str(ad, attr)
    if text is not None:
        return text
    number = lookup_int(ad, attr)
    return missing if number is None else str(number)


def _slot_order(name: str) -> tuple[int, ...]:
    """slot1 < slot1_1 < slot1_2 < slot2 …, as condor_status sorts them."""
    head = name.split("@", 1)[0].removeprefix("slot")
    return tuple(int(p) if p.isdigit() else 0 for p in head.split("_"))
