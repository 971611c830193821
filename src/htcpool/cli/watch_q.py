"""``htcpool watch_q``: condor_watch_q, the jobs' progress batch by batch, kept up to date.

    htcpool watch_q [-users USER...] [-clusters ID...] [-groupby batch|cluster]
                    [-exit GROUPER,STATUS[,EXIT_STATUS]] [-no-progress] [-no-summary]
                    [-no-updated-at] [-refresh SECONDS] [-once]

Watches the user's jobs (``-users``: those users'; ``-clusters``: those clusters) and
clusters submitted while it runs. On a terminal the view (``formats/watch.py``) is redrawn
in place with rich; to a pipe or file it is printed again whenever it changes. ``-exit
all,done`` (``any,held``, ``none,active`` …) ends the watch when that holds, with
EXIT_STATUS (default 0); ``-once`` prints the view once and exits (htcpool's, for scripts).
A job that has left the queue counts as done.
"""

from __future__ import annotations

import argparse
import sys
import time

from htcpool.classad import quote
from htcpool.cli.common import ToolError, connect, request, run_tool, user
from htcpool.cli.formats.watch import (
    GROUPERS,
    STATUSES,
    Tracker,
    exit_reached,
    format_watch,
    groups,
)
from htcpool.clock import local_zone
from htcpool.protocol import QueueQuery


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="condor_watch_q", description="Watch jobs' progress.")
    p.add_argument("-users", nargs="+", metavar="USER", help="these users' jobs (default: yours)")
    p.add_argument("-clusters", nargs="+", type=int, metavar="ID", help="these clusters")
    p.add_argument("-groupby", choices=("batch", "cluster"), default="batch", help="one row per …")
    p.add_argument("-exit", metavar="GROUPER,STATUS[,EXIT_STATUS]", help="stop when this holds")
    p.add_argument("-no-progress", dest="progress", action="store_false", help="no progress bars")
    p.add_argument("-progress", dest="progress", action="store_true")
    p.add_argument("-no-summary", dest="summary", action="store_false", help="no totals line")
    p.add_argument("-summary", dest="summary", action="store_true")
    p.add_argument("-no-updated-at", dest="updated_at", action="store_false", help="no time line")
    p.add_argument("-updated-at", dest="updated_at", action="store_true")
    p.add_argument("-refresh", type=float, default=1.0, metavar="SECONDS", help="seconds between updates")
    p.add_argument("-once", action="store_true", help="print the view once and exit")
    return p


def parse_exit(text: str | None) -> tuple[str, str, int] | None:
    if text is None:
        return None
    parts = [p.strip().lower() for p in text.split(",")]
    if len(parts) not in (2, 3) or parts[0] not in GROUPERS or parts[1] not in STATUSES:
        raise ToolError(f"-exit {text!r}: expected GROUPER,STATUS[,EXIT_STATUS] with GROUPER one of "
                        f"{', '.join(GROUPERS)} and STATUS one of {', '.join(STATUSES)}")
    try:
        code = int(parts[2]) if len(parts) == 3 else 0
    except ValueError:
        raise ToolError(f"-exit {text!r}: the exit status must be a number") from None
    return parts[0], parts[1], code


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        condition = parse_exit(args.exit)
        client = connect()
        tracker = Tracker()
        picks = [f"Owner == {quote(u)}" for u in (args.users or ([] if args.clusters else [user()]))]
        picks += [f"ClusterId == {c}" for c in args.clusters or ()]
        selection = " || ".join(picks)
        live = None
        if sys.stdout.isatty() and not args.once:
            from rich.live import Live
            from rich.text import Text

            live = Live(Text(""), auto_refresh=False)
            live.start()
        shown = None
        try:
            while True:
                tracked = " || ".join(f"ClusterId == {c}" for c in tracker.clusters)
                constraint = " || ".join(f"({p})" for p in (selection, tracked) if p)
                jobs = list(request(client, "schedd", QueueQuery(constraint)).ads)
                tracker.see(jobs)
                rows = groups(tracker, jobs, args.groupby)
                now = int(time.time())
                text = format_watch(rows, now=now, zone=local_zone(now), bar_width=40 if args.progress else 0,
                                    summary=args.summary, updated_at=args.updated_at)
                changed = rows != shown  # a pipe gets the view again only when the jobs moved
                if live is not None:
                    from rich.text import Text

                    live.update(Text(text), refresh=True)
                elif changed:
                    sys.stdout.write(text + ("" if args.once else "\n"))
                    sys.stdout.flush()
                shown = rows
                if args.once:
                    return 0
                if condition is not None and exit_reached(rows, condition[0], condition[1]):
                    return condition[2]
                time.sleep(max(0.1, args.refresh))
        except KeyboardInterrupt:
            return 0
        finally:
            if live is not None:
                live.stop()

    return run_tool("condor_watch_q", body)
