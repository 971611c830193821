"""``htcpool userprio``: condor_userprio.

    htcpool userprio [-name NEGOTIATOR] [-pool HOST] [display options] [SUBMITTER …]
    htcpool userprio -setprio|-setfactor|-setaccum|-setbegin|-setlast|-setceiling|-setfloor SUBMITTER VALUE
                     [-duration SECONDS] | -resetusage SUBMITTER | -resetall | -delete SUBMITTER
    htcpool userprio -getreslist SUBMITTER

Display options: ``-all``, ``-most`` (the default), ``-usage``, ``-priority``, ``-quotas``,
``-surplus``, ``-sortkey``, ``-groupid``, ``-order``, ``-allusers``, ``-activefrom M D Y``,
``-hierarchical``, ``-flat``, ``-grouporder``, ``-grouprollup``, ``-constraint EXPR``, ``-long``,
``-af[:jlhVr,tng] ATTR …``. Options are recognised as HTCondor's tool recognises them (``OPTIONS``:
a word matches an option when it is a prefix of the option's name at least as long as the
option's shortest form, with one or two dashes). Naming submitters (``user@domain`` in full, or
the part before the ``@``) shows only those, active or not. A change names a submitter in full
and reports what it did in condor_userprio's words. ``-name`` and ``-pool`` are accepted: a pool
has one negotiator. ``-getreslist`` lists the claimed slots the collector knows for the
submitter, each with the time its state last changed to Claimed.
"""

from __future__ import annotations

import datetime as dt
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.cli.common import (
    ToolError,
    check_constraint,
    check_expressions,
    connect,
    request,
    run_tool,
)
from htcpool.cli.options import OptionError, Output, render, take_output_options
from htcpool.clock import local_zone
from htcpool.negotiator.userprio_format import UserprioView, format_reslist, format_userprio
from htcpool.negotiator.userprio_rows import NEVER, OPTION_DETAILS, Detail
from htcpool.protocol import AdList, QueryAds, Records, UserprioCommand, UserprioOp, UserprioQuery

USAGE = ("usage: htcpool userprio [-name NEGOTIATOR] [-pool HOST] [edit-option | display-options [submitters]]\n"
         "  edit options: -setprio|-setfactor|-setaccum|-setbegin|-setlast|-setceiling|-setfloor SUBMITTER VALUE\n"
         "                [-duration SECONDS], -resetusage SUBMITTER, -resetall, -delete SUBMITTER\n"
         "  display options: -all -most -usage -priority -quotas -surplus -sortkey -groupid -order -allusers\n"
         "                   -activefrom MONTH DAY YEAR -hierarchical -flat -grouporder -grouprollup\n"
         "                   -constraint EXPR -long -af[:jlhVr,tng] ATTR... -getreslist SUBMITTER")


@dataclass
class Args:
    """What the command line asked for."""

    change: tuple[str, list[str]] | None = None  # the edit option and its arguments
    duration: float = 0.0
    reslist: str | None = None
    details: Detail = Detail.NONE
    dash_quota: bool = False
    hierarchical: bool = True
    dash_hier: bool = False
    group_order: bool = False
    group_rollup: bool = False
    min_last: float | None = None
    constraints: list[str] = field(default_factory=list)
    submitters: list[str] = field(default_factory=list)


def _detail(name: str) -> Callable[[Args, list[str]], None]:
    def apply(a: Args, _: list[str]) -> None:
        a.details |= OPTION_DETAILS[name]
        a.dash_quota = a.dash_quota or name in ("quotas", "surplus")
    return apply


def _layout(hierarchical: bool, group_order: bool = False) -> Callable[[Args, list[str]], None]:
    def apply(a: Args, _: list[str]) -> None:
        a.hierarchical, a.dash_hier, a.group_order = hierarchical, True, a.group_order or group_order
    return apply


def _change(name: str) -> Callable[[Args, list[str]], None]:
    def apply(a: Args, values: list[str]) -> None:
        a.change = (name, values)
    return apply


def _set(attr: str, value: object) -> Callable[[Args, list[str]], None]:
    return lambda a, _: setattr(a, attr, value)


def _active_from(a: Args, values: list[str]) -> None:
    """``-activefrom MONTH DAY YEAR``: local midnight of that day (a two-digit year below 50 is 20xx)."""
    try:
        month, day, year = (int(v) for v in values)
        if year < 50:
            year += 2000
        elif year < 100:
            year += 1900
        a.min_last = time.mktime((year, month, day, 0, 0, 0, 0, 0, -1))
    except (ValueError, OverflowError):
        raise ToolError(f"-activefrom {' '.join(values)}: expected a month, a day and a year") from None


def _duration(a: Args, values: list[str]) -> None:
    from htcpool.negotiator.userprio import MAX_USERPRIO_VALUE

    try:
        a.duration = float(int(values[0]))
    except (ValueError, OverflowError):
        a.duration = 0.0
    if not 0 < a.duration <= MAX_USERPRIO_VALUE:
        raise ToolError("-duration requires a positive integer number of seconds")


#: (name, shortest prefix, values taken, action), tried in this order
OPTIONS: tuple[tuple[str, int, int, Callable[[Args, list[str]], None]], ...] = (
    ("setprio", 0, 2, _change("setprio")), ("setfactor", 0, 2, _change("setfactor")),
    ("setfloor", 0, 2, _change("setfloor")), ("setceiling", 0, 2, _change("setceiling")),
    ("setceil", 0, 2, _change("setceiling")), ("duration", 0, 1, _duration),
    ("setbegin", 0, 2, _change("setbegin")), ("setaccum", 0, 2, _change("setaccum")),
    ("setlast", 0, 2, _change("setlast")), ("resetusage", 0, 1, _change("resetusage")),
    ("delete", 3, 1, _change("delete")), ("resetall", 0, 0, _change("resetall")),
    ("constraint", 1, 1, lambda a, v: a.constraints.append(v[0])),
    ("legacy", 3, 0, lambda a, v: None), ("modular", 3, 0, lambda a, v: None),
    ("hierarchical", 2, 0, _layout(True)), ("heir", 0, 0, _layout(True)), ("flat", 2, 0, _layout(False)),
    ("grouprollup", 0, 0, _set("group_rollup", True)), ("grouporder", 0, 0, _layout(False, True)),
    ("quotas", 1, 0, _detail("quotas")), ("surplus", 0, 0, _detail("surplus")),
    ("sortkey", 2, 0, _detail("sortkey")), ("all", 0, 0, _detail("all")), ("most", 2, 0, _detail("most")),
    ("groupid", 0, 0, _detail("groupid")), ("order", 0, 0, _detail("order")),
    ("activefrom", 0, 3, _active_from), ("allusers", 0, 0, _set("min_last", NEVER)),
    ("usage", 2, 0, _detail("usage")), ("priority", 4, 0, _detail("priority")),
    ("getreslist", 6, 1, lambda a, v: setattr(a, "reslist", v[0])),
    ("pool", 1, 1, lambda a, v: None), ("name", 0, 1, lambda a, v: None),
    ("collector", 3, 0, lambda a, v: None), ("negotiator", 3, 0, lambda a, v: None),
)


def _is_option(word: str, name: str, shortest: int) -> bool:
    body = word[2:] if word.startswith("--") else word[1:] if word.startswith("-") else ""
    return bool(body) and name.startswith(body) and len(body) >= (shortest or len(name))


def parse(argv: list[str]) -> tuple[Args, Output]:
    """The command line read as condor_userprio reads it; a ToolError names what is wrong."""
    try:
        rest, out = take_output_options(argv)
    except OptionError as e:
        raise ToolError(str(e)) from None
    args = Args()
    i = 0
    while i < len(rest):
        word = rest[i]
        for name, shortest, count, action in OPTIONS:
            if _is_option(word, name, shortest):
                values = rest[i + 1:i + 1 + count]
                if len(values) < count:
                    raise ToolError(f"{word} needs {count} value{'s' if count > 1 else ''}\n{USAGE}")
                action(args, values)
                i += 1 + count
                break
        else:
            if not (word[:1].isalpha() or word == "<none>"):
                raise ToolError(f"unknown option {word}\n{USAGE}")
            args.submitters.append(word)
            i += 1
    if args.submitters:
        args.min_last = NEVER  # named submitters are shown whenever they last ran
    return args, out


def _number(text: str) -> float:
    """A finite number no larger than the negotiator takes (``MAX_USERPRIO_VALUE``)."""
    from htcpool.negotiator.userprio import MAX_USERPRIO_VALUE

    try:
        value = float(text)
    except ValueError:
        raise ToolError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or abs(value) > MAX_USERPRIO_VALUE:
        raise ToolError(f"{text!r} is not a finite number of at most {MAX_USERPRIO_VALUE:g} in size")
    return value


def _full_name(name: str, what: str = "priority") -> str:
    """A submitter named in full; condor_userprio refuses a bare user (or group) name."""
    if "@" not in name and name != "<none>":
        raise ToolError(f"You must specify the full name of the submittor you wish\n"
                        f"\tto update the {what} of (user@uid.domain or user@full.host.name)")
    return name


def _whole(text: str, least: int, what: str) -> int:
    value = int(_number(text))
    if value < least:
        raise ToolError(what)
    return value


def change_command(args: Args) -> tuple[UserprioCommand, str]:
    """The command an edit option asks for and condor_userprio's report of it."""
    assert args.change is not None
    op, values = args.change
    name = values[0] if values else ""
    lease = args.duration if op in ("setfactor", "setceiling", "setfloor") else 0.0
    if op == "setfactor":
        factor = _number(values[1])
        if factor < 1:
            raise ToolError("Priority factors must be greater than or equal to 1.")
        report = f"Set priority-factor lease on {name} to {factor:f} for {int(lease)} seconds" if lease else \
            f"The priority factor of {_full_name(name)} was set to {factor:f}"
        return UserprioCommand(UserprioOp.SETFACTOR, _full_name(name), factor, lease), report
    if op in ("setceiling", "setfloor"):
        what = op[3:]
        least = -1 if what == "ceiling" else 0
        value = _whole(values[1], least, f"{what} must be greater than or equal to {least}.")
        report = f"Set {what} lease on {name} to {value} for {int(lease)} seconds" if lease else \
            f"The {what} of {name} was set to {value}"
        return UserprioCommand(UserprioOp(op), _full_name(name, what), float(value), lease), report
    if op == "setprio":
        prio = _number(values[1])
        return UserprioCommand(UserprioOp.SETPRIO, _full_name(name), prio), f"The priority of {name} was set to {prio:f}"
    if op == "setaccum":
        usage = _number(values[1])
        if usage < 0:
            raise ToolError("Usage must be greater than 0 seconds")
        return (UserprioCommand(UserprioOp.SETACCUM, _full_name(name, "Accumulated usage"), usage),
                f"The Accumulated Usage of {name} was set to {usage:f}")
    if op in ("setbegin", "setlast"):
        label = "begin usage time" if op == "setbegin" else "last usage time"
        stamp = _whole(values[1], 0, "Time must be greater than 0 seconds")
        title = "Begin Usage Time" if op == "setbegin" else "Last Usage Time"
        return (UserprioCommand(UserprioOp(op), _full_name(name, label), float(stamp)),
                f"The {title} of {name} was set to {stamp}")
    if op == "resetusage":
        return UserprioCommand(UserprioOp.RESETUSAGE, _full_name(name)), f"The accumulated usage of {name} was reset"
    if op == "resetall":
        return UserprioCommand(UserprioOp.RESETALL), "The accumulated usage was reset for all users"
    if "@" not in name and name != "<none>":
        raise ToolError("You must specify the full name of the record you wish\n"
                        "\tto delete (user@uid.domain or user@full.host.name)")
    return UserprioCommand(UserprioOp.DELETE, name), f"The accountant record named {name} was deleted"


def select(rows: list[dict[str, object]], args: Args, now: float) -> list[dict[str, object]]:
    """The records the constraints and the named submitters keep (full names compared exactly,
    bare names with the part of ``Name`` before its last ``@``)."""
    context = EvalContext(clock=fixed_clock(now))
    trees = [ExprTree(c) for c in args.constraints]
    full = {s for s in args.submitters if "@" in s or s == "<none>"}
    short = {s for s in args.submitters if s not in full}
    kept = []
    for row in rows:
        name = str(row.get("Name", ""))
        if args.submitters and name not in full and name.rpartition("@")[0] not in short:
            continue
        ad = ClassAd(row)
        if all(t.evaluate(ad, context=context) is True for t in trees):
            kept.append(row)
    return kept


def reslist(slots: list[ClassAd], submitter: str) -> list[tuple[str, float]]:
    """The claimed slots charged to ``submitter``, with the time each became Claimed."""
    out = []
    for ad in slots:
        holder = ad.get("AccountingGroup") or ad.get("RemoteUser")
        if holder == submitter and ad.get("State") in ("Claimed", "Preempting"):
            entered = ad.get("EnteredCurrentState")
            out.append((str(ad.get("Name", "")), float(entered) if isinstance(entered, int | float) else 0.0))
    return sorted(out)


def main(argv: list[str]) -> int:
    def body() -> int:
        args, out = parse(argv)
        for constraint in args.constraints:
            check_constraint(constraint)
        check_expressions(out.af)
        now = time.time()
        zone = dt.timezone(dt.timedelta(seconds=local_zone(now)))
        client = connect()
        if args.change is not None:
            command, report = change_command(args)
            request(client, "negotiator", command)
            print(report)
            return 0
        if args.reslist is not None:
            reply = request(client, "collector", QueryAds("Machine", ""))
            slots = list(reply.ads) if isinstance(reply, AdList) else []
            sys.stdout.write(format_reslist(reslist(slots, _full_name(args.reslist)), now=now, tz=zone))
            return 0
        reply = request(client, "negotiator", UserprioQuery())
        rows = select([dict(r) for r in reply.rows] if isinstance(reply, Records) else [], args, now)
        if out.chosen:
            try:
                text = render([ClassAd(r) for r in rows], out, now=now, zone=local_zone(now),
                              ids=lambda ad: str(ad.get("Name", "")))
            except OptionError as e:
                raise ToolError(str(e)) from None
            sys.stdout.write(text or "")
            return 0
        view = UserprioView(args.details, args.dash_quota, args.hierarchical, args.dash_hier, args.group_order,
                            args.group_rollup, args.min_last)
        last_update = float(reply.rows[0].get("LastUpdate", now)) if isinstance(reply, Records) and reply.rows else now
        sys.stdout.write(format_userprio(rows, now=now, view=view, tz=zone, last_update=last_update))
        return 0

    return run_tool("htcpool userprio", body)
