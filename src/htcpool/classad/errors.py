"""Exceptions of the ClassAd package.

``ClassAdError`` is the base. ``ClassAdParseError`` means the input text is
bad: it carries the text and the offset, and works out the line and column
itself. ``ClassAdEvaluationError`` means an evaluation could not complete (the
reference library's "failed to evaluate expression"). Misuse of the API (wrong
argument types) raises Python's own ``TypeError``/``KeyError``.
"""

from __future__ import annotations


class ClassAdError(Exception):
    """Base of every error raised by ``htcpool.classad``."""


class ClassAdParseError(ClassAdError, ValueError):
    """Text that is not a valid ClassAd expression or ad."""

    def __init__(self, message: str, text: str = "", pos: int = 0, source: str = "") -> None:
        self.reason = message
        self.text = text
        self.pos = pos
        self.source = source
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        where = f"{source}:" if source else ""
        super().__init__(f"{where}{self.line}:{self.column}: {message}")

    def excerpt(self) -> str:
        """The offending line with a caret under the position."""
        start = self.text.rfind("\n", 0, self.pos) + 1
        end = self.text.find("\n", self.pos)
        line = self.text[start : end if end >= 0 else len(self.text)]
        return f"{line}\n{' ' * (self.column - 1)}^"


class ClassAdEvaluationError(ClassAdError, RuntimeError):
    """An evaluation that could not complete."""
