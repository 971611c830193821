"""``htcpool hold|release|rm|vacate_job|prio``: condor_hold, condor_release, condor_rm,
condor_vacate_job and condor_prio.

    htcpool hold [-reason TEXT] [-constraint EXPR] [-all] [cluster|cluster.proc|user]...
    htcpool prio {+N|-N|-p N} [-a] [cluster|cluster.proc|user]...

Each job id is reported on its own line (``Job 2.1 held``); a cluster or user as a
whole (``All jobs in cluster 3 have been marked for removal``), as HTCondor's tools do.
"""

from __future__ import annotations

import argparse
import re
import sys

from htcpool.cli.common import ToolError, connect, request, run_tool, user
from htcpool.cli.formats import (
    NO_JOBS_SPECIFIED,
    PRIO_NO_PRIORITY,
    format_job_result,
    format_prio_error,
    format_selection_result,
)
from htcpool.protocol import ActionResult, JobAction

_JOB = re.compile(r"^\d+\.\d+$")
_CLUSTER = re.compile(r"^\d+$")
#: tool name -> (schedd action, formats' action name)
TOOLS = {"hold": ("hold", "hold"), "release": ("release", "release"), "rm": ("remove", "remove"),
         "vacate_job": ("vacate", "vacate")}


def _act(tool: str, argv: list[str]) -> int:
    action, wording = TOOLS[tool]
    p = argparse.ArgumentParser(prog=f"htcpool {tool}", description=f"condor_{tool}")
    p.add_argument("-reason", help="why (shown in the job's HoldReason / RemoveReason)")
    p.add_argument("-constraint", metavar="EXPR", help="every job for which EXPR is true")
    p.add_argument("-all", action="store_true", help="all of your jobs")
    p.add_argument("-fast", action="store_true", help="(vacate_job) kill at once")
    p.add_argument("targets", nargs="*")
    args = p.parse_args(argv)

    def body() -> int:
        if not args.targets and not args.constraint and not args.all:
            raise ToolError(NO_JOBS_SPECIFIED)
        client = connect()
        status = 0
        me = user()
        groups: list[tuple[str, tuple[str, ...], str]] = []
        for t in args.targets:
            groups.append((t, (t,), ""))
        if args.constraint:
            groups.append(("", (), args.constraint))
        if args.all:
            groups.append(("", (me,), ""))
        for target, targets, constraint in groups:
            reply = request(client, "schedd", JobAction(action, me, targets, constraint, args.reason or ""))
            assert isinstance(reply, ActionResult)
            if _JOB.match(target):
                cluster, proc = (int(x) for x in target.split("."))
                if reply.done:
                    print(format_job_result(wording, cluster, proc))
                else:
                    result = "not-found" if any("not found" in e for e in reply.errors) else "bad-status"
                    if any("may not" in e for e in reply.errors):
                        result = "permission-denied"
                    print(format_job_result(wording, cluster, proc, result))
                    status = 1
            else:
                picked: list[int | str] = [int(target)] if _CLUSTER.match(target) else [target] if target else []
                line = format_selection_result(wording, picked, constraint or None, args.all and not target,
                                               succeeded=bool(reply.done))
                print(line)
                if not reply.done:
                    status = 1
            for e in reply.errors:
                if "not found" not in e:
                    print(e, file=sys.stderr)
        return status

    return run_tool(f"htcpool {tool}", body)


def hold(argv: list[str]) -> int:
    return _act("hold", argv)


def release(argv: list[str]) -> int:
    return _act("release", argv)


def rm(argv: list[str]) -> int:
    return _act("rm", argv)


def vacate_job(argv: list[str]) -> int:
    return _act("vacate_job", argv)


def prio(argv: list[str]) -> int:
    """condor_prio: ``+N``/``-N`` adjust, ``-p N`` sets; then jobs, clusters, users or ``-a``."""
    value: int | None = None
    relative = False
    targets: list[str] = []
    all_jobs = False
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-p" and i + 1 < len(argv):
            value, relative = _int(argv[i + 1]), False
            i += 2
            continue
        if word == "-a":
            all_jobs = True
        elif re.fullmatch(r"[+-]\d+", word):
            value, relative = int(word), True
        else:
            targets.append(word)
        i += 1
    if value is None:
        sys.stderr.write(format_prio_error(PRIO_NO_PRIORITY))
        return 1
    if not targets and not all_jobs:
        sys.stderr.write(format_prio_error(NO_JOBS_SPECIFIED))
        return 1

    def body() -> int:
        client = connect()
        me = user()
        picks = tuple(targets) if targets else (me,)
        reply = request(client, "schedd", JobAction("prio", me, picks, "", "", value, relative))
        for e in reply.errors:
            print(e, file=sys.stderr)
        return 0 if reply.done else 1

    return run_tool("htcpool prio", body)


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
