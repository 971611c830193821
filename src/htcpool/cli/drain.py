"""``htcpool drain``, ``vacate``, ``who``, ``reschedule``: commands for the execute side.

    htcpool drain [-graceful|-quick|-fast] [-reason TEXT]
                  [-resume-on-completion|-exit-on-completion|-restart-on-completion|-reconfig-on-completion]
                  [-start EXPR] [-check EXPR] [-verbose] [-cancel [-request-id ID]] [MACHINE]
    htcpool vacate [-fast] [MACHINE | SLOT]
    htcpool who
    htcpool reschedule

MACHINE (a startd's machine name, or one of its slots) picks the startd the command goes to
(a pool may run several, docs/defrag.md); a name no startd has ends the tool with HTCondor's
``Can't find address for startd NAME``. The reports are condor_drain's and condor_vacate's (``Sent request to drain the startd
<addr> with NAME. ...``, ``Sent "Vacate-All-Claims" command to local startd``); a refused
drain is reported as condor_drain does: ``Attempt to send DRAIN_JOBS to startd <addr> failed``
and the startd's reason on the next line.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time

from htcpool.cli.common import (
    ToolError,
    check_constraint,
    connect,
    request,
    run_tool,
    startd_identity,
    startd_url,
)
from htcpool.cli.formats import format_duration
from htcpool.protocol import Command, DaemonCommand, How, Ok, QueryAds
from htcpool.protocol.startd import CancelDrain, Drain, DrainCompletion, DrainSpeed, Vacate

#: the startd's refusal codes, in condor_drain's words
_DRAIN_REFUSALS = {
    "DRAINING_ALREADY_IN_PROGRESS": "Draining already in progress.",
    "DRAINING_CHECK_EXPR_FAILED": "Draining check expression failed",
}


def _refusal(detail: str) -> str:
    code, _, rest = detail.partition(" ")
    words = _DRAIN_REFUSALS.get(code)
    return detail if words is None else f"{words} {rest}".rstrip()


def drain(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool drain", description="Drain a machine (condor_drain).")
    how = p.add_mutually_exclusive_group()
    for speed in DrainSpeed:
        how.add_argument(f"-{speed.value}", action="store_const", const=speed, dest="how")
    p.add_argument("-reason", help="the DrainReason to advertise (default: the name of the user draining)")
    done = p.add_mutually_exclusive_group()
    for completion in (DrainCompletion.RESUME, DrainCompletion.EXIT, DrainCompletion.RESTART,
                       DrainCompletion.RECONFIG):
        done.add_argument(f"-{completion.value}-on-completion", action="store_const", const=completion,
                          dest="completion")
    p.add_argument("-start", metavar="EXPR", help="the START expression while draining")
    p.add_argument("-check", metavar="EXPR", help="drain only if EXPR is true for every slot")
    p.add_argument("-verbose", action="store_true", help="also print the drain's request id")
    p.add_argument("-cancel", action="store_true", help="stop draining")
    p.add_argument("-request-id", dest="request_id")
    p.add_argument("machine", nargs="?")
    args = p.parse_args(argv)

    def body() -> int:
        check_constraint(args.start, "-start")
        check_constraint(args.check, "-check")
        client = connect()
        name, address = startd_identity(client, args.machine)
        command = "CANCEL_DRAIN_JOBS" if args.cancel else "DRAIN_JOBS"
        message = CancelDrain(args.request_id) if args.cancel else Drain(
            args.how or DrainSpeed.GRACEFUL, args.completion or DrainCompletion.NOTHING, args.check, args.start,
            args.reason if args.reason is not None else getpass.getuser())
        try:
            reply = request(client, "startd", message, startd_url(client, args.machine))
        except ToolError as e:
            raise ToolError(f"Attempt to send {command} to startd {address} failed\n{_refusal(str(e))}") from None
        if args.cancel:
            print(f"Sent request to cancel draining on {name}")
            return 0
        print(f"Sent request to drain the startd {address} with {name}. This only affects the single "
              "startd; any other startds running on the same host will not be drained.")
        request_id = reply.detail if isinstance(reply, Ok) else ""
        if args.verbose and request_id:
            print(f"\tRequest id: {request_id}")
        return 0

    return run_tool("htcpool drain", body)


def vacate(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool vacate", description="Vacate a machine's jobs (condor_vacate).")
    p.add_argument("-fast", action="store_true")
    p.add_argument("machine", nargs="?", help="the machine (every claim) or one slot (slot1_1@host)")
    args = p.parse_args(argv)

    def body() -> int:
        client = connect()
        if args.machine is not None:
            startd_identity(client, args.machine)
        fast = "-Fast" if args.fast else ""
        if args.machine is not None and "@" in args.machine:
            request(client, "startd", Vacate(args.machine, args.fast), startd_url(client, args.machine))
            print(f'Sent "Vacate-Claim{fast}" command to startd {args.machine}')
            return 0
        request(client, "startd", DaemonCommand(Command.VACATE, How.FAST if args.fast else How.GRACEFUL),
                startd_url(client, args.machine))
        target = f"startd {args.machine}" if args.machine else "local startd"
        print(f'Sent "Vacate-All-Claims{fast}" command to {target}')
        return 0

    return run_tool("htcpool vacate", body)


def who(argv: list[str]) -> int:
    """condor_who: the jobs running on this machine's slots."""
    def body() -> int:
        client = connect()
        slots = request(client, "startd", QueryAds("Machine", 'State == "Claimed"')).ads
        now = time.time()
        print("OWNER" + " " * 21 + "CLIENT" + " " * 10 + "SLOT JOB" + " " * 8 + "RUNTIME")
        for s in sorted(slots, key=lambda a: str(a.get("Name"))):
            started = s.get("JobStart")
            runtime = format_duration(now - started) if isinstance(started, int | float) else ""
            owner = str(s.get("RemoteOwner", s.get("RemoteUser", "")))
            client_host = str(s.get("ClientMachine", "localhost"))
            slot = str(s.get("Name", "")).split("@")[0].removeprefix("slot")
            sys.stdout.write(f"{owner:<25} {client_host:<15} {slot:>4} {str(s.get('JobId', '')):<11} "
                             f"{runtime}\n")
        return 0

    return run_tool("htcpool who", body)


def reschedule(argv: list[str]) -> int:
    def body() -> int:
        request(connect(), "schedd", DaemonCommand(Command.RESCHEDULE))
        print("Sent \"Reschedule\" command to local schedd")
        return 0

    return run_tool("htcpool reschedule", body)
