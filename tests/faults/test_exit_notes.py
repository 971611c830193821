"""A job that ends while its startd is being killed is completed once, never run again
(runtime/exit_notes.py; issue: a completed job is never run again).

The attack: the startd is stopped (SIGSTOP) while a job runs, so it reads nothing more; the job
ends, its starter reports into a pipe nobody reads; then the startd is killed (SIGKILL) and the
master starts another. Without the starter's own note of the exit, the report died with the
startd, the new startd did not know the claim, the schedd sent the job back to Idle and it ran
a second time.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.protocol import JobEvent, JobUpdate
from htcpool.runtime.exit_notes import ExitNote, note_path, write_note
from htcpool.runtime.pending_exits import KEEP, PendingExits
from htcpool.runtime.starters import exit_update
from tests.e2e.pool import LivePool, script
from tests.runtime.inprocess import T0, Clock

CONTEXT = {"claim_id": "c1#secret", "slot": "slot1_1@exec.test", "schedd": "schedd@pool.test", "job": "4.2"}
EVENT = {"event": "exited", "exit_code": 3, "exit_signal": None, "wall": 1.5, "user_cpu": 0.25, "killed": False}


def _convert(note: ExitNote) -> JobUpdate:
    return exit_update(note.context["claim_id"], note.context["slot"], note.event, killed=False)


def test_a_note_becomes_a_pending_exit_and_goes(tmp_path: Path) -> None:
    notes = tmp_path / "startd.exits.d"
    notes.mkdir()
    write_note(str(note_path(notes, CONTEXT["claim_id"])), CONTEXT, EVENT)
    clock = Clock()
    clock.now = os.path.getmtime(note_path(notes, CONTEXT["claim_id"]))
    exits = PendingExits(tmp_path / "startd.exits.json", clock, notes, _convert)
    exits.adopt()
    pending = exits.get(CONTEXT["claim_id"])
    assert pending is not None and (pending.schedd, pending.job, pending.slot) == ("schedd@pool.test", "4.2",
                                                                                    CONTEXT["slot"])
    assert pending.update.event == JobEvent.EXITED and pending.update.exit_code == 3 and not pending.update.killed
    assert list(notes.iterdir()) == []  # the table holds it now: the note is gone
    assert PendingExits(tmp_path / "startd.exits.json", clock).get(CONTEXT["claim_id"]) is not None  # on disk


def test_a_late_note_is_taken_on_demand_and_a_note_of_a_known_claim_is_left(tmp_path: Path) -> None:
    notes = tmp_path / "startd.exits.d"
    notes.mkdir()
    clock = Clock()
    exits = PendingExits(tmp_path / "startd.exits.json", clock, notes, _convert)
    assert exits.noted(CONTEXT["claim_id"]) is None and not exits.any_notes()
    write_note(str(note_path(notes, CONTEXT["claim_id"])), CONTEXT, EVENT)  # after the startd started
    clock.now = os.path.getmtime(note_path(notes, CONTEXT["claim_id"]))
    assert exits.adopt(lambda claim_id: claim_id == CONTEXT["claim_id"]) == []  # its own starter's
    assert exits.any_notes()
    taken = exits.noted(CONTEXT["claim_id"])  # a schedd asks about a claim this startd does not hold
    assert taken is not None and taken.job == "4.2" and not exits.any_notes()
    exits.delivered(CONTEXT["claim_id"])
    assert exits.get(CONTEXT["claim_id"]) is None


def test_a_damaged_or_old_note_is_set_aside_or_dropped_and_the_startd_goes_on(tmp_path: Path) -> None:
    notes = tmp_path / "startd.exits.d"
    notes.mkdir()
    (notes / "torn.json").write_text('{"context": {"claim_id": ')
    (notes / "wrong.json").write_text(json.dumps({"context": {"claim_id": "x"}, "event": {}}))
    write_note(str(note_path(notes, CONTEXT["claim_id"])), CONTEXT, EVENT)
    clock = Clock()
    clock.now = T0 + 10 * KEEP  # long after the note was written
    exits = PendingExits(tmp_path / "startd.exits.json", clock, notes, _convert)
    exits.adopt()
    assert exits.items == {}
    assert sorted(p.name for p in notes.iterdir()) == ["torn.damaged", "wrong.damaged"]


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[LivePool]:
    live = LivePool(tmp_path / "p")
    live.start()
    yield live
    live.stop("fast")


def test_a_job_that_ended_while_its_startd_was_killed_is_completed_once(pool: LivePool, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.touch()
    runs.chmod(0o666)
    starts = tmp_path / "starts"
    starts.touch()
    starts.chmod(0o666)
    exe = script(pool.jobs_dir, "job.sh", 'echo start >> "$2"\nsleep 2\necho run >> "$1"\n')
    cluster = pool.submit(f"executable = {exe}\narguments = {runs} {starts}\nqueue\n")
    pool.wait_for(lambda: starts.read_text(), 60, "the job to start", show=lambda: pool.jobs())
    startd = pool.pid_of("startd")
    notes = pool.layout.spool / "startd.exits.d"
    os.kill(startd, signal.SIGSTOP)  # it hears nothing more: the starter's report stays in the pipe
    try:
        pool.wait_for(lambda: runs.read_text() and list(notes.glob("*.json")), 30,
                      "the job's end and its starter's note", show=lambda: (runs.read_text(), list(notes.iterdir())))
    finally:
        os.kill(startd, signal.SIGKILL)
    pool.wait_restarted("startd", startd, timeout=60)
    pool.wait_for(lambda: pool.history(f"ClusterId == {cluster}"), 60, "the job in the history",
                  show=lambda: (pool.jobs(), runs.read_text()))
    assert (runs.read_text(), starts.read_text()) == ("run\n", "start\n"), "the job ran more than once"
    [done] = pool.history(f"ClusterId == {cluster}")
    assert done.get("ExitCode") == 0 and done.get("JobStatus") == 4, done
    pool.wait_for(lambda: not list(notes.glob("*.json")), 30, "the note removed once the exit was kept",
                  show=lambda: list(notes.iterdir()))
