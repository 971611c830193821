"""``htcpool q``: condor_q.

    htcpool q [-nobatch] [-run] [-hold] [-totals] [-long] [-json] [-af ATTR...]
              [-constraint EXPR] [-better-analyze JOB] [-allusers] [cluster|cluster.proc|user]...

Without arguments it shows the current user's jobs (``-allusers``: everyone's), in
HTCondor 25's batch view; the other views and formats print as condor_q does.
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from htcpool.classad import quote
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
from htcpool.cli.formats import (
    format_autoformat,
    format_better_analyze,
    format_json,
    format_long,
    format_queue,
)
from htcpool.clock import local_zone
from htcpool.protocol import QueryAds, QueueQuery


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool q", description="Show the job queue (condor_q).")
    p.add_argument("-nobatch", action="store_true", help="one line per job")
    p.add_argument("-batch", action="store_true", help="one line per batch (the default)")
    p.add_argument("-run", action="store_true", help="running jobs and where they run")
    p.add_argument("-hold", action="store_true", help="held jobs and why")
    p.add_argument("-totals", action="store_true", help="only the totals")
    p.add_argument("-long", "-l", action="store_true", help="whole job ads")
    p.add_argument("-json", action="store_true", help="job ads as JSON")
    p.add_argument("-af", "-autoformat", nargs="+", metavar="ATTR", help="these attributes, one job a line")
    p.add_argument("-constraint", metavar="EXPR", help="only jobs for which EXPR is true")
    p.add_argument("-better-analyze", "-analyze", dest="analyze", metavar="JOB",
                   help="explain why a job does or does not match the slots")
    p.add_argument("-allusers", "-all", action="store_true", help="every user's jobs")
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
    if picks:
        parts.append(" || ".join(f"({p})" for p in picks))
    elif not args.allusers and not args.analyze:
        parts.append(f"Owner == {quote(user())}")
    if args.constraint:
        parts.append(f"({args.constraint})")
    if args.run:
        parts.append("JobStatus == 2")
    if args.hold:
        parts.append("JobStatus == 5")
    return " && ".join(parts)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        check_constraint(args.constraint)
        check_expressions(args.af)
        job = _job_id(args.analyze) if args.analyze else None
        client = connect()
        now = int(time.time())
        if job is not None:
            jobs = request(client, "schedd", QueueQuery(f"ClusterId == {job[0]} && ProcId == {job[1]}")).ads
            if not jobs:
                raise ToolError(f"job {args.analyze} is not in the queue")
            slots = request(client, "collector", QueryAds("Machine")).ads
            name, address = schedd_identity(client)
            sys.stdout.write(format_better_analyze(jobs[0], list(slots), schedd_name=name,
                                                   schedd_address=address, now=now))
            return 0
        selected = without_private(request(client, "schedd", QueueQuery(_constraint(args))).ads)
        if args.af:
            sys.stdout.write(format_autoformat(selected, args.af, now=now))
            return 0
        if args.long:
            sys.stdout.write(format_long(selected))
            return 0
        if args.json:
            sys.stdout.write(format_json(selected))
            return 0
        everything = list(request(client, "schedd", QueueQuery()).ads)
        view = ("totals" if args.totals else "run" if args.run else "hold" if args.hold
                else "nobatch" if args.nobatch else "batch")
        name, address = schedd_identity(client)
        sys.stdout.write(format_queue(selected, now=now, schedd_name=name, schedd_address=address,
                                      view=view, all_jobs=everything, zone=local_zone(now),
                                      width=console_width()))
        return 0

    return run_tool("htcpool q", body)
