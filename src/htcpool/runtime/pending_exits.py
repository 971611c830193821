"""Job exits a startd has not yet handed to their schedd, kept on disk so that a restart resends them.

A starter's report that its job exited is the one message whose loss makes a finished job run
again: the schedd would find the claim gone and send the job back to Idle. The startd writes
each such report here before it posts it and forgets it once the schedd has answered it. A
startd that starts finds what its predecessor left (it was killed, or stopped with the report
still in its outbox), posts it again, and until it is delivered answers for its claim as for a
claim whose job has exited: a schedd's ``Reconnect`` gets alive, Idle and the job's id, and its
keep-alives are taken, so the schedd adopts the claim and completes the job instead of running
it a second time (the manual's "Job Leases": the execute side keeps what the submit side has
not yet heard).

One JSON file per startd, written whole (a temporary file, synced, renamed into place); a report
older than ``KEEP`` seconds when loaded is dropped, as the outbox would have given up on it; a
file that cannot be read is set aside with a warning rather than stopping the startd.

``add`` and ``delivered`` write at once; the startd's event loop uses ``record`` and ``forget``
instead, which change the table at once and leave the writing to one worker thread, so a sync
of the disk (milliseconds) never holds up the loop's other slots. The worker writes the newest
table each time it runs (a burst of exits costs one write, not one each); ``record``'s answer is
done once a table holding the exit is on disk (a write that fails is a warning: the exit still
goes out). An exit its starter noted (``exit_notes``) is on disk already: ``record`` keeps it in
memory only, its answer done at once, the table never holds it, and its note is removed when
the schedd has answered; a startd killed meanwhile leaves the note to the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from htcpool import protocol
from htcpool.protocol import JobUpdate
from htcpool.runtime.exit_notes import SUFFIX as NOTE_SUFFIX
from htcpool.runtime.exit_notes import ExitNote, note_path, read_notes, remove_note

log = logging.getLogger("htcpool.startd")
KEEP = 3600.0  # seconds: what the outbox would spend trying (its give_up) and more


@dataclass(frozen=True)
class PendingExit:
    """One undelivered exit: for which schedd, which job (``cluster.proc``), on which slot."""

    schedd: str
    job: str
    slot: str
    update: JobUpdate
    at: float


class PendingExits:
    def __init__(self, path: Path, clock: Callable[[], float], notes: Path | None = None,
                 convert: Callable[[ExitNote], JobUpdate] | None = None) -> None:
        self.path = path
        self.clock = clock
        #: the starters' exit notes (``exit_notes``), removed once this table holds them, and how a
        #: note becomes the startd's report (None: no notes are read)
        self.notes = notes if convert is not None else None
        self.convert = convert
        self.items: dict[str, PendingExit] = self._load()
        self._writer: ThreadPoolExecutor | None = None  # started on the first ``record``
        self._wanted: tuple[int, list[dict[str, Any]]] = (0, [])  # the newest table to write, numbered
        self._written = 0  # the number of the newest table on disk (the worker's)
        self._lock = threading.Lock()
        self._in_notes: set[str] = set()  # claim ids of recorded exits kept on disk by their notes only

    def get(self, claim_id: str) -> PendingExit | None:
        return self.items.get(claim_id)

    def add(self, schedd: str, job: str, slot: str, update: JobUpdate) -> None:
        self.items[update.claim_id] = PendingExit(schedd, job, slot, update, self.clock())
        self._save()
        self.drop_note(update.claim_id)

    def adopt(self, ours: Callable[[str], bool] = lambda _: False, only: str = "*") -> list[PendingExit]:
        """The exits starters noted for a startd that died before it heard them (``exit_notes``;
        ``only``: the note file names to read), kept as pending exits and returned; their notes go
        once the table is on disk. A note older than ``KEEP`` is dropped, as an old row is; one of
        a claim this startd knows (``ours``: its own starter's, its report on the way) is left."""
        if self.notes is None or self.convert is None:
            return []
        now = self.clock()
        taken: list[PendingExit] = []
        done: list[ExitNote] = []
        for note in read_notes(self.notes, only):
            claim_id = note.context["claim_id"]
            if ours(claim_id) or claim_id in self._in_notes:
                continue
            done.append(note)
            if claim_id not in self.items and now - note.at <= KEEP:
                log.info("the exit of job %s on %s, noted by its starter, is kept for %s",
                         note.context["job"], note.context["slot"], note.context["schedd"])
                item = self.items[claim_id] = PendingExit(note.context["schedd"], note.context["job"],
                                                          note.context["slot"], self.convert(note), now)
                taken.append(item)
        if taken:
            self._save()
        for note in done:
            with contextlib.suppress(OSError):
                note.path.unlink()
        return taken

    def noted(self, claim_id: str) -> PendingExit | None:
        """A note left for ``claim_id`` (a claim this startd does not know) taken now, when there
        is one: its starter may have written it after this startd started."""
        if self.notes is None or not note_path(self.notes, claim_id).exists():
            return None
        taken = self.adopt(only=note_path(self.notes, claim_id).name)
        return taken[0] if taken else None

    def any_notes(self) -> bool:
        return self.notes is not None and any(self.notes.glob("*" + NOTE_SUFFIX))

    def drop_note(self, claim_id: str) -> None:
        """The starter's note of this claim's exit is no longer needed."""
        if self.notes is not None:
            remove_note(self.notes, claim_id)

    def delivered(self, claim_id: str) -> None:
        if self._let_go(claim_id):
            self._save()

    def record(self, schedd: str, job: str, slot: str, update: JobUpdate) -> asyncio.Future[None]:
        """``add`` written by the worker thread; the answer is done once it is on disk (the
        starter's note then goes). An exit its starter noted is on disk already, in that note:
        the note stays until the schedd has the exit (``forget``) and the table is not written
        for it, two disk writes fewer on the way from a job's end to the next job's start."""
        self.items[update.claim_id] = PendingExit(schedd, job, slot, update, self.clock())
        if self.notes is not None and note_path(self.notes, update.claim_id).exists():
            self._in_notes.add(update.claim_id)
            noted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            noted.set_result(None)
            return noted
        saving = self._save_soon()
        saving.add_done_callback(lambda _: self.drop_note(update.claim_id))
        return saving

    def forget(self, claim_id: str) -> None:
        """``delivered`` written by the worker thread (an exit kept in its note: the note goes)."""
        if self._let_go(claim_id):
            self._save_soon()

    def _let_go(self, claim_id: str) -> bool:
        """The schedd has the claim's exit: out of the table and its note removed; whether the
        table on disk held it (and must be written again)."""
        in_table = self.items.pop(claim_id, None) is not None and claim_id not in self._in_notes
        self._in_notes.discard(claim_id)
        self.drop_note(claim_id)
        return in_table

    def _save_soon(self) -> asyncio.Future[None]:
        number = self._wanted[0] + 1
        self._wanted = (number, self._rows())
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pending-exits")
        return asyncio.get_running_loop().run_in_executor(self._writer, self._write_newest, number)

    def _write_newest(self, number: int) -> None:
        """In the worker: write the newest table unless one at least as new as ``number`` is on disk."""
        with self._lock:
            if self._written >= number:
                return
            newest, rows = self._wanted
            try:
                self._write(rows)
            except OSError as e:
                log.warning("%s: cannot be written (%s); a restarted startd will not resend these exits",
                            self.path, e)
            self._written = newest

    def close(self) -> None:
        """Let the worker finish what it was given."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def _load(self) -> dict[str, PendingExit]:
        try:
            rows = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("%s: unreadable, set aside (%s)", self.path, e)
            self.path.replace(self.path.with_suffix(".damaged"))
            return {}
        out: dict[str, PendingExit] = {}
        now = self.clock()
        for row in rows if isinstance(rows, list) else []:
            try:
                item = _from_row(row)
            except (KeyError, TypeError, ValueError, protocol.ProtocolError) as e:
                log.warning("%s: a pending exit skipped: %s", self.path, e)
                continue
            if now - item.at <= KEEP:
                out[item.update.claim_id] = item
        return out

    def _rows(self) -> list[dict[str, Any]]:
        return [{"schedd": i.schedd, "job": i.job, "slot": i.slot, "at": i.at,
                 "update": protocol.encode(i.update)} for claim_id, i in self.items.items()
                if claim_id not in self._in_notes]

    def _save(self) -> None:
        number = self._wanted[0] + 1
        self._wanted = (number, self._rows())
        self._write_newest(number)

    def _write(self, rows: list[dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(rows, f)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(self.path)


def _from_row(row: Any) -> PendingExit:
    update = protocol.decode(row["update"])
    if not isinstance(update, JobUpdate):
        raise ValueError(f"not a job update: {type(update).__name__}")
    return PendingExit(str(row["schedd"]), str(row["job"]), str(row["slot"]), update, float(row["at"]))


__all__ = ["KEEP", "PendingExit", "PendingExits"]
