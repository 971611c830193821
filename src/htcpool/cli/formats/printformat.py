"""Print-format files (``-print-format FILE``, ``-pr FILE``): HTCondor's print format tables.

The language is the manual's "Print Format Tables": keywords are upper case; ``#`` starts a
comment line; the parts come in this order:

* ``SELECT`` (first), optionally with ``FROM AUTOCLUSTER`` or ``UNIQUE`` (condor_q's query
  types, ``query``: rows of autoclusters or of unique values, ``printformat_groups``), ``NOTITLE``, ``NOHEADER``,
  ``NOSUMMARY``, ``BARE`` (all three), ``LABEL [SEPARATOR s]``, ``RECORDPREFIX s``,
  ``RECORDSUFFIX s``, ``FIELDPREFIX s``, ``FIELDSUFFIX s``;
* one line per column: an expression, ended by the first keyword, then ``AS heading``,
  ``WIDTH [-]N`` or ``WIDTH AUTO``, ``FIT``, ``TRUNCATE``, ``LEFT``, ``RIGHT``, ``NOPREFIX``,
  ``NOSUFFIX``, ``PRINTF fmt``, ``PRINTAS function`` (``printas.FUNCTIONS``) and ``OR c`` /
  ``OR cc``;
* ``WHERE expression``;
* ``GROUP BY [expression [ASCENDING|DESCENDING]]``, further sort keys on the lines after it;
* ``SUMMARY STANDARD`` or ``SUMMARY NONE``.

A string starting with a quote runs to the matching quote, any other to the next blank;
``\\n``, ``\\r`` and ``\\t`` in it are the characters. ``parse_print_format`` returns a
``PrintFormat`` or raises ``PrintFormatError`` naming the file, the line and what was expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from htcpool.classad import ClassAdError, ExprTree
from htcpool.cli.formats.printas import FUNCTIONS

COLUMN_KEYWORDS = frozenset({"AS", "WIDTH", "FIT", "TRUNCATE", "LEFT", "RIGHT", "NOPREFIX", "NOSUFFIX",
                             "PRINTF", "PRINTAS", "OR"})
_TOKEN = re.compile(r"""'[^']*'?|"[^"]*"?|\S+""")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_OR_CHARS = frozenset(" ?*.-_#0")


class QueryType(Enum):
    """What a row is: a job (or whatever ad the tool lists), an autocluster, a set of unique values."""

    ADS = "ads"
    AUTOCLUSTER = "FROM AUTOCLUSTER"
    UNIQUE = "UNIQUE"


class PrintFormatError(ValueError):
    """A print-format file that cannot be used; the message names the file and line."""


@dataclass
class Column:
    expr: str
    heading: str
    width: int | None = None  # None: as wide as the heading; negative: left-aligned
    auto: bool = False
    fit: bool = False
    truncate: bool = False
    align: str = ""  # "left", "right" or "" (from the width's sign)
    noprefix: bool = False
    nosuffix: bool = False
    printf: str | None = None
    printas: str | None = None
    alt: str | None = None  # what an undefined value prints; two characters fill the column


@dataclass
class PrintFormat:
    columns: list[Column] = field(default_factory=list)
    where: str | None = None
    group_by: list[tuple[str, bool]] = field(default_factory=list)  # (expression, descending)
    summary: bool | None = None  # None: the tool's default
    title: bool = True
    header: bool = True
    labels: bool = False
    separator: str = " = "
    record_prefix: str = ""
    record_suffix: str = "\n"
    field_prefix: str = ""
    field_suffix: str = " "
    query: QueryType = QueryType.ADS


def _string(token: str) -> str:
    if token[:1] in "'\"":
        token = token[1:-1] if len(token) > 1 and token[-1] == token[0] else token[1:]
    return re.sub(r"\\([nrt])", lambda m: _ESCAPES[m.group(1)], token)


class _Line:
    """The tokens of one line, with the place each starts, for error messages and expressions."""

    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
        self.pos = 0

    def more(self) -> bool:
        return self.pos < len(self.tokens)

    def peek(self) -> str:
        return self.tokens[self.pos][0] if self.more() else ""

    def take(self, what: str) -> str:
        if not self.more():
            raise PrintFormatError(f"{self.where}: expected {what} at the end of the line")
        token = self.tokens[self.pos][0]
        self.pos += 1
        return token

    def rest(self) -> str:
        return self.text[self.tokens[self.pos][1]:].strip() if self.more() else ""

    def fail(self, message: str) -> PrintFormatError:
        return PrintFormatError(f"{self.where}: {message}")


def _check_expr(text: str, line: _Line) -> str:
    try:
        ExprTree(text)
    except ClassAdError as e:
        raise line.fail(f"{text!r} is not a ClassAd expression: {e}") from None
    return text


def _select(line: _Line, pf: PrintFormat) -> None:
    flags = {"NOTITLE": ("title",), "NOHEADER": ("header",), "NOSUMMARY": ("summary",),
             "BARE": ("title", "header", "summary")}
    strings = {"RECORDPREFIX": "record_prefix", "RECORDSUFFIX": "record_suffix",
               "FIELDPREFIX": "field_prefix", "FIELDSUFFIX": "field_suffix"}
    while line.more():
        word = line.take("a SELECT option")
        if word in flags:
            for name in flags[word]:
                setattr(pf, name, False)
        elif word in strings:
            setattr(pf, strings[word], _string(line.take(f"the string after {word}")))
        elif word == "LABEL":
            pf.labels = True
            if line.peek() == "SEPARATOR":
                line.take("SEPARATOR")
                pf.separator = _string(line.take("the string after SEPARATOR"))
        elif word == "FROM":
            if line.take("AUTOCLUSTER after FROM") != "AUTOCLUSTER":
                raise line.fail("SELECT FROM takes AUTOCLUSTER")
            pf.query = QueryType.AUTOCLUSTER
        elif word == "UNIQUE":
            pf.query = QueryType.UNIQUE
        else:
            raise line.fail(f"unknown SELECT option {word!r} (expected FROM AUTOCLUSTER, UNIQUE, NOTITLE, "
                            "NOHEADER, NOSUMMARY, BARE, LABEL, RECORDPREFIX, RECORDSUFFIX, FIELDPREFIX, "
                            "FIELDSUFFIX)")


def _width(line: _Line, column: Column) -> None:
    word = line.take("a number or AUTO after WIDTH")
    if word == "AUTO":
        column.auto = True
    elif re.fullmatch(r"-?\d+", word):
        column.width = int(word)
    else:
        raise line.fail(f"WIDTH takes a number or AUTO, not {word!r}")


def _or(line: _Line, column: Column) -> None:
    alt = _string(line.take("one or two characters after OR"))
    if not 1 <= len(alt) <= 2 or len(set(alt)) != 1 or alt[0] not in _OR_CHARS:
        raise line.fail(f"OR takes a character of ' ?*.-_#0', once or twice, not {alt!r}")
    column.alt = alt


def _column(line: _Line) -> Column:
    start = next((i for i, (t, _) in enumerate(line.tokens) if t in COLUMN_KEYWORDS), len(line.tokens))
    if start == 0:
        raise line.fail(f"a column needs an expression before {line.peek()}")
    end = line.tokens[start][1] if start < len(line.tokens) else len(line.text)
    expr = _check_expr(line.text[:end].strip(), line)
    column = Column(expr, expr)
    line.pos = start
    switches = {"FIT": "fit", "TRUNCATE": "truncate", "NOPREFIX": "noprefix", "NOSUFFIX": "nosuffix"}
    while line.more():
        word = line.take("a column keyword")
        if word in switches:
            setattr(column, switches[word], True)
        elif word in ("LEFT", "RIGHT"):
            column.align = word.lower()
        elif word == "AS":
            column.heading = _string(line.take("a heading after AS"))
        elif word == "WIDTH":
            _width(line, column)
        elif word == "PRINTF":
            column.printf = _string(line.take("a format after PRINTF"))
        elif word == "PRINTAS":
            name = line.take("a function after PRINTAS").upper()
            if name not in FUNCTIONS:
                raise line.fail(f"unknown PRINTAS function {name!r} (expected one of {', '.join(sorted(FUNCTIONS))})")
            column.printas = name
        elif word == "OR":
            _or(line, column)
        else:
            raise line.fail(f"unexpected {word!r} (expected one of {', '.join(sorted(COLUMN_KEYWORDS))})")
    return column


def _sort_key(line: _Line) -> tuple[str, bool]:
    words = line.rest().rsplit(None, 1)
    descending = len(words) == 2 and words[1] in ("ASCENDING", "DESCENDING") and words[1] == "DESCENDING"
    expr = words[0] if len(words) == 2 and words[1] in ("ASCENDING", "DESCENDING") else line.rest()
    return _check_expr(expr, line), descending


def parse_print_format(text: str, source: str = "print format") -> PrintFormat:
    pf = PrintFormat()
    part = "start"  # start, columns, where, group, summary
    for number, raw in enumerate(text.splitlines(), 1):
        line = _Line(raw, f"{source}, line {number}")
        if not line.more() or line.peek().startswith("#"):
            continue
        word = line.peek()
        if part == "start":
            if word != "SELECT":
                raise line.fail(f"a print format starts with SELECT, not {word!r}")
            line.take("SELECT")
            _select(line, pf)
            part = "columns"
        elif word == "WHERE" and part == "columns":
            line.take("WHERE")
            pf.where = _check_expr(line.rest(), line) if line.more() else None
            part = "where"
        elif word == "GROUP" and part in ("columns", "where"):
            line.take("GROUP")
            if line.take("BY after GROUP") != "BY":
                raise line.fail("GROUP is followed by BY")
            if line.more():
                pf.group_by.append(_sort_key(line))
            part = "group"
        elif word == "SUMMARY" and part != "summary":
            line.take("SUMMARY")
            kind = line.take("STANDARD or NONE after SUMMARY")
            if kind not in ("STANDARD", "NONE"):
                raise line.fail(f"SUMMARY takes STANDARD or NONE, not {kind!r}")
            if pf.summary is not False:  # NOSUMMARY or BARE on the SELECT line wins
                pf.summary = kind == "STANDARD"
            part = "summary"
        elif part == "group":
            pf.group_by.append(_sort_key(line))
        elif part == "columns":
            pf.columns.append(_column(line))
        else:
            raise line.fail(f"unexpected {word!r} after the {part.upper()} part (the parts are SELECT, "
                            "columns, WHERE, GROUP BY, SUMMARY, in that order)")
    if part == "start":
        raise PrintFormatError(f"{source}: no SELECT line")
    return pf


__all__ = ["Column", "PrintFormat", "PrintFormatError", "parse_print_format"]
