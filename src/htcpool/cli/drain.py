"""``htcpool drain``, ``vacate``, ``who``, ``reschedule``: commands for the execute side.

    htcpool drain [-graceful|-quick|-fast] [-reason TEXT] [-resume-on-completion|-exit-on-completion]
                  [-start EXPR] [-check EXPR] [-cancel [-request-id ID]] [MACHINE]
    htcpool vacate [-fast] [MACHINE]
    htcpool who
    htcpool reschedule
"""

from __future__ import annotations

import argparse
import sys
import time

from htcpool.cli.common import connect, request, run_tool
from htcpool.cli.formats import format_duration
from htcpool.protocol import DaemonCommand, Ok, QueryAds
from htcpool.startd.messages import CancelDrain, Drain


def drain(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool drain", description="Drain a machine (condor_drain).")
    how = p.add_mutually_exclusive_group()
    how.add_argument("-graceful", action="store_const", const="graceful", dest="how")
    how.add_argument("-quick", action="store_const", const="quick", dest="how")
    how.add_argument("-fast", action="store_const", const="fast", dest="how")
    p.add_argument("-reason", default="by command")
    done = p.add_mutually_exclusive_group()
    done.add_argument("-resume-on-completion", action="store_const", const="resume", dest="completion")
    done.add_argument("-exit-on-completion", action="store_const", const="exit", dest="completion")
    done.add_argument("-restart-on-completion", action="store_const", const="restart", dest="completion")
    p.add_argument("-start", metavar="EXPR", help="the START expression while draining")
    p.add_argument("-check", metavar="EXPR", help="drain only if EXPR is true for every slot")
    p.add_argument("-cancel", action="store_true", help="stop draining")
    p.add_argument("-request-id", dest="request_id")
    p.add_argument("machine", nargs="?")
    args = p.parse_args(argv)

    def body() -> int:
        client = connect()
        machine = args.machine or "this machine"
        if args.cancel:
            request(client, "startd", CancelDrain(args.request_id))
            print(f"Sent request to cancel draining on {machine}")
            return 0
        reply = request(client, "startd", Drain(args.how or "graceful", args.completion or "nothing",
                                                 args.check, args.start, args.reason))
        request_id = reply.detail if isinstance(reply, Ok) else ""
        print(f"Sent request to drain {machine}" + (f", request id {request_id}" if request_id else ""))
        return 0

    return run_tool("htcpool drain", body)


def vacate(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool vacate", description="Vacate a machine's jobs (condor_vacate).")
    p.add_argument("-fast", action="store_true")
    p.add_argument("machine", nargs="?")
    args = p.parse_args(argv)

    def body() -> int:
        client = connect()
        request(client, "startd", DaemonCommand("vacate", "fast" if args.fast else "graceful"))
        print(f"Sent \"Vacate-All-Claims\" command to startd {args.machine or client.url('startd')}")
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
        request(connect(), "schedd", DaemonCommand("reschedule"))
        print("Sent \"Reschedule\" command to local schedd")
        return 0

    return run_tool("htcpool reschedule", body)
