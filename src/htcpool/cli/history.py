"""``htcpool history``: condor_history.

    htcpool history [-long|-json|-jsonl|-xml|-af[:jlhVrTY,tng] ATTR...|-format FMT ATTR...]
                    [-attributes A,B] [-constraint EXPR] [-match|-limit N] [-scanlimit N]
                    [-backwards|-forwards] [-completedsince TIME] [-since JOBID|EXPR]
                    [-file FILE] [-wide[:N]] [cluster|cluster.proc|user]...

Without ``-file`` the jobs come from the schedd's history (newest first, as condor_history
prints them); ``-file FILE`` (``-f``) reads an HTCondor history file instead: ads in the old
ClassAd form, each closed by a ``*** …`` banner line, oldest first in the file. The scan runs
newest to oldest (``-forwards``: oldest to newest) and stops at ``-since`` (a job id, or an
expression that is true for the job: that job is not printed), after ``-scanlimit`` ads, or,
with ``-completedsince TIME``, at the first job that completed before TIME (epoch seconds).
``-match``/``-limit N`` prints at most N jobs. The output options are ``cli/options.py``'s.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock, quote
from htcpool.cli.common import (
    ToolError,
    check_constraint,
    check_expressions,
    connect,
    pool_collector,
    request,
    run_tool,
    without_private,
)
from htcpool.cli.formats import format_history
from htcpool.cli.formats.fields import job_id, lookup_int
from htcpool.cli.locate import pick_schedd
from htcpool.cli.options import OptionError, render, take_output_options
from htcpool.clock import local_zone, wall_clock
from htcpool.protocol import HistoryQuery, QueryAds
from htcpool.runtime.pool import PoolClient


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool history", description="Jobs that left the queue (condor_history).")
    p.add_argument("-constraint", metavar="EXPR")
    p.add_argument("-limit", "-match", type=int, default=0, metavar="N", help="at most N jobs")
    p.add_argument("-scanlimit", type=int, default=0, metavar="N", help="look at no more than N ads")
    p.add_argument("-backwards", dest="forwards", action="store_false", help="newest first (the default)")
    p.add_argument("-forwards", dest="forwards", action="store_true", help="oldest first")
    p.set_defaults(forwards=False)
    p.add_argument("-completedsince", type=int, metavar="TIME", help="stop at a job completed before TIME")
    p.add_argument("-since", metavar="JOBID|EXPR", help="stop at this job (or the first for which EXPR is true)")
    p.add_argument("-file", "-f", metavar="FILE", help="read this history file instead of the schedd's")
    p.add_argument("-name", metavar="SCHEDD", help="the history of this schedd of the pool")
    p.add_argument("-pool", metavar="HOST[:PORT]", help="the central manager whose collector -name asks")
    p.add_argument("-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("targets", nargs="*")
    return p


def read_history_file(path: str) -> list[ClassAd]:
    """The ads of an HTCondor history file, in file order (oldest first)."""
    from htcpool.classad.forms import parse_ads

    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ToolError(f"cannot read history file {path}: {e.strerror or e}") from None
    ads: list[ClassAd] = []
    block: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("***"):
            if block:
                try:
                    ads.extend(parse_ads("\n".join(block) + "\n", source=path))
                except ClassAdError as e:
                    raise ToolError(f"{path}, the ad ending at line {number}: {e}") from None
            block = []
        elif line.strip():
            block.append(line)
    return ads


def _selection(args: argparse.Namespace) -> str:
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
    return " && ".join(f"({p})" for p in parts) if len(parts) > 1 else (parts[0] if parts else "")


def _stop_test(since: str | None) -> ExprTree | None:
    if since is None:
        return None
    found = re.fullmatch(r"(\d+)(?:\.(\d+))?", since)
    if found is not None:
        c, p = found.groups()
        return ExprTree(f"ClusterId == {c}" + (f" && ProcId == {p}" if p else ""))
    try:
        return ExprTree(since)
    except ClassAdError as e:
        raise ToolError(f"-since {since!r} is neither a job id nor a ClassAd expression: {e}") from None


def scan(ads: Iterable[ClassAd], args: argparse.Namespace, now: float) -> Iterator[ClassAd]:
    """The ads to print, in scan order, after the stop rules and the selection."""
    context = EvalContext(clock=fixed_clock(now))
    selection = _selection(args)
    test = ExprTree(selection) if selection else None
    stop = _stop_test(args.since)
    printed = 0
    for scanned, ad in enumerate(ads, 1):
        if args.scanlimit and scanned > args.scanlimit:
            return
        if stop is not None and stop.evaluate(ad, context=context) is True:
            return
        completed = lookup_int(ad, "CompletionDate")
        if args.completedsince is not None and completed and completed < args.completedsince:
            return
        if test is not None and test.evaluate(ad, context=context) is not True:
            continue
        yield ad
        printed += 1
        if args.limit and printed >= args.limit:
            return


def _schedd_url(client: PoolClient, args: argparse.Namespace) -> str | None:
    """The URL of the schedd ``-name`` names, found in the collector (``-pool``'s, else the pool's
    own); None without ``-name``: this pool's schedd."""
    if not args.name:
        return None
    found = request(client, "collector", QueryAds("Scheduler", "", ("Name", "MyAddress")), pool_collector(args.pool))
    ad = pick_schedd(list(found.ads), args.name)
    if ad is None or not ad.get("MyAddress"):
        raise ToolError(f"Can't find address for schedd {args.name}")
    return str(ad["MyAddress"])


def main(argv: list[str]) -> int:
    try:
        rest, out = take_output_options(argv, f_is_format=False)
    except OptionError as e:
        print(f"htcpool history: {e}", file=sys.stderr)
        return 1
    args = _parser().parse_args(rest)

    def body() -> int:
        check_constraint(args.constraint)
        check_expressions(out.af)
        now = wall_clock()
        if args.file:
            newest_first = list(reversed(read_history_file(args.file)))
        else:
            client = connect()
            # The schedd answers newest first, the order condor_history prints in. It selects and
            # limits itself unless a stop rule or -forwards needs to see every ad.
            plain = not (args.forwards or args.since or args.scanlimit or args.completedsince is not None)
            query = HistoryQuery(_selection(args), args.limit) if plain else HistoryQuery("", 0)
            url = _schedd_url(client, args)
            reply = request(client, "schedd", query, url) if url else request(client, "schedd", query)
            newest_first = without_private(reply.ads)
        ordered = list(reversed(newest_first)) if args.forwards else newest_first
        ads = list(scan(ordered, args, now))
        try:
            text = render(ads, out, now=now, zone=local_zone(), ids=lambda ad: "%d.%d" % job_id(ad))
        except OptionError as e:
            raise ToolError(str(e)) from None
        sys.stdout.write(text if text is not None else format_history(ads, zone=local_zone()))
        return 0

    return run_tool("htcpool history", body)
