"""``htcpool ping``: condor_ping, which identity and which authorization levels a client has.

    htcpool ping [-type DAEMON | -address ADDRESS] [-quiet | -table | -verbose] [LEVEL ...]

The tool sends one ``Ping`` to a daemon of the pool (the schedd unless ``-type`` names another,
or the daemon at ``-address``, ``http://host:port`` or HTCondor's ``<host:port>``), the same way
every tool reaches it: on the daemon's Unix socket when the pool has one here, else over TCP
with the user's token (docs/security.md). The daemon answers with the identity it authenticated,
the method (FS, TOKEN or NONE) and, for each LEVEL asked (``ALL``, or no LEVEL, for every
level), whether that identity is authorized there, with the reason when not. Output is one
sentence per level, a table (``-table``), or every field (``-verbose``); ``-quiet`` prints nothing.
The status is 0 when every level asked is authorized, else 1.
"""

from __future__ import annotations

import argparse
import re

from htcpool.cli.common import ToolError, connect, request, run_tool
from htcpool.protocol import Ping, PingReply

DAEMONS = ("schedd", "collector", "negotiator", "startd", "master", "defrag")


def _address(text: str) -> str:
    """``<host:port?…>`` or ``host:port`` as ``http://host:port``; URLs and ``unix:`` as they are."""
    if text.startswith(("http://", "https://", "unix:")):
        return text
    m = re.fullmatch(r"<?([^<>?]+:\d+)(\?[^>]*)?>?", text.strip())
    if m is None:
        raise ToolError(f"-address {text!r} is not an address (<host:port> or http://host:port)")
    return f"http://{m.group(1)}"


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="htcpool ping", description="Which identity and levels this client has at a daemon (condor_ping).")
    p.add_argument("-type", default="schedd", type=str.lower, choices=DAEMONS, help="the daemon to ask (default: schedd)")
    p.add_argument("-address", default=None, help="the daemon at this address")
    p.add_argument("-name", default=None, help="(accepted: one daemon of each type per pool)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-quiet", action="store_true", help="set the exit status only")
    out.add_argument("-table", action="store_true", help="one line per level, in a table")
    out.add_argument("-verbose", action="store_true", help="every field of each answer")
    p.add_argument("-debug", action="store_true", help="(accepted; no effect)")
    p.add_argument("levels", nargs="*", help="READ, WRITE, ADMINISTRATOR, DAEMON … or ALL (default)")
    return p.parse_args(argv)


def _print(reply: PingReply, target: str, table: bool, verbose: bool) -> None:
    reasons = dict(zip(reply.denied, reply.reasons, strict=False))
    results = [(level, True) for level in reply.authorized] + [(level, False) for level in reply.denied]
    if table:
        print(f"{'Instruction':>18} {'Authentication':>14} {'Encryption':>10} {'Decision':>8} Identity")
        for level, ok in results:
            print(f"{level:>18} {reply.method:>14} {reply.encryption:>10} {'ALLOW' if ok else 'DENY':>8} {reply.identity}")
        return
    for level, ok in results:
        if verbose:
            print(f"Destination:                 {target}")
            print(f"Instruction:                 {level}")
            print(f"Encryption:                  {reply.encryption}")
            print(f"Authenticated using:         {reply.method}")
            print(f"Remote Mapping:              {reply.identity}")
            print(f"Seen from:                   {reply.peer}")
            print(f"Authorized:                  {'TRUE' if ok else 'FALSE'}")
            if not ok:
                print(f"Reason:                      {reasons[level]}")
            print()
        elif ok:
            print(f"{level} command using {reply.method} succeeded as {reply.identity} to {target}.")
        else:
            print(f"{level} command using {reply.method} failed as {reply.identity} to {target}: {reasons[level]}")


def main(argv: list[str]) -> int:
    args = _parse(argv)

    def body() -> int:
        from htcpool.runtime.security.credentials import ping_levels

        client = connect()
        try:
            levels = ping_levels(tuple(args.levels)) if args.levels else ()
            url = _address(args.address) if args.address else None
            reply = request(client, args.type, Ping(levels), url)
            target = f"the {args.type}" if url is None else url
        finally:
            client.close()
        if not isinstance(reply, PingReply):
            raise ToolError(f"unexpected answer {type(reply).__name__}")
        if not args.quiet:
            _print(reply, target, args.table, args.verbose)
        return 0 if not reply.denied else 1

    return run_tool("ping", body)


__all__ = ["main"]
