"""Errors of the submit language.

``SubmitError`` is the base. ``SubmitFileError`` means the submit description is
bad: it carries the file name, the line number and the command, and prints them
the way condor_submit does. ``SubmitUsageError`` means the caller misused the
API (for example asked for a cluster without a queue statement being run).
"""

from __future__ import annotations


class SubmitError(Exception):
    """Base class of every error raised by ``htcpool.submit``."""


class SubmitUsageError(SubmitError):
    """The API was called wrongly; nothing is wrong with the submit file."""


class SubmitFileError(SubmitError):
    """The submit description is bad at a known place."""

    def __init__(self, message: str, file: str = "", line: int = 0, command: str = "") -> None:
        self.message = message
        self.file = file
        self.line = line
        self.command = command
        super().__init__(self.describe())

    def describe(self) -> str:
        """``message`` followed by where it happened, when that is known."""
        where = ""
        if self.file and self.line:
            where = f" (file {self.file}, line {self.line}"
            where += f", command '{self.command}')" if self.command else ")"
        return self.message + where
