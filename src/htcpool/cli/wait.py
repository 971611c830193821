"""``htcpool wait``: condor_wait, waiting on a user log for jobs to finish.

    htcpool wait [-status] [-echo] [-wait SECONDS] [-num N] LOG-FILE [cluster[.proc[.subproc]]]

Follows LOG-FILE as it grows (the events are read by ``userlog``) until every job it names
(or the one job, or the cluster, given) has terminated or been aborted, then prints
``All jobs done.`` and exits 0; with ``-num N`` it stops once N jobs have finished
(``Specified number of jobs (N) done.``). ``-wait SECONDS`` gives up after that long:
``Time expired.`` and exit 1. A log that cannot be read: ``Couldn't open log file …``, exit 1.
``-status`` reports each job's progress (``1.0.0 submitted``, ``… executing``, ``… completed``);
``-echo`` prints each event as it is read. A job that is not in the log yet is waited for.
"""

from __future__ import annotations

import argparse
import sys
import time

from htcpool.cli.userlog import WaitState, WaitTracker, parse_events, parse_job, status_line

POLL_SECONDS = 0.2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="condor_wait", description="Wait for jobs of a user log to finish.")
    p.add_argument("-status", action="store_true", help="report each job's progress")
    p.add_argument("-echo", action="store_true", help="print each event as it is read")
    p.add_argument("-wait", type=float, metavar="SECONDS", help="give up after SECONDS")
    p.add_argument("-num", type=int, metavar="N", help="stop once N jobs have finished")
    p.add_argument("-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("log", help="the user log to follow")
    p.add_argument("job", nargs="?", help="cluster, cluster.proc or cluster.proc.subproc")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        job = parse_job(args.job) if args.job else None
    except ValueError as e:
        print(f"condor_wait: {e}", file=sys.stderr)
        return 1
    if args.num is not None and args.num < 1:
        print("condor_wait: -num needs a positive number", file=sys.stderr)
        return 1
    tracker = WaitTracker(job, args.num)
    deadline = None if args.wait is None else time.monotonic() + args.wait
    offset = 0
    while True:
        try:
            with open(args.log, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except OSError as e:
            print(f"Couldn't open log file {args.log}: {e.strerror or e}", file=sys.stderr)
            return 1
        whole_lines = chunk[:chunk.rfind(b"\n") + 1]
        text = whole_lines.decode("utf-8", errors="surrogateescape")  # round-trips any byte
        events, used = parse_events(text)
        offset += len(text[:used].encode("utf-8", errors="surrogateescape"))
        for event in events:
            tracker.take(event)
            if args.echo:
                sys.stdout.write(event.text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            if args.status and tracker.wanted(event):
                line = status_line(event)
                if line:
                    print(line)
            if tracker.state is not WaitState.WAITING:
                break
        state = tracker.state
        if state is WaitState.ALL_DONE:
            print("All jobs done.")
            return 0
        if state is WaitState.NUMBER_DONE:
            print(f"Specified number of jobs ({args.num}) done.")
            return 0
        if deadline is not None and time.monotonic() >= deadline:
            print("Time expired.")
            return 1
        time.sleep(POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - time.monotonic())))
