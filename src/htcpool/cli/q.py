"""``htcpool q``: condor_q.

    htcpool q [-nobatch|-batch] [-run|-hold|-idle|-totals|-io|-autocluster|-dag]
              [-long|-json|-xml|-af[:jlhVrTY,tng] ATTR...|-format FMT ATTR...] [-attributes A,B]
              [-constraint EXPR] [-limit N] [-wide[:N]] [-cputime|-currentrun]
              [-global] [-submitter NAME] [-name SCHEDD] [-jobads FILE]
              [-better-analyze JOB] [-allusers] [cluster|cluster.proc|user]...

Without arguments it shows the current user's jobs (``-allusers``: everyone's), in
HTCondor 25's batch view; the other views and formats print as condor_q does (the output
options are ``cli/options.py``'s). ``-jobads FILE`` reads the job ads from FILE instead of
asking the schedd; ``-global`` and ``-name`` address the pool's one schedd (a name that is
not its name is an error); ``-submitter NAME`` shows NAME's jobs; ``-limit N`` at most N
jobs; ``-wide`` never cuts lines to the terminal.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from htcpool.classad import ClassAd, ClassAdError, quote
from htcpool.cli.common import (
    ToolError,
    check_constraint,
    check_expressions,
    connect,
    console_width,
    request,
    run_tool,
    schedd_identity,
    user,
    without_private,
)
from htcpool.cli.formats import format_better_analyze, format_queue
from htcpool.cli.formats.fields import job_id
from htcpool.cli.formats.qviews import dag_order, format_autocluster, format_io
from htcpool.cli.options import OptionError, Output, render, take_output_options
from htcpool.clock import local_zone
from htcpool.protocol import QueryAds, QueueQuery
from htcpool.runtime.pool import PoolClient


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool q", description="Show the job queue (condor_q).")
    p.add_argument("-nobatch", action="store_true", help="one line per job")
    p.add_argument("-batch", action="store_true", help="one line per batch (the default)")
    p.add_argument("-run", action="store_true", help="running jobs and where they run")
    p.add_argument("-hold", action="store_true", help="held jobs and why")
    p.add_argument("-idle", action="store_true", help="idle jobs only")
    p.add_argument("-totals", action="store_true", help="only the totals")
    p.add_argument("-io", action="store_true", help="file transfer: bytes in and out")
    p.add_argument("-autocluster", action="store_true", help="jobs grouped by what they ask of a slot")
    p.add_argument("-dag", action="store_true", help="DAG node jobs under their DAGMan job")
    p.add_argument("-cputime", action="store_true", help="CPU_TIME instead of RUN_TIME")
    p.add_argument("-currentrun", action="store_true", help="the current run's time only")
    p.add_argument("-constraint", metavar="EXPR", help="only jobs for which EXPR is true")
    p.add_argument("-limit", type=int, metavar="N", help="at most N jobs")
    p.add_argument("-better-analyze", "-analyze", dest="analyze", metavar="JOB",
                   help="explain why a job does or does not match the slots")
    p.add_argument("-allusers", "-all", action="store_true", help="every user's jobs")
    p.add_argument("-global", dest="global_", action="store_true", help="every schedd of the pool (it has one)")
    p.add_argument("-submitter", metavar="NAME", help="the jobs of submitter NAME")
    p.add_argument("-name", metavar="SCHEDD", help="the schedd named SCHEDD")
    p.add_argument("-pool", metavar="HOST", help="(one pool: accepted for HTCondor's sake)")
    p.add_argument("-jobads", metavar="FILE", help="read job ads from FILE instead of the schedd")
    p.add_argument("-stream-results", action="store_true", help="(accepted: results are printed at once)")
    p.add_argument("-expert", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("targets", nargs="*", help="clusters, cluster.proc job ids or users")
    return p


_JOB_OR_CLUSTER = re.compile(r"(\d+)(?:\.(\d+))?")


def _job_id(text: str) -> tuple[int, int]:
    """``-better-analyze``'s job: ``cluster.proc`` (``cluster`` alone means proc 0)."""
    found = _JOB_OR_CLUSTER.fullmatch(text)
    if found is None:
        raise ToolError(f"-better-analyze needs a job id (cluster.proc), not {text!r}")
    return int(found.group(1)), int(found.group(2) or 0)


def _constraint(args: argparse.Namespace) -> str:
    parts = []
    picks = []
    for t in args.targets:
        found = _JOB_OR_CLUSTER.fullmatch(t)
        if found is not None:
            c, p = found.groups()
            picks.append(f"ClusterId == {c}" + (f" && ProcId == {p}" if p else ""))
        else:
            picks.append(f"Owner == {quote(t)}")
    if args.submitter:
        name = args.submitter
        picks.append(f"Owner == {quote(name)} || User == {quote(name)} || AccountingGroup == {quote(name)}")
    if picks:
        parts.append(" || ".join(f"({p})" for p in picks))
    elif not args.allusers and not args.analyze:
        parts.append(f"Owner == {quote(user())}")
    if args.constraint:
        parts.append(f"({args.constraint})")
    for flag, status in (("run", 2), ("hold", 5), ("idle", 1)):
        if getattr(args, flag):
            parts.append(f"JobStatus == {status}")
    return " && ".join(parts)


def _read_jobads(path: str, constraint: str, now: int) -> list[ClassAd]:
    from htcpool.classad import EvalContext, ExprTree, fixed_clock
    from htcpool.classad.forms import parse_ads

    try:
        ads = list(parse_ads(Path(path).read_text(), source=path))
    except OSError as e:
        raise ToolError(f"cannot read -jobads file {path}: {e.strerror or e}") from None
    except ClassAdError as e:
        raise ToolError(f"-jobads {path}: {e}") from None
    test = ExprTree(constraint) if constraint else None
    context = EvalContext(clock=fixed_clock(now))
    return [ad for ad in ads if test is None or test.evaluate(ad, context=context) is True]


def _view(args: argparse.Namespace) -> str:
    return ("totals" if args.totals else "run" if args.run else "hold" if args.hold
            else "nobatch" if args.nobatch or args.dag or args.cputime or args.currentrun or args.idle
            else "batch")


def main(argv: list[str]) -> int:
    def body() -> int:
        try:
            rest, out = take_output_options(argv)
        except OptionError as e:
            raise ToolError(str(e)) from None
        args = _parser().parse_args(rest)
        check_constraint(args.constraint)
        check_expressions(out.af)
        now = int(time.time())
        if args.jobads:
            selected = _read_jobads(args.jobads, _constraint(args), now)
            name, address = "jobads file " + args.jobads, ""
            everything = selected
            client = None
        else:
            client = connect()
            name = address = ""
            if args.name:
                name, address = schedd_identity(client)
                if args.name not in (name, name.partition("@")[2]):
                    raise ToolError(f"Can't find address for schedd {args.name}")
            if args.analyze:
                name, address = schedd_identity(client)
                return _analyze(client, args, now, name, address)
            selected = without_private(request(client, "schedd", QueueQuery(_constraint(args))).ads)
            everything = []
        if args.limit is not None:
            selected = sorted(selected, key=job_id)[:max(0, args.limit)]
        return _print(args, out, selected, everything, client, name, address, now)

    return run_tool("htcpool q", body)


def _analyze(client: PoolClient, args: argparse.Namespace, now: int, name: str, address: str) -> int:
    job = _job_id(args.analyze)
    jobs = request(client, "schedd", QueueQuery(f"ClusterId == {job[0]} && ProcId == {job[1]}")).ads
    if not jobs:
        raise ToolError(f"job {args.analyze} is not in the queue")
    slots = request(client, "collector", QueryAds("Machine")).ads
    sys.stdout.write(format_better_analyze(jobs[0], list(slots), schedd_name=name, schedd_address=address, now=now))
    return 0


def _print(args: argparse.Namespace, out: Output, selected: list[ClassAd], everything: list[ClassAd],
           client: PoolClient | None, name: str, address: str, now: int) -> int:
    zone = local_zone(now)
    text = render(selected, out, now=now, zone=zone, ids=lambda ad: "%d.%d" % job_id(ad))
    if text is not None:
        sys.stdout.write(text)
        return 0
    if args.io:
        sys.stdout.write(format_io(selected, now))
        return 0
    if args.autocluster:
        sys.stdout.write(format_autocluster(selected))
        return 0
    if client is not None:
        everything = list(request(client, "schedd", QueueQuery()).ads)
        name, address = schedd_identity(client)
    width = None if out.wide is not None else console_width()
    if out.wide:
        width = out.wide
    rows = dag_order(selected) if args.dag else selected
    sys.stdout.write(format_queue(rows, now=now, schedd_name=name, schedd_address=address, view=_view(args),
                                  all_jobs=everything, zone=zone, width=width,
                                  owner_heading="OWNER/NODENAME" if args.dag else "OWNER",
                                  time_kind="cpu" if args.cputime else "current" if args.currentrun else "run",
                                  ordered_as_given=args.dag))
    return 0
