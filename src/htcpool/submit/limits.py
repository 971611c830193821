"""How much one submit description may ask for before condor_submit refuses it.

A submit description is input from a user, and a few lines can ask for unbounded
work: ``queue 1e10`` (ten billion job ads in memory), ``include : /dev/zero`` or
``queue x from /dev/zero`` (a file that never ends), a 400-digit number where an
integer belongs. Each is stopped with a clear error before it costs much memory or
time (docs/reliability.md):

* ``MAX_QUEUE_COUNT``: the count of one queue statement (and so any one ProcId) is
  at most 2**31 - 1, as HTCondor keeps ProcId in a 32-bit integer;
* ``max_jobs_per_submission`` (``SubmitSettings``, from the knob
  ``MAX_JOBS_PER_SUBMISSION``, default 20000 in HTCondor's table): the jobs one
  description builds at once are counted before any is built, so condor_submit
  refuses with the schedd's own message instead of building ads the schedd would
  refuse; 0 (the default of ``SubmitSettings()``, for the simulator and the
  in-process API) leaves the count to the schedd. A late-materialization factory
  builds one job here and is left to the schedd;
* ``MAX_INPUT_BYTES``: the submit file, an included file and a ``queue … from``
  file are read at most this far (``read_limited``); a longer one is refused. It
  is far above any real description (a million 30-character item lines) and stops
  endless files like ``/dev/zero`` after a fraction of a second;
* ``check_integer``: an integer command (``max_materialize``, ``max_idle``) must
  fit in HTCondor's 32 bits.
"""

from __future__ import annotations

from typing import BinaryIO

from htcpool.submit.errors import SubmitError

#: the largest queue count and ProcId: HTCondor keeps ProcId in a 32-bit integer
MAX_QUEUE_COUNT = 2**31 - 1

#: the most bytes read from one submit file, include file or queue item file (32 MiB)
MAX_INPUT_BYTES = 32 * 2**20


class InputTooLarge(SubmitError):
    """A file read by condor_submit is longer than ``MAX_INPUT_BYTES`` (or never ends)."""


def read_limited(stream: BinaryIO, name: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """At most ``limit`` bytes of ``stream``; ``InputTooLarge`` naming ``name`` if there are more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputTooLarge(f"{name} is larger than {limit // 2**20} MiB (condor_submit reads at most "
                            f"that much of a submit, include or queue item file)")
    return data


def decode_text(data: bytes, name: str) -> str:
    """``data`` as text: UTF-8, with a clear error for bytes that are not, or for NUL bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SubmitError(f"{name}, line {line}: not valid UTF-8 text (byte 0x{data[e.start]:02x} "
                          f"at offset {e.start})") from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise SubmitError(f"{name}, line {line}: contains a NUL byte (a submit description is text)")
    return text


def clip(text: str, most: int = 60) -> str:
    """``text`` cut for an error message (a 400-digit number is not echoed whole)."""
    return text if len(text) <= most else f"{text[: most - 1]}… ({len(text)} characters)"


def check_integer(name: str, value: int) -> int:
    """``value`` if it fits HTCondor's 32-bit integers; else ``SubmitError`` naming ``name``."""
    if not -(2**31) <= value <= MAX_QUEUE_COUNT:
        raise SubmitError(f"{name} = {clip(str(value))} is out of range (at most {MAX_QUEUE_COUNT})")
    return value
