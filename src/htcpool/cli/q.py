"""``htcpool q``: condor_q.

    htcpool q [-nobatch|-batch] [-run|-hold|-idle|-totals|-io|-autocluster|-dag|-factory]
              [-long|-json|-xml|-af[:jlhVrTY,tng] ATTR...|-format FMT ATTR...] [-attributes A,B]
              [-constraint EXPR] [-limit N] [-wide[:N]] [-cputime|-currentrun]
              [-global] [-submitter NAME] [-name SCHEDD] [-jobads FILE] [-userlog FILE] [-pr FILE]
              [-better-analyze JOB] [-allusers] [cluster|cluster.proc|user]...

Without arguments it shows the current user's jobs (``-allusers``: everyone's), in
HTCondor 25's batch view; the other views and formats print as condor_q does (the output
options are ``cli/options.py``'s). ``-jobads FILE`` reads the job ads from FILE instead of
asking the schedd; ``-name SCHEDD`` asks the schedd of that name (its whole name, or the part
before or after its ``@``), ``-global`` every schedd of the pool, one table each; ``-submitter NAME`` shows NAME's jobs; ``-limit N`` at most N
jobs; ``-wide`` never cuts lines to the terminal. ``-factory`` shows the late-materialization
factories' cluster ads instead of the jobs (``-long``, ``-af`` and the other formats print them).
``-userlog FILE`` shows the jobs a user log tells of (``formats/userlog_jobs.py``), no pool needed.
``-print-format FILE`` (``-pr``) prints with the columns of a print-format file
(``formats/printformat.py``).
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
    pool_collector,
    request,
    run_tool,
    schedd_identity,
    user,
    without_private,
)
from htcpool.cli.formats import format_better_analyze, format_queue
from htcpool.cli.formats.factories import format_factories
from htcpool.cli.formats.fields import format_stamp, job_id, summarize_address
from htcpool.cli.formats.qviews import dag_order, format_autocluster, format_io
from htcpool.cli.locate import pick_schedd
from htcpool.cli.options import OptionError, Output, render, take_output_options
from htcpool.cli.qfast import totals_text
from htcpool.clock import local_zone
from htcpool.protocol import QueryAds, QueueQuery
from htcpool.protocol.schedd import QueueTotals
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
    p.add_argument("-factory", action="store_true", help="the late-materialization factories (cluster ads)")
    p.add_argument("-cputime", action="store_true", help="CPU_TIME instead of RUN_TIME")
    p.add_argument("-currentrun", action="store_true", help="the current run's time only")
    p.add_argument("-constraint", metavar="EXPR", help="only jobs for which EXPR is true")
    p.add_argument("-limit", type=int, metavar="N", help="at most N jobs")
    p.add_argument("-better-analyze", "-analyze", dest="analyze", metavar="JOB",
                   help="explain why a job does or does not match the slots")
    p.add_argument("-allusers", "-all", action="store_true", help="every user's jobs")
    p.add_argument("-global", dest="global_", action="store_true", help="every schedd of the pool")
    p.add_argument("-submitter", metavar="NAME", help="the jobs of submitter NAME")
    p.add_argument("-name", metavar="SCHEDD", help="the schedd named SCHEDD")
    p.add_argument("-pool", metavar="HOST[:PORT]", help="the central manager whose collector -name and -global ask")
    p.add_argument("-jobads", metavar="FILE", help="read job ads from FILE instead of the schedd")
    p.add_argument("-userlog", metavar="FILE", help="show the jobs the user log FILE tells of")
    p.add_argument("-print-format", "-pr", dest="print_format", metavar="FILE",
                   help="print with the columns of print-format FILE")
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


def _read_userlog(path: str, constraint: str, now: int) -> list[ClassAd]:
    from htcpool.classad import EvalContext, ExprTree, fixed_clock
    from htcpool.cli.formats.userlog_jobs import jobs_from_userlog

    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise ToolError(f"cannot read -userlog file {path}: {e.strerror or e}") from None
    ads = jobs_from_userlog(text, path=path, owner=user(), zone=local_zone(now), now=now)
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
        if args.userlog:
            selected = _read_userlog(args.userlog, _constraint(args), now)
            name, address, everything, client = "", "", selected, None
        elif args.jobads:
            selected = _read_jobads(args.jobads, _constraint(args), now)
            if args.factory:  # cluster ads have no ProcId
                selected = [ad for ad in selected if "ProcId" not in ad]
            name, address = "jobads file " + args.jobads, ""
            everything = selected
            client = None
        else:
            client = connect()
            status = 0
            for name, address, url in _schedds(client, args):
                status = max(status, _from_schedd(client, args, out, now, name, address, url))
            return status
        if args.limit is not None:
            selected = sorted(selected, key=job_id)[:max(0, args.limit)]
        return _print(args, out, selected, everything, client, name, address, now)

    return run_tool("htcpool q", body)


def _schedds(client: PoolClient, args: argparse.Namespace) -> list[tuple[str, str, str | None]]:
    """The schedds to ask, each as (name, address, URL): the pool's own (URL None: its socket),
    the one ``-name`` names, or with ``-global`` every schedd the collector knows."""
    if not args.name and not args.global_:
        return [("", "", None)]  # the pool's own, named only where the output shows it (_named)
    ads = list(request(client, "collector", QueryAds("Scheduler", "", ("Name", "ScheddIpAddr", "MyAddress")),
                       pool_collector(args.pool)).ads)
    if args.name:
        ad = pick_schedd(ads, args.name)
        if ad is None:
            raise ToolError(f"Can't find address for schedd {args.name}")
        ads = [ad]
    if not ads:  # none advertised yet: the pool's own
        name, address = schedd_identity(client)
        return [(name, address, None)]
    return [(str(ad.get("Name", "")), str(ad.get("ScheddIpAddr", "")), str(ad.get("MyAddress", "")) or None)
            for ad in ads]


def _from_schedd(client: PoolClient, args: argparse.Namespace, out: Output, now: int, name: str, address: str,
                 url: str | None) -> int:
    """Ask one schedd (at ``url``; None: the pool's own) and print its jobs."""
    if args.analyze:
        return _analyze(client, args, now, *_named(client, name, address), url)
    if _counts_suffice(args, out):  # -totals: the schedd counts, no ads travel
        counts = request(client, "schedd", QueueTotals(_constraint(args)), url)
        if not name:
            name, address = counts.schedd_name, counts.schedd_address
        sys.stdout.write(totals_text(counts.selected, counts.everything, schedd_name=name, schedd_address=address,
                                     now=now, zone=local_zone(now)))
        return 0
    query = QueueQuery(_constraint(args), clusters=args.factory)
    selected = without_private(request(client, "schedd", query, url).ads)
    if args.limit is not None:
        selected = sorted(selected, key=job_id)[:max(0, args.limit)]
    return _print(args, out, selected, [], client, name, address, now, url)


def _named(client: PoolClient | None, name: str, address: str) -> tuple[str, str]:
    """The schedd's name and address: as given, or the pool's own schedd's when none was."""
    if name or client is None:
        return name, address
    return schedd_identity(client)


def _counts_suffice(args: argparse.Namespace, out: Output) -> bool:
    """A ``-totals`` that prints only the summary lines: the schedd's counts will do."""
    return bool(args.totals and not out.chosen and args.limit is None
                and not (args.factory or args.io or args.autocluster or args.dag))


def _analyze(client: PoolClient, args: argparse.Namespace, now: int, name: str, address: str,
             url: str | None = None) -> int:
    job = _job_id(args.analyze)
    jobs = request(client, "schedd", QueueQuery(f"ClusterId == {job[0]} && ProcId == {job[1]}"), url).ads
    if not jobs:
        raise ToolError(f"job {args.analyze} is not in the queue")
    slots = request(client, "collector", QueryAds("Machine")).ads
    sys.stdout.write(format_better_analyze(jobs[0], list(slots), schedd_name=name, schedd_address=address, now=now))
    return 0


def _print_formatted(args: argparse.Namespace, selected: list[ClassAd], everything: list[ClassAd],
                     client: PoolClient | None, name: str, address: str, now: int, url: str | None) -> int:
    from htcpool.cli.formats.printformat import PrintFormatError
    from htcpool.cli.formats.printformat_output import load_print_format, queue_output

    try:
        pf = load_print_format(args.print_format)
    except PrintFormatError as e:
        raise ToolError(str(e)) from None
    zone = local_zone(now)
    if client is not None:
        everything = list(request(client, "schedd", QueueQuery(), url).ads)
    source = f"Userlog: {args.userlog}" if args.userlog else f"Schedd: {name} : {summarize_address(address)}"
    title = f"-- {source} @ {format_stamp(now, zone)}"
    sys.stdout.write(queue_output(pf, selected, everything, title=title, now=now, zone=zone))
    return 0


def _print(args: argparse.Namespace, out: Output, selected: list[ClassAd], everything: list[ClassAd],
           client: PoolClient | None, name: str, address: str, now: int, url: str | None = None) -> int:
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
    name, address = _named(client, name, address)
    if args.print_format:
        return _print_formatted(args, selected, everything, client, name, address, now, url)
    if args.factory:
        sys.stdout.write(format_factories(selected, schedd_name=name, schedd_address=address, now=now, zone=zone))
        return 0
    if client is not None:
        everything = list(request(client, "schedd", QueueQuery(), url).ads)
    width = None if out.wide is not None else console_width()
    if out.wide:
        width = out.wide
    rows = dag_order(selected) if args.dag else selected
    table = format_queue(rows, now=now, schedd_name=name, schedd_address=address, view=_view(args),
                         all_jobs=everything, zone=zone, width=width,
                         owner_heading="OWNER/NODENAME" if args.dag else "OWNER",
                         time_kind="cpu" if args.cputime else "current" if args.currentrun else "run",
                         ordered_as_given=args.dag)
    if args.userlog:  # the source line names the log, as condor_q's does
        blank, _, rest = table.partition("-- Schedd: ")
        table = blank + f"-- Userlog: {args.userlog} @ {format_stamp(now, zone)}\n" + rest.partition("\n")[2]
    sys.stdout.write(table)
    return 0
