"""``htcpool qedit``: condor_qedit, setting attributes of queued jobs.

    htcpool qedit [-dryrun] {cluster | cluster.proc | user | -constraint EXPR}
                  [-edits FILE] ATTR VALUE [ATTR VALUE ...]

Each VALUE is a ClassAd expression (a string needs its quotes: ``'"text"'``). ``-edits FILE``
reads more edits from FILE, one ``ATTR = VALUE`` a line (``#`` comments and blank lines
skipped). As condor_qedit does, the tool itself refuses the attributes that identify a job or
carry its state (``ClusterId``, ``ProcId``, ``JobStatus``, ``Owner``, ``MyType``,
``TargetType``, ``JobUniverse``) with ``Update of attribute "X" is not allowed.``; the schedd
then applies its own rules (immutable and protected attributes, ownership; docs/pool.md,
"The condor_ tools"). On success it prints ``Set attribute "X" for N matching jobs.`` for
each attribute; ``-dryrun`` prints what it would send instead of sending it. Exit status 1 when
nothing was changed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from htcpool.cli.common import ToolError, check_constraint, connect, request, run_tool, user
from htcpool.protocol import ActionResult
from htcpool.protocol.schedd import EditJobs

#: what condor_qedit never sends (lower case)
REFUSED = frozenset({"clusterid", "procid", "jobstatus", "owner", "mytype", "targettype", "jobuniverse"})


def read_edits(path: str) -> list[tuple[str, str]]:
    """``ATTR = VALUE`` lines of an ``-edits`` file; a ToolError naming file and line when one is not."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ToolError(f"cannot read -edits file {path}: {e.strerror or e}") from None
    edits = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.+)", line)
        if found is None:
            raise ToolError(f"{path}, line {number}: expected ATTR = VALUE, not {line!r}")
        edits.append((found.group(1), found.group(2)))
    return edits


def check_edits(edits: list[tuple[str, str]]) -> None:
    from htcpool.classad import ClassAdError, ExprTree

    if not edits:
        raise ToolError("no attributes to set (give ATTR VALUE pairs)")
    for name, value in edits:
        if name.lower() in REFUSED:
            raise ToolError(f'Update of attribute "{name}" is not allowed.')
        try:
            ExprTree(value)
        except ClassAdError as e:
            raise ToolError(f"the value of {name}, {value!r}, is not a ClassAd expression: {e}") from None


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool qedit", description="Change job attributes (condor_qedit).")
    p.add_argument("-constraint", metavar="EXPR", help="every job for which EXPR is true")
    p.add_argument("-edits", metavar="FILE", help="more edits, one ATTR = VALUE a line")
    p.add_argument("-dryrun", "-dry-run", action="store_true", help="print the edits, change nothing")
    p.add_argument("-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("words", nargs="*", help="the job selection, then ATTR VALUE pairs")
    args = p.parse_args(argv)

    def body() -> int:
        words = list(args.words)
        targets: tuple[str, ...] = ()
        if args.constraint is None:
            if not words:
                raise ToolError("name a cluster, a job (cluster.proc), a user or -constraint EXPR")
            targets = (words.pop(0),)
        check_constraint(args.constraint)
        if len(words) % 2:
            raise ToolError(f"attribute {words[-1]!r} has no value")
        edits = list(zip(words[::2], words[1::2], strict=True))
        if args.edits:
            edits += read_edits(args.edits)
        check_edits(edits)
        if args.dryrun:
            for name, value in edits:
                print(f"{name} = {value}")
            return 0
        client = connect()
        reply = request(client, "schedd", EditJobs(user(), tuple(n for n, _ in edits), tuple(v for _, v in edits),
                                                   targets, args.constraint or ""))
        assert isinstance(reply, ActionResult)
        if not reply.done:
            for error in reply.errors:
                print(error, file=sys.stderr)
            what = targets[0] if targets else f"constraint {args.constraint}"
            raise ToolError(f"Failed to set attribute \"{edits[0][0]}\" for {what}")
        for name, _ in edits:
            print(f'Set attribute "{name}" for {len(reply.done)} matching jobs.')
        for error in reply.errors:
            print(error, file=sys.stderr)
        return 0

    return run_tool("htcpool qedit", body)
