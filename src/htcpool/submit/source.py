"""Reading a submit description into statements.

``read_statements`` turns text into a list of statements, each carrying its
line number: ``Assign`` (``key = value``, including ``+Attr`` and ``MY.Attr``,
``key += value`` and the ``key @=TAG … @TAG`` multi-line form), ``Queue`` (the
text after the ``queue`` keyword), ``Conditional`` (``if``/``elif``/``else``/
``endif``) and ``Include``. Comments (``#`` as the first non-blank character),
blank lines and ``\\`` continuations are read as the configuration reader reads them
(:func:`htcpool.config.lines.logical_lines`); nothing is expanded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from htcpool.config.lines import logical_lines
from htcpool.submit.errors import SubmitFileError

_QUEUE_WORD = re.compile(r"(?i)^(queue|iter(?:a(?:t(?:e)?)?)?)(?=\s|$)")
_ASSIGN = re.compile(r"^([+-]?[A-Za-z_][A-Za-z0-9_.]*)\s*(\+?=)\s*(.*)$", re.S)
_HEREDOC = re.compile(r"^([+-]?[A-Za-z_][A-Za-z0-9_.]*)\s*@=\s*(\S+)\s*$")
_CONDITIONAL = re.compile(r"(?i)^(if|elif|else|endif)\b\s*(.*)$")
_INCLUDE = re.compile(r"(?i)^include\s*(?:\b(ifexists?)\b\s*)?:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Assign:
    key: str
    value: str
    line: int
    append: bool = False


@dataclass(frozen=True, slots=True)
class Queue:
    args: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Conditional:
    keyword: str
    condition: str
    line: int


@dataclass(frozen=True, slots=True)
class Include:
    path: str
    line: int
    if_exists: bool


Statement = Assign | Queue | Conditional | Include


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each statement: ``@=`` values and queue item lists whole.

    Physical lines are joined into logical lines by the configuration reader's
    :func:`~htcpool.config.lines.logical_lines` with condor_submit's options (numbered
    by their first physical line; comment lines inside a continuation dropped). On top
    of that, the lines of a ``key @=TAG`` value up to ``@TAG`` and the item lines of a
    ``queue … (`` up to the line starting with ``)`` are gathered into one statement;
    blank and comment lines inside them are left out, as the configuration reader does.
    """
    out: list[tuple[int, str]] = []
    stream = logical_lines(text, first_number=True, skip_comments_in_continuation=True)
    for number, line in stream:
        if not line or line.startswith("#"):
            continue
        heredoc = _HEREDOC.match(line)
        if heredoc:
            end = "@" + heredoc.group(2)
            body: list[str] = []
            for _, inner in stream:
                if inner == end:
                    break
                if inner and not inner.startswith("#"):
                    body.append(inner)
            else:
                raise SubmitFileError(f"multi-line value of {heredoc.group(1)} has no closing {end}",
                                      line=number)
            out.append((number, heredoc.group(1) + " = \n" + "\n".join(body)))
            continue
        if _QUEUE_WORD.match(line) and line.count("(") > line.count(")"):
            block = [line]
            for _, inner in stream:
                if inner.startswith(")"):
                    block.append(inner)
                    break
                if inner and not inner.startswith("#"):
                    block.append(inner)
            else:
                raise SubmitFileError("queue item list has no closing ')'", line=number)
            out.append((number, "\n".join(block)))
            continue
        out.append((number, line))
    return out


def read_statements(text: str, file: str = "") -> list[Statement]:
    """The statements of a submit description, in order."""
    out: list[Statement] = []
    for number, line in _logical_lines(text):
        if line.startswith("[") and "=" not in line:
            continue
        queue = _QUEUE_WORD.match(line)
        if queue and "=" not in line[: queue.end() + 2]:
            out.append(Queue(line[queue.end():].strip(), number, line))
            continue
        if " = \n" in line:
            key, _, value = line.partition(" = \n")
            out.append(Assign(key, value, number))
            continue
        assign = _ASSIGN.match(line)
        if assign:
            out.append(Assign(assign.group(1), assign.group(3).strip(), number, assign.group(2) == "+="))
            continue
        conditional = _CONDITIONAL.match(line)
        if conditional:
            out.append(Conditional(conditional.group(1).lower(), conditional.group(2).strip(), number))
            continue
        include = _INCLUDE.match(line)
        if include:
            out.append(Include(include.group(2).strip(), number, include.group(1) is not None))
            continue
        raise SubmitFileError(f"Parse error in submit file: '{line}' is not a command", file, number)
    return out
