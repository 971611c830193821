"""Errors of the schedd core.

``ScheddError`` is the base. ``PermissionDenied`` refuses a change by someone
who neither owns the job nor is a queue super user; ``SubmitRejected`` carries
the reason a submission failed (a submit requirement, a failed transform);
``UnknownJob`` names a job id the queue does not hold; ``IllegalTransition``
(in ``states``) is an event that the job's state does not allow; ``BadRequest``
is a message the schedd cannot act on (a missing or malformed field, a message
type it does not take), naming what is wrong.
"""

from __future__ import annotations


class ScheddError(Exception):
    """Base class of the schedd core's errors."""


class PermissionDenied(ScheddError):
    pass


class UnknownJob(ScheddError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown job"


class SubmitRejected(ScheddError):
    def __init__(self, reason: str, code: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class MapFileError(ScheddError):
    """A map file line that cannot be read."""


class BadRequest(ScheddError):
    """A message the schedd cannot act on: a missing or malformed field, or an unknown type."""
