"""Reading a ``condor_history -long`` file in submit order without holding it all.

condor_history prints the job that left the queue last first, so a file holds its jobs in
decreasing order of the time each left (``CompletionDate``, or ``EnteredCurrentStatus`` for a job
removed before it completed), while the simulation needs them in increasing ``QDate`` order.
Read backwards, the file gives the jobs in increasing order of leaving; a job's ``QDate`` is at
most its leaving time and at least that time less the longest stay of any job in the file
(``span``). So when a job that left at *L* has been read, every job still to be read has
``QDate`` ≥ *L* − ``span``, and every job already read with a smaller ``QDate`` can be handed out
(``in_submit_order``): memory holds the jobs whose stays overlap, not the file.

``scan`` is a first pass that reads only the lines it needs (``QDate``, ``CompletionDate``,
``EnteredCurrentStatus``) and keeps nothing per job: the first ``QDate`` (the simulation's
start), ``span``, the number of lines, and whether the file is in that order at all. A file
where some ad has no leaving time, or whose ads are not newest first, cannot be read this way;
the workload then sorts its jobs in memory (docs/simulator.md, "Input files").
``reverse_blocks`` yields the ads from the end of the file, reading it in ``CHUNK`` bytes at a time.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK = 1 << 16
_TIME = re.compile(r"^\s*(QDate|CompletionDate|EnteredCurrentStatus)\s*=\s*(-?\d+(?:\.\d*)?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class HistoryScan:
    """What ``scan`` learned of a history file."""

    first_qdate: float | None  # the earliest QDate (None: no ad has one)
    span: float  # the longest time between a job's QDate and its leaving
    lines: int
    streamable: bool  # every ad has a leaving time and the ads are newest first


def scan(path: Path) -> HistoryScan:
    """The first pass over ``path`` (see the module docstring)."""
    first: float | None = None
    span = 0.0
    previous_leave: float | None = None
    streamable = True
    times: dict[str, float] = {}
    count = 0

    def close() -> None:
        nonlocal first, span, previous_leave, streamable
        if not times:
            return
        qdate = times.get("qdate")
        leave = times.get("completiondate") or times.get("enteredcurrentstatus")
        if qdate is not None:
            first = qdate if first is None else min(first, qdate)
        if qdate is None or not leave:
            streamable = False
        else:
            span = max(span, leave - qdate)
            if previous_leave is not None and leave > previous_leave:
                streamable = False
            previous_leave = leave
        times.clear()

    with path.open() as f:
        for raw in f:
            count += 1
            line = raw.strip()
            if not line or line.startswith("***"):
                close()
                continue
            m = _TIME.match(line)
            if m is not None:
                times[m.group(1).lower()] = float(m.group(2))
            else:
                times.setdefault("", 0.0)  # the block has begun
    close()
    return HistoryScan(first, span, count, streamable)


def reverse_lines(path: Path) -> Iterator[str]:
    """The file's lines, last first, read ``CHUNK`` bytes at a time from the end."""
    with path.open("rb") as f:
        f.seek(0, 2)
        position = f.tell()
        tail = b""
        while position > 0:
            step = min(CHUNK, position)
            position -= step
            f.seek(position)
            parts = (f.read(step) + tail).split(b"\n")
            tail = parts[0]
            for part in reversed(parts[1:]):
                yield part.decode()
        yield tail.decode()


def reverse_blocks(path: Path, lines: int) -> Iterator[tuple[int, list[str]]]:
    """The ads of a file of ``lines`` lines, last first: (first line number, stripped lines)."""
    number = lines + 1
    block: list[str] = []
    for i, raw in enumerate(reverse_lines(path)):
        if i == 0 and raw == "":
            continue  # the empty piece after the file's last newline
        number -= 1
        line = raw.strip()
        if not line or line.startswith("***"):
            if block:
                yield number + 1, block[::-1]
            block = []
            continue
        block.append(line)
    if block:
        yield number, block[::-1]


def in_submit_order(records: Iterable[tuple[float, float, int, Any]], span: float) -> Iterator[Any]:
    """Records ``(leave, qdate, line, item)`` given in increasing ``leave``, handed out as items in
    increasing (``qdate``, ``line``) once no record still to come can precede them."""
    heap: list[tuple[float, int, Any]] = []
    for leave, qdate, line, item in records:
        heapq.heappush(heap, (qdate, line, item))
        while heap and heap[0][0] < leave - span:
            yield heapq.heappop(heap)[2]
    while heap:
        yield heapq.heappop(heap)[2]


__all__ = ["CHUNK", "HistoryScan", "in_submit_order", "reverse_blocks", "reverse_lines", "scan"]
