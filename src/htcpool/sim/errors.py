"""Errors of the simulator's inputs: a trace, machine file or configuration it cannot read."""

from __future__ import annotations


class SimInputError(ValueError):
    """Bad simulator input; the message names the file, the line and the reason."""

    def __init__(self, path: object, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason
