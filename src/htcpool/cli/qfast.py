"""The entry of ``htcpool q``: ``-totals`` answered from the schedd's counts, quickly.

condor_q ``-totals`` prints only the summary lines of the queue ("Total for query",
"Total for all users"). Asking the schedd for every ad to count them, and importing
the table formatters and the HTTP client to do so, costs far more than the answer:
here a plain ``-totals`` (with ``-allusers`` and job, cluster or user arguments at most)
sends one ``QueueTotals`` on the tools' light client (``cli/wire.py``) and prints the
counts it gets back, importing nothing else. Everything else, and a ``-totals`` this
path cannot reach the schedd for (no pool, a refused request), goes to ``cli/q.py``,
which says what is wrong as it always does.

``totals_text`` is shared with ``cli/q.py``'s ``-totals`` (with a constraint or
``-run``/``-hold``/``-idle``): the same lines as ``formats/queue.py`` prints from ads.
"""

from __future__ import annotations

import getpass
import re
import sys
import time
from collections.abc import Mapping

#: what each JobStatus number counts as in the totals lines (output transfer counts as running)
_STATES = {"1": "idle", "2": "running", "3": "removed", "4": "completed", "5": "held", "6": "running",
           "7": "suspended"}
_ORDER = ("completed", "removed", "idle", "running", "held", "suspended")
_JOB_OR_CLUSTER = re.compile(r"(\d+)(?:\.(\d+))?")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def totals_line(label: str, counts: Mapping[str, int]) -> str:
    by_state = dict.fromkeys(_ORDER, 0)
    for status, n in counts.items():
        state = _STATES.get(status)
        if state is not None:
            by_state[state] += n
    return (f"Total for {label}: {sum(counts.values())} jobs; {by_state['completed']} completed, "
            f"{by_state['removed']} removed, {by_state['idle']} idle, {by_state['running']} running, "
            f"{by_state['held']} held, {by_state['suspended']} suspended")


def totals_text(selected: Mapping[str, int], everything: Mapping[str, int], *, schedd_name: str,
                schedd_address: str, now: int, zone: int) -> str:
    """condor_q -totals' output from job counts keyed by JobStatus (``QueueCounts``)."""
    cut = schedd_address.find("?")
    address = schedd_address if cut < 0 else schedd_address[:cut] + "?..."
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.gmtime(now + zone))
    return (f"\n\n-- Schedd: {schedd_name} : {address} @ {stamp}\n"
            f"{totals_line('query', selected)} \n{totals_line('all users', everything)}\n\n")


def plain_totals_constraint(argv: list[str], me: str) -> str | None:
    """The constraint of a ``-totals`` this module answers (``-totals``, ``-allusers``, job,
    cluster and user arguments), as ``cli/q.py`` would build it; None for anything else."""
    if "-totals" not in argv:
        return None
    picks = []
    everyone = False
    for word in argv:
        if word == "-allusers":
            everyone = True
        elif word == "-totals":
            continue
        elif (found := _JOB_OR_CLUSTER.fullmatch(word)) is not None:
            cluster, proc = found.groups()
            picks.append(f"ClusterId == {cluster}" + (f" && ProcId == {proc}" if proc else ""))
        elif _USER.fullmatch(word):
            picks.append(f"Owner == {_quote(word)}")
        else:
            return None
    if picks:
        return " || ".join(f"({p})" for p in picks)
    return "" if everyone else f"Owner == {_quote(me)}"


def _answer(constraint: str) -> str | None:
    """The totals text from the schedd; None when it cannot be had this way."""
    from htcpool.cli.locate import LocateError, pool_layout
    from htcpool.cli.wire import WireError, daemon_client
    from htcpool.protocol.schedd import QueueCounts, QueueTotals

    try:
        client = daemon_client(pool_layout(), "schedd")
    except (LocateError, WireError, OSError):
        return None
    try:
        reply = client.send(QueueTotals(constraint))
    except WireError:
        return None
    finally:
        client.close()
    if not isinstance(reply, QueueCounts):
        return None
    now = int(time.time())
    return totals_text(reply.selected, reply.everything, schedd_name=reply.schedd_name,
                       schedd_address=reply.schedd_address, now=now, zone=time.localtime(now).tm_gmtoff)


def main(argv: list[str]) -> int:
    constraint = plain_totals_constraint(argv, getpass.getuser())
    text = _answer(constraint) if constraint is not None else None
    if text is None:
        from htcpool.cli.q import main as full

        return full(argv)
    sys.stdout.write(text)
    return 0


__all__ = ["main", "plain_totals_constraint", "totals_line", "totals_text"]
