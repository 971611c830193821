"""``Startd`` and ``Negotiator``: administering execute machines and the accountant.

``Startd`` sends condor_drain's ``Drain``/``CancelDrain`` and condor_vacate's
``Vacate`` to a startd (the pool's own, or the one a location ad names);
``Negotiator`` reads the accountant (``UserprioQuery``) and changes it with
condor_userprio's ``UserprioCommand``. As in HTCondor's bindings, the
accountant's changes need a full submitter name (``user@domain``). HTCondor
manual, "Python bindings, version 2 API reference", classes Startd and
Negotiator.
"""

from __future__ import annotations

from typing import Any

from htcpool.htcondor2._enums import CompletionType, DrainType, VacateType
from htcpool.htcondor2._jobspec import constraint_text
from htcpool.htcondor2._pool import connection_for

_SPEEDS = {DrainType.Graceful: "graceful", DrainType.Quick: "quick", DrainType.Fast: "fast"}
_COMPLETIONS = {CompletionType.Nothing: "nothing", CompletionType.Resume: "resume",
                CompletionType.Exit: "exit", CompletionType.Restart: "restart",
                CompletionType.Reconfig: "reconfig"}


class Startd:
    """One startd (the HTCondor manual's ``htcondor2.Startd``)."""

    def __init__(self, location: Any = None) -> None:
        self._conn, self._address = connection_for(location)

    def _send(self, message: Any) -> Any:
        return self._conn.send("startd", message, self._address)

    def drainJobs(self, drain_type: DrainType = DrainType.Graceful,  # noqa: N802
                  on_completion: CompletionType = CompletionType.Nothing,
                  check_expr: str | None = None, start_expr: str | None = None,
                  reason: str | None = None) -> str:
        """Start draining the machine; the drain's request id."""
        from htcpool.protocol.startd import Drain, DrainCompletion, DrainSpeed

        if not isinstance(drain_type, DrainType):
            raise TypeError("drain_type must be a DrainType")
        if not isinstance(on_completion, CompletionType):
            raise TypeError("on_completion must be a CompletionType")
        check = constraint_text(check_expr, "check_expr") or None
        start = constraint_text(start_expr, "start_expr") or None
        reply = self._send(Drain(DrainSpeed(_SPEEDS[drain_type]),
                                 DrainCompletion(_COMPLETIONS[on_completion]), check, start,
                                 reason or "by admin"))
        return str(getattr(reply, "detail", "") or getattr(reply, "request_id", ""))

    def cancelDrainJobs(self, request_id: str | None = None) -> None:  # noqa: N802
        from htcpool.protocol.startd import CancelDrain

        self._send(CancelDrain(request_id))

    def vacate(self, vacate_fast: VacateType = VacateType.Graceful) -> None:
        """Vacate every claim of the machine."""
        from htcpool.protocol.startd import Vacate

        self._send(Vacate(None, VacateType(vacate_fast) is VacateType.Fast))

    def vacateSlot(self, slot_name: str | None = None,  # noqa: N802
                   vacate_fast: VacateType = VacateType.Graceful) -> None:
        from htcpool.protocol.startd import Vacate

        self._send(Vacate(slot_name, VacateType(vacate_fast) is VacateType.Fast))


def _full_name(user: str) -> str:
    if not isinstance(user, str) or "@" not in user:
        raise ValueError("You must specify the full name of the submitter (user@uid.domain)")
    return user


class Negotiator:
    """The pool's negotiator and its accountant (the HTCondor manual's ``htcondor2.Negotiator``)."""

    def __init__(self, location: Any = None) -> None:
        self._conn, self._address = connection_for(location)

    def _change(self, op: str, user: str = "", value: float = 0.0) -> None:
        from htcpool.protocol import UserprioCommand, UserprioOp

        self._conn.send("negotiator", UserprioCommand(UserprioOp(op), user, float(value)),
                        self._address)

    def getPriorities(self, rollup: bool = False) -> list[Any]:  # noqa: N802
        """One ClassAd per submitter and group: Name, Priority, PriorityFactor, usage …"""
        from htcpool.classad import ClassAd
        from htcpool.protocol import UserprioQuery

        reply = self._conn.send("negotiator", UserprioQuery(), self._address)
        return [ClassAd(dict(row)) for row in reply.rows]

    def getResourceUsage(self, user: str) -> list[Any]:  # noqa: N802
        """The slots ``user`` is using now (their names and the start of their use)."""
        from htcpool.classad import quote
        from htcpool.protocol import QueryAds

        name = _full_name(user)
        constraint = f"RemoteUser == {quote(name)} || RemoteOwner == {quote(name)}"
        reply = self._conn.send("collector", QueryAds("Machine", constraint,
                                                      ("Name", "RemoteUser", "EnteredCurrentState",
                                                       "Cpus", "Memory", "SlotWeight")))
        return list(reply.ads)

    def setFactor(self, user: str, factor: float) -> None:  # noqa: N802
        self._change("setfactor", _full_name(user), factor)

    def setPriority(self, user: str, priority: float) -> None:  # noqa: N802
        self._change("setprio", _full_name(user), priority)

    def setUsage(self, user: str, usage: float) -> None:  # noqa: N802
        self._change("setaccum", _full_name(user), usage)

    def setCeiling(self, user: str, ceiling: int) -> None:  # noqa: N802
        self._change("setceiling", _full_name(user), ceiling)

    def setBeginUsage(self, user: str, when: int) -> None:  # noqa: N802
        self._change("setbegin", _full_name(user), when)

    def setLastUsage(self, user: str, when: int) -> None:  # noqa: N802
        self._change("setlast", _full_name(user), when)

    def resetUsage(self, user: str) -> None:  # noqa: N802
        self._change("resetusage", _full_name(user))

    def resetAllUsage(self) -> None:  # noqa: N802
        self._change("resetall")

    def deleteUser(self, user: str) -> None:  # noqa: N802
        self._change("delete", _full_name(user))


