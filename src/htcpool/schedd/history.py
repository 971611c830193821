"""condor_history's output formats for the ads of jobs that left the queue.

Pure formatting: the ads come from ``QueueStore.append_history`` (oldest
first) and are printed newest first, as condor_history reads its file
backwards. Times are printed in the zone given (seconds east of UTC).

* ``format_history`` is the default table: a fixed heading, then one line per
  job: ``Cluster.Proc`` (width 12), ``Owner`` (12), ``QDate`` as
  ``MM/DD HH:MM`` (11, right), ``RemoteWallClockTime`` as ``D+HH:MM:SS`` (12,
  right), the status letter (2), ``CompletionDate`` (11, right; blank when the
  job never completed) and the command: the executable's base name and its
  arguments.
* ``format_long`` is ``-long``: each ad as ``Name = value`` lines in
  case-insensitive name order (only ``attributes`` when given), then a blank
  line.
* ``format_autoformat`` is ``-af``: one line per job, the values of the
  expressions separated by spaces; strings without quotes, other values as
  ClassAd literals, ``undefined`` for what is not there. The caller passes the
  time the expressions see (``now``); the tool passes its wall clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.classad import to_node
from htcpool.classad.errors import ClassAdError
from htcpool.classad.unparse import unparse_old
from htcpool.classad.values import ERROR, UNDEFINED

HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n"
STATUS_LETTERS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}


def _value(ad: ClassAd, attr: str) -> object:
    """``attr`` evaluated in ``ad``; ERROR when it cannot be (the table reads no clock)."""
    try:
        return ad.evaluate(attr)
    except ClassAdError:
        return ERROR


def _number(ad: ClassAd, attr: str) -> float:
    value = _value(ad, attr)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _date(seconds: float, zone: int) -> str:
    when = datetime.fromtimestamp(int(seconds), UTC) + timedelta(seconds=zone)
    return when.strftime("%m/%d %H:%M")


def _duration(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 86400}+{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _command(ad: ClassAd) -> str:
    cmd = _value(ad, "Cmd")
    name = cmd.rsplit("/", 1)[-1] if isinstance(cmd, str) else ""
    args = _value(ad, "Arguments")
    if not isinstance(args, str) or not args:
        args = _value(ad, "Args")
    return f"{name} {args}" if isinstance(args, str) and args else name


def history_line(ad: ClassAd, zone: int = 0) -> str:
    job = f"{int(_number(ad, 'ClusterId'))}.{int(_number(ad, 'ProcId'))}"
    owner = _value(ad, "Owner")
    completed = _number(ad, "CompletionDate")
    status = STATUS_LETTERS.get(int(_number(ad, "JobStatus")), "?")
    return (f"{job:<12} {owner if isinstance(owner, str) else '':<12} "
            f"{_date(_number(ad, 'QDate'), zone):>11} {_duration(_number(ad, 'RemoteWallClockTime')):>12} "
            f"{status:<2} {_date(completed, zone) if completed > 0 else '':>11} {_command(ad)}\n")


def format_history(history: Sequence[ClassAd], zone: int = 0) -> str:
    """The default condor_history table."""
    return HEADING + "".join(history_line(ad, zone) for ad in reversed(history))


def format_long(history: Sequence[ClassAd], attributes: Iterable[str] | None = None) -> str:
    """``condor_history -long`` (``-attributes`` restricts the names printed)."""
    wanted = None if attributes is None else {a.lower() for a in attributes}
    out = []
    for ad in reversed(history):
        for low in sorted(ad._names, key=lambda k: (k, ad._names[k])):
            if wanted is None or low in wanted:
                out.append(f"{ad._names[low]} = {unparse_old(ad._exprs[low])}\n")
        out.append("\n")
    return "".join(out)


def _af_value(ad: ClassAd, expr: str, context: EvalContext) -> str:
    try:
        value = ad._evaluate_node(ExprTree(expr)._node, None, context)
    except ClassAdError:
        value = ERROR
    if value is UNDEFINED:
        return "undefined"
    if value is ERROR:
        return "error"
    if isinstance(value, str):
        return value
    return unparse_old(to_node(value))


def format_autoformat(history: Sequence[ClassAd], expressions: Sequence[str], *, now: float) -> str:
    """``condor_history -af EXPR …``: ``now`` is what ``time()`` and ``CurrentTime`` answer."""
    context = EvalContext(clock=fixed_clock(now))
    return "".join(" ".join(_af_value(ad, e, context) for e in expressions) + "\n"
                   for ad in reversed(history))
