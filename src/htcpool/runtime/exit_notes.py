"""A starter's own note of its job's exit, for a startd that dies before it hears of it.

A job's exit reaches its schedd through the startd, which keeps it on disk until the schedd has
it (``pending_exits``). One window was left: the job has ended and its starter is about to
report, or has reported into a pipe the startd never read, when the startd is killed. The
starter then sees its startd gone, the report is lost, the next startd does not know the claim,
and the schedd sends the job back to Idle: a job that had completed would run a second time
(issue: a completed job is never run again).

So the starter writes the exit down itself before it reports it: one small JSON file per claim
(``note_path``), written whole (a temporary file renamed into place), holding the report and
what the startd would add to it (the schedd, the job's id, the slot). It does so only for a job
that ended by itself: not for one its startd told it to kill, nor for one it killed because its
startd went away while the job still ran (that run is lost, as when an execute point is lost).
A kill or a lost startd that reaches the starter after the job's process has exited does not
count: the starter looks at the unreaped process first, so that exit is noted and reported.
The file is not synced: it guards against the startd being killed, not against the host
crashing, which takes the starter and its job down too; a sync would lengthen every job's
report by a disk write.

The next startd reads the notes when it starts (``PendingExits``, before it answers anyone),
keeps each as a pending exit and removes the note; a running startd keeps its own starter's
note as the exit's record until the schedd has the exit (``PendingExits.record``), and removes
it at once when that exit is one it does not keep. A note that cannot be read is set aside (``.damaged``) with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("htcpool.startd")
SUFFIX = ".json"


def note_path(directory: Path, claim_id: str) -> Path:
    """The note of the claim's job (claim ids hold characters no file name should)."""
    return directory / (hashlib.sha256(claim_id.encode()).hexdigest()[:32] + SUFFIX)


def write_note(path: str, context: Mapping[str, str], event: Mapping[str, Any]) -> None:
    """In the starter: the exit ``event`` and its ``context`` (claim_id, slot, schedd, job) at
    ``path``, whole or not at all; a failure is said on stderr (the starter's log) and the
    report still goes out."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w") as f:
            json.dump({"context": dict(context), "event": dict(event)}, f)
        os.replace(tmp, path)
    except OSError as e:
        print(f"starter: cannot write the exit note {path}: {e}", flush=True, file=sys.stderr)


@dataclass(frozen=True)
class ExitNote:
    """One note read back: the starter's ``exited`` event and its context (claim_id, slot,
    schedd, job)."""

    path: Path
    context: dict[str, str]
    event: dict[str, Any]
    at: float  #: when it was written (the file's modification time)


def read_notes(directory: Path, pattern: str = "*") -> list[ExitNote]:
    """Every readable note in ``directory`` (those ``pattern`` names); unreadable ones set aside
    with a warning."""
    out: list[ExitNote] = []
    for path in sorted(directory.glob(pattern)) if directory.is_dir() else []:
        if path.suffix != SUFFIX:
            continue
        try:
            data = json.loads(path.read_text())
            context = {key: str(data["context"][key]) for key in ("claim_id", "slot", "schedd", "job")}
            event = data["event"]
            if not isinstance(event, dict):
                raise TypeError("the event is not an object")
            out.append(ExitNote(path, context, event, path.stat().st_mtime))
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("%s: an exit note that cannot be read, set aside (%s)", path, e)
            with contextlib.suppress(OSError):
                path.replace(path.with_suffix(".damaged"))
    return out


def remove_note(directory: Path, claim_id: str) -> None:
    with contextlib.suppress(OSError):
        note_path(directory, claim_id).unlink()


__all__ = ["SUFFIX", "ExitNote", "note_path", "read_notes", "remove_note", "write_note"]
