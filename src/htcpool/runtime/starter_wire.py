"""What the startd and a starter process say to each other, one JSON object a line.

The startd writes commands to the starter's stdin (``{"cmd": "suspend"}`` …, see
``htcpool.runtime.starter``); the starter writes events to its stdout
(``{"event": "started", "pid": …}`` …). Both kinds are enums here, in a module that
imports nothing else of htcpool, so the starter process starts without loading the
ClassAd language or the protocol.
"""

from __future__ import annotations

from enum import StrEnum


class StarterCommand(StrEnum):
    SUSPEND = "suspend"      # SIGSTOP to the job's process group
    CONTINUE = "continue"    # SIGCONT to the group
    SOFT_KILL = "soft_kill"  # the job's KillSig (field "signal"), then SIGCONT if stopped
    HARD_KILL = "hard_kill"  # SIGCONT, then SIGKILL


class StarterEvent(StrEnum):
    """The starter's reports; the names are those of the protocol's ``JobEvent`` they become."""

    STARTED = "started"
    SUSPENDED = "suspended"
    CONTINUED = "continued"
    USAGE = "usage"
    ERROR = "error"
    EXITED = "exited"


__all__ = ["StarterCommand", "StarterEvent"]
