"""Reading user logs (job event logs) for condor_wait, and the wait's bookkeeping.

A user log is a sequence of events, each ending with a line ``...``. An event starts with
its header line, ``CODE (CLUSTER.PROC.SUBPROC) DATE TIME TEXT`` (HTCondor's manual, "Job
Event Log Codes"); the lines after it, up to the ``...``, are its body. ``parse_events``
reads the complete events of a text and tells how much of it they used, so a reader that
follows a growing log keeps the incomplete tail for next time.

``WaitTracker`` is condor_wait's state machine over those events: jobs enter on a submit
(000) and leave on a termination (005) or an abort (009); the wait is over when the job
(or the cluster, or every job) the user named has entered and left, or, with ``-num N``,
once N jobs have left. ``state`` says which (``WaitState``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

SUBMIT, EXECUTE, TERMINATED, ABORTED, HELD, RELEASED = 0, 1, 5, 9, 12, 13
_HEADER = re.compile(r"(\d{3}) \((\d+)\.(-?\d+)\.(\d+)\) (\S+ \S+) ?(.*)")  # proc -1: a cluster's event

#: condor_wait -status words for the events it reports
STATUS_WORDS = {SUBMIT: "submitted", EXECUTE: "executing", TERMINATED: "completed", ABORTED: "aborted",
                HELD: "held", RELEASED: "released"}


@dataclass(frozen=True)
class Event:
    code: int
    cluster: int
    proc: int
    subproc: int
    text: str  # the whole event, header to "..." inclusive, newline-terminated


def parse_events(text: str) -> tuple[list[Event], int]:
    """The complete events at the start of ``text`` and the number of characters they used.
    Lines that are not a header where one is expected are skipped (a damaged log)."""
    events: list[Event] = []
    used = 0
    pos = 0
    current: list[str] = []
    header: re.Match[str] | None = None
    while True:
        end = text.find("\n", pos)
        if end < 0:
            break
        line = text[pos:end]
        pos = end + 1
        if header is None:
            header = _HEADER.fullmatch(line)
            current = [line] if header else []
            if header is None:
                used = pos
            continue
        current.append(line)
        if line == "...":
            g = header.groups()
            events.append(Event(int(g[0]), int(g[1]), int(g[2]), int(g[3]), "\n".join(current) + "\n"))
            header, current, used = None, [], pos
    return events, used


def parse_job(text: str) -> tuple[int, int | None, int | None]:
    """condor_wait's job argument: ``cluster``, ``cluster.proc`` or ``cluster.proc.subproc``."""
    found = re.fullmatch(r"(\d+)(?:\.(\d+)(?:\.(\d+))?)?", text)
    if found is None:
        raise ValueError(f"{text!r} is not a job id (cluster, cluster.proc or cluster.proc.subproc)")
    c, p, s = found.groups()
    return int(c), None if p is None else int(p), None if s is None else int(s)


class WaitState(Enum):
    WAITING = "waiting"
    ALL_DONE = "all done"
    NUMBER_DONE = "number done"


@dataclass
class WaitTracker:
    """What condor_wait has seen; ``job`` is (cluster, proc, subproc) with None for "any"."""

    job: tuple[int, int | None, int | None] | None = None
    number: int | None = None
    active: set[tuple[int, int, int]] = field(default_factory=set)
    seen: int = 0
    finished: int = 0

    def wanted(self, e: Event) -> bool:
        if self.job is None:
            return True
        cluster, proc, sub = self.job
        return e.cluster == cluster and proc in (None, e.proc) and sub in (None, e.subproc)

    def take(self, e: Event) -> None:
        if not self.wanted(e):
            return
        key = (e.cluster, e.proc, e.subproc)
        if e.code == SUBMIT:
            if key not in self.active:
                self.seen += 1
            self.active.add(key)
        elif e.code in (TERMINATED, ABORTED) and key in self.active:
            self.active.discard(key)
            self.finished += 1

    @property
    def state(self) -> WaitState:
        if self.number is not None and self.finished >= self.number:
            return WaitState.NUMBER_DONE
        if self.seen and not self.active and self.number is None:
            return WaitState.ALL_DONE
        return WaitState.WAITING


def status_line(e: Event) -> str | None:
    """``-status``'s line for an event (``1.0.0 completed``); None for events it does not report."""
    word = STATUS_WORDS.get(e.code)
    return None if word is None else f"{e.cluster}.{e.proc}.{e.subproc} {word}"


__all__ = ["Event", "WaitState", "WaitTracker", "parse_events", "parse_job", "status_line"]
