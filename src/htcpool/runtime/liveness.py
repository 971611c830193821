"""Who is alive: the keep-alive a daemon sends its master, and which daemons are overdue.

HTCondor's daemons tell the daemon that started them that they are alive and well
(DaemonCore's DC_CHILDALIVE) every third of ``NOT_RESPONDING_TIMEOUT`` (per daemon:
``<SUBSYS>_NOT_RESPONDING_TIMEOUT``; default an hour), and each message carries that timeout.
A parent that has heard nothing from a child for that long takes it for hung, kills it and
starts it again (admin manual, configuration: ``NOT_RESPONDING_TIMEOUT``). As there, the
parent starts watching a child at its first keep-alive, so a daemon that is slow to start is
not taken for hung.

This module decides and encodes; it reads no clock and does no I/O (``now`` is given).
``runtime/childalive.py`` sends the keep-alives from the daemon's event loop and the master
(``runtime/master.py``) reads them and acts on ``overdue``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from htcpool.config import Config
from htcpool.config.errors import ConfigError

DEFAULT_TIMEOUT = 3600
#: a keep-alive is the line ``alive <timeout in seconds>``
_WORD = b"alive"


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What the master knows of one child's keep-alives."""

    name: str
    pid: int
    last: float | None  # when the last one came; None: none yet since it started (not watched)
    timeout: float  # the timeout the child's last keep-alive gave


@dataclass(frozen=True, slots=True)
class Overdue:
    """A child to take for hung: nothing from it for ``silent`` seconds, past its ``timeout``."""

    name: str
    pid: int
    silent: float
    timeout: float


def overdue(beats: Iterable[Heartbeat], now: float) -> list[Overdue]:
    """The children whose last keep-alive is ``timeout`` or more seconds old at ``now``."""
    return [Overdue(b.name, b.pid, now - b.last, b.timeout) for b in beats
            if b.last is not None and now - b.last >= b.timeout]


def next_check(beats: Iterable[Heartbeat]) -> float | None:
    """When the first watched child becomes overdue if nothing more is heard (None: none watched)."""
    times = [b.last + b.timeout for b in beats if b.last is not None]
    return min(times) if times else None


def keepalive_period(timeout: float) -> float:
    """How often a daemon with ``timeout`` sends its keep-alive: a third of it, as HTCondor's."""
    return max(0.1, timeout / 3.0)


def not_responding_timeout(config: Config, subsystem: str) -> tuple[int, str | None]:
    """``<SUBSYS>_NOT_RESPONDING_TIMEOUT``, else ``NOT_RESPONDING_TIMEOUT``, else an hour; with a
    warning naming the knob when the value set is not a whole number of seconds of at least 1."""
    for name in (f"{subsystem.upper()}_NOT_RESPONDING_TIMEOUT", "NOT_RESPONDING_TIMEOUT"):
        try:
            value = config.get_int(name, subsystem.upper())
        except (ConfigError, ValueError, OverflowError) as e:
            return DEFAULT_TIMEOUT, f"{name}: {e}; using {DEFAULT_TIMEOUT} s"
        if value is None:
            continue
        if value < 1:
            return DEFAULT_TIMEOUT, f"{name} = {value} is below 1 second; using {DEFAULT_TIMEOUT} s"
        return value, None
    return DEFAULT_TIMEOUT, None


def encode_beat(timeout: float) -> bytes:
    return _WORD + b" " + str(int(timeout)).encode() + b"\n"


def decode_beats(data: bytes) -> tuple[list[float], bytes]:
    """The timeouts of the complete keep-alive lines in ``data``, and the incomplete rest.
    A line that is not a keep-alive is skipped."""
    *lines, rest = data.split(b"\n")
    timeouts = []
    for line in lines:
        word, _, value = line.strip().partition(b" ")
        if word != _WORD:
            continue
        try:
            timeout = float(value)
        except ValueError:
            continue
        if timeout >= 1:
            timeouts.append(timeout)
    return timeouts, rest
