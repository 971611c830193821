"""Errors of the collector core.

``CollectorError`` is the base. Two kinds of bad input, each naming what was wrong:
``CollectorUpdateError`` for an ad the store cannot file (no ``MyType`` or ``Name``) and
``CollectorQueryError`` for a constraint that is not a ClassAd expression (it carries the text,
the line and column, and the parser's reason). ``CollectorUsageError`` is a caller that misused
the API (an invalidation naming neither an ad nor a constraint, a projection that is not a list
of names).
"""

from __future__ import annotations


class CollectorError(Exception):
    """Base of every error raised by ``htcpool.collector``."""


class CollectorUsageError(CollectorError):
    """The caller misused the API."""


class CollectorUpdateError(CollectorError):
    """An ad that cannot be stored: it lacks the attributes its key is made of."""


class CollectorQueryError(CollectorError):
    """A constraint that does not parse; the message quotes it and points at the fault."""

    def __init__(self, constraint: str, reason: str, line: int, column: int, excerpt: str) -> None:
        self.constraint = constraint
        self.reason = reason
        self.line = line
        self.column = column
        where = f"line {line}, column {column}" if "\n" in constraint else f"column {column}"
        super().__init__(
            f"constraint {constraint!r} is not a ClassAd expression: {where}: {reason}\n{excerpt}"
        )
