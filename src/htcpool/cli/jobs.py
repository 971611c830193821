"""``htcpool hold|release|rm|vacate_job|suspend|continue|prio``: condor_hold, condor_release,
condor_rm, condor_vacate_job, condor_suspend, condor_continue and condor_prio.

    htcpool hold [-reason TEXT] [-constraint EXPR] [-all] [cluster|cluster.proc|user]...
    htcpool prio {+N|-N|-p N} [-a] [cluster|cluster.proc|user]...

Each job id is reported on its own line (``Job 2.1 held``, ``Job 2.1 already held``,
``Job 2.1 not found``); a cluster or user as a whole (``All jobs in cluster 3 have been
marked for removal``), as HTCondor's tools do. The schedd's reason for each job it did
not act on is turned into that one line, never printed a second time. condor_prio is
silent when it succeeds and says ``Couldn't retrieve current priority for 99.0.`` for a
job that is not there.
"""

from __future__ import annotations

import argparse
import re
import sys

from htcpool.cli.common import ToolError, check_constraint, connect, request, run_tool, user
from htcpool.cli.formats import (
    NO_JOBS_SPECIFIED,
    PRIO_NO_PRIORITY,
    format_job_result,
    format_prio_error,
    format_selection_result,
)
from htcpool.protocol import ActionResult, JobAction, JobActionKind

_JOB = re.compile(r"^\d+\.\d+$")
_CLUSTER = re.compile(r"^\d+$")
#: tool name -> (schedd action, formats' action name)
TOOLS = {"hold": (JobActionKind.HOLD, "hold"), "release": (JobActionKind.RELEASE, "release"),
         "rm": (JobActionKind.REMOVE, "remove"), "vacate_job": (JobActionKind.VACATE, "vacate"),
         "suspend": (JobActionKind.SUSPEND, "suspend"), "continue": (JobActionKind.CONTINUE, "continue")}
#: the state a job is already in when an action has nothing left to do (condor_hold of a held job)
_DONE_STATE = {JobActionKind.HOLD: "Held", JobActionKind.REMOVE: "Removed",
               JobActionKind.SUSPEND: "Suspended", JobActionKind.CONTINUE: "Running"}
_STATE_REFUSAL = re.compile(r"cannot \w+ a job that is (.+)$")


def job_result(action: JobActionKind, errors: tuple[str, ...]) -> str:
    """The formats' result for one job id the schedd did not act on, from its error messages."""
    for error in errors:
        if "not found" in error:
            return "not-found"
        if "may not" in error:
            return "permission-denied"
        refused = _STATE_REFUSAL.search(error)
        if refused is not None and refused.group(1) == _DONE_STATE.get(action):
            return "already-done"
    return "bad-status"


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
        check_constraint(args.constraint)
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
                    print(format_job_result(wording, cluster, proc, job_result(action, reply.errors)))
                    status = 1
            else:
                picked: list[int | str] = [int(target)] if _CLUSTER.match(target) else [target] if target else []
                line = format_selection_result(wording, picked, constraint or None, args.all and not target,
                                               succeeded=bool(reply.done))
                print(line)
                if not reply.done:
                    status = 1
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


def suspend(argv: list[str]) -> int:
    """condor_suspend: the schedd asks the job's startd to stop it (SIGSTOP); JobStatus 7."""
    return _act("suspend", argv)


def continue_(argv: list[str]) -> int:
    """condor_continue: resume a suspended job (SIGCONT)."""
    return _act("continue", argv)


def prio(argv: list[str]) -> int:
    """condor_prio: ``+N``/``-N`` adjust, ``-p N`` sets; then jobs, clusters, users or ``-a``.

    As condor_prio parses it, a bare number is a cluster, so ``prio 20 2.0`` names two jobs and
    no priority (the usage error, status 1)."""
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
        status = 0
        for target in targets or [me]:
            reply = request(client, "schedd", JobAction(JobActionKind.PRIO, me, (target,), "", "", value, relative))
            if reply.done:
                continue
            status = 1
            if _JOB.match(target):
                print(f"Couldn't retrieve current priority for {target}.", file=sys.stderr)
            else:
                for e in reply.errors:
                    print(e, file=sys.stderr)
        return status

    return run_tool("htcpool prio", body)


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
