"""The ``queue`` statement: how many jobs, and the item rows they iterate over.

``parse_queue`` turns the text after the keyword into a ``QueuePlan``: a count
``N`` (jobs per item), the loop variable names and the rows of values. The
forms are ``queue [N]``, ``queue [N] [vars] in [slice] (items)``,
``queue [N] [vars] from [slice] FILE`` (or a parenthesised block of lines)
and ``queue [N] [vars] matching [files|dirs|any] [slice] globs``. A slice is
Python's ``[start:stop:step]``. With several variables each item is split on
commas and white space, the last variable taking the rest. Files are read
through the injected ``FileSystemView``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from htcpool.classad import EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError
from htcpool.submit.errors import SubmitError
from htcpool.submit.limits import MAX_QUEUE_COUNT, clip
from htcpool.submit.world import FileSystemView, glob_names

_KEYWORD = re.compile(r"(?i)(?:^|\s|,)(in|from|matching)(?=\s|\(|\[|$)")
_VAR = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_SLICE = re.compile(r"^\[\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?(?::\s*(-?\d*)\s*)?\]")


class QueueError(SubmitError):
    """A queue statement that cannot be understood or whose items cannot be read."""


@dataclass(frozen=True)
class QueuePlan:
    count: int
    variables: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...] | None

    def jobs(self) -> int:
        return self.count * (1 if self.rows is None else len(self.rows))

    def check(self) -> None:
        """Refuse a plan whose last ProcId would not fit HTCondor's 32-bit integer."""
        if self.jobs() > MAX_QUEUE_COUNT + 1:
            raise QueueError(f"the queue statement asks for {self.jobs()} jobs (at most "
                             f"{MAX_QUEUE_COUNT + 1}: ProcId is a 32-bit integer)")


def _count(text: str, now: float | None) -> int:
    if not text:
        return 1
    context = EvalContext(clock=None if now is None else fixed_clock(now))
    try:
        value = ExprTree(text).evaluate(context=context)
    except ClassAdError:
        raise QueueError(f"invalid queue count '{clip(text)}'") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise QueueError(f"queue count '{clip(text)}' is not a non-negative integer")
    if value > MAX_QUEUE_COUNT:  # also infinity; checked before the jobs are counted or built
        raise QueueError(f"queue count '{clip(text)}' is too large (at most {MAX_QUEUE_COUNT}: "
                         "ProcId is a 32-bit integer)")
    return int(value)


def _slice(rest: str) -> tuple[slice | None, str]:
    match = _SLICE.match(rest)
    if not match:
        return None, rest
    parts = [int(p) if p not in (None, "") else None for p in match.groups()]
    return slice(*parts), rest[match.end():].strip()


def _parenthesised(rest: str) -> str | None:
    if not rest.startswith("("):
        return None
    if not rest.endswith(")"):
        raise QueueError("queue item list has no closing ')'")
    return rest[1:-1]


def parse_queue(args: str, fs: FileSystemView, cwd: str, *, now: float | None = None) -> QueuePlan:
    """The plan of one queue statement (``args``: the text after the keyword, macros expanded).

    ``now`` is the time a count expression sees (condor_submit's submit time); without it a
    count that reads the time is invalid."""
    args = args.strip()
    match = _KEYWORD.search(args)
    if match is None:
        return QueuePlan(_count(args, now), (), None)  # the count is at most MAX_QUEUE_COUNT
    head = args[: match.start(1)].strip().rstrip(",").strip()
    keyword = match.group(1).lower()
    rest = args[match.end(1):].strip()
    words = [w for w in re.split(r"[\s,]+", head) if w]
    count = 1
    if words and not _VAR.match(words[0]):
        count = _count(words.pop(0), now)
    for w in words:
        if not _VAR.match(w):
            raise QueueError(f"invalid queue variable name '{w}'")
    variables = tuple(words) or ("Item",)
    if keyword == "matching":
        items = _matching(rest, fs, cwd)
    else:
        where, rest = _slice(rest)
        if keyword == "in":
            inner = _parenthesised(rest)
            text = rest if inner is None else inner
            # condor_submit's item lists are separated by commas and/or white space, on one
            # line or several (HTCondor manual, "Submitting many similar jobs with one queue command")
            items = [i for i in re.split(r"[,\s]+", text) if i]
        else:
            inner = _parenthesised(rest)
            if inner is None:
                path = rest if rest.startswith("/") else f"{cwd.rstrip('/')}/{rest}"
                content = fs.read_text(path)
                if content is None:
                    raise QueueError(f"failed to open '{rest}' for queue items")
                inner = content
            items = [line.strip() for line in inner.splitlines() if line.strip()]
        if where is not None:
            items = items[where]
    rows = tuple(_split_row(item, len(variables)) for item in items)
    plan = QueuePlan(count, variables, rows)
    plan.check()
    return plan


def _matching(rest: str, fs: FileSystemView, cwd: str) -> list[str]:
    want = "any"
    first, _, remainder = rest.partition(" ")
    if first.lower() in ("files", "dirs", "any"):
        want, rest = first.lower(), remainder.strip()
    where, rest = _slice(rest)
    names: list[str] = []
    for pattern in rest.replace(",", " ").split():
        for name in glob_names(fs, cwd, pattern, want):
            if name not in names:
                names.append(name)
    return names[where] if where is not None else names


def _split_row(item: str, width: int) -> tuple[str, ...]:
    if width == 1:
        return (item,)
    if "\x1f" in item:  # the bindings' itemdata: values separated by the unit separator, verbatim
        parts = item.split("\x1f", width - 1)
        return tuple(parts + [""] * (width - len(parts)))
    parts = re.split(r"[\s,]+", item.strip(), maxsplit=width - 1)
    return tuple(parts + [""] * (width - len(parts)))
