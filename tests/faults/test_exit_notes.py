"""A job that ends while its startd is being killed is completed once, never run again
(runtime/exit_notes.py; issue: a completed job is never run again).

The attack: the startd is stopped (SIGSTOP) while a job runs, so it reads nothing more; the job
ends, its starter reports into a pipe nobody reads; then the startd is killed (SIGKILL) and the
master starts another. Without the starter's own note of the exit, the report died with the
startd, the new startd did not know the claim, the schedd sent the job back to Idle and it ran
a second time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.protocol import Command, DaemonCommand, How, JobEvent, JobUpdate, Ok
from htcpool.protocol import startd as m
from htcpool.protocol.startd import UNKNOWN_CLAIM, Alive
from htcpool.runtime.exit_notes import ExitNote, note_path, write_note
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pending_exits import KEEP, PendingExits
from htcpool.runtime.starter import EventWriter, Starter
from htcpool.runtime.starters import exit_update
from tests.e2e.pool import LivePool, process_state, script
from tests.runtime.inprocess import T0, Clock, run
from tests.runtime.test_startd_service import Startd, job, settle
from tests.runtime.test_starter import make_spec
from tests.runtime.test_starter import run as starter_run
from tests.runtime.test_starter import script as starter_script
from tests.runtime.test_starter import start as starter_start

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


def test_a_noted_exit_stays_in_its_note_until_answered_and_the_table_is_not_written(tmp_path: Path) -> None:
    """An exit its starter noted is on disk in that note: recording it writes no table (the note is
    the record), a poll for late notes leaves it, a restarted startd takes it from the note, and
    once the schedd has it the note goes and nothing is left to send again."""
    notes = tmp_path / "startd.exits.d"
    notes.mkdir()
    table = tmp_path / "startd.exits.json"
    clock = Clock()
    exits = PendingExits(table, clock, notes, _convert)
    write_note(str(note_path(notes, CONTEXT["claim_id"])), CONTEXT, EVENT)
    update = _convert(ExitNote(note_path(notes, CONTEXT["claim_id"]), CONTEXT, EVENT, clock()))

    async def record(answered: bool) -> None:
        saved = exits.record(CONTEXT["schedd"], CONTEXT["job"], CONTEXT["slot"], update)
        assert saved.done()  # nothing to wait for
        assert exits.adopt() == [] and note_path(notes, CONTEXT["claim_id"]).exists()  # a late-note poll
        if answered:
            exits.forget(CONTEXT["claim_id"])
        exits.close()

    asyncio.run(record(answered=False))
    assert not table.exists()
    clock.now = os.path.getmtime(note_path(notes, CONTEXT["claim_id"]))
    restarted = PendingExits(table, clock, notes, _convert)  # the startd was killed before the answer
    assert [i.update for i in restarted.adopt()] == [update]
    write_note(str(note_path(notes, CONTEXT["claim_id"])), CONTEXT, EVENT)
    table.unlink()
    exits = PendingExits(table, clock, notes, _convert)
    asyncio.run(record(answered=True))
    assert list(notes.iterdir()) == []
    assert PendingExits(table, clock, notes, _convert).adopt() == [] and not table.exists()


def test_an_exit_without_a_note_is_written_to_the_table(tmp_path: Path) -> None:
    """No note (its starter could not write one): the table keeps the exit, as before notes."""
    notes = tmp_path / "startd.exits.d"
    notes.mkdir()
    table = tmp_path / "startd.exits.json"
    exits = PendingExits(table, Clock(), notes, _convert)
    update = JobUpdate(CONTEXT["claim_id"], CONTEXT["slot"], JobEvent.EXITED, exit_code=3)

    async def record() -> None:
        await exits.record(CONTEXT["schedd"], CONTEXT["job"], CONTEXT["slot"], update)
        exits.close()

    asyncio.run(record())
    assert PendingExits(table, Clock()).get(CONTEXT["claim_id"]) is not None


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


def test_a_noted_exit_the_schedd_no_longer_knows_is_dropped_once_answered(tmp_path: Path) -> None:
    """The next startd sends a note's exit at start; the schedd, which has let the claim go,
    answers ``unknown claim``: the exit is dropped from the table and from disk, and the claim
    is unknown from then on."""
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    notes = layout.spool / "startd.exits.d"
    notes.mkdir(parents=True)
    note = note_path(notes, CONTEXT["claim_id"])
    write_note(str(note), CONTEXT, EVENT)
    os.utime(note, (T0, T0))
    startd = Startd(tmp_path)

    async def test() -> None:
        await startd.begin()
        [sent] = [u for u in startd.posted.of(JobUpdate) if u.claim_id == CONTEXT["claim_id"]]
        assert (sent.event, sent.exit_code, sent.slot) == (JobEvent.EXITED, 3, CONTEXT["slot"])
        assert await startd.service.handle(Alive(CONTEXT["claim_id"])) == Ok()  # answered while pending
        await startd.posted.answer(sent, Ok(UNKNOWN_CLAIM))
        await asyncio.to_thread(startd.service.exits.close)
        assert startd.service.exits.get(CONTEXT["claim_id"]) is None
        assert await startd.service.handle(Alive(CONTEXT["claim_id"])) == Ok(UNKNOWN_CLAIM)

    run(test)
    assert list(notes.iterdir()) == []
    assert PendingExits(layout.spool / "startd.exits.json", startd.clock).items == {}


def test_a_job_that_ended_before_the_startd_killed_it_is_reported_as_it_ended(tmp_path: Path) -> None:
    """The startd vacates the claim (a hard kill) just as the job ends by itself: the starter
    says the kill found the job already ended (``killed`` false), and the startd reports that
    end as the job's own, so the schedd completes the job instead of running it again."""
    s = Startd(tmp_path)

    async def test() -> None:
        await s.begin()
        cid = await s.claim(job(tmp_path))
        await s.service.handle(m.ActivateClaim(cid, job(tmp_path)))
        await settle()
        assert await s.service.handle(DaemonCommand(Command.VACATE, How.FAST)) == Ok()
        await settle()
        [starter] = s.started
        assert starter.commands == ["hard_kill"]
        starter.on_event({"event": "exited", "exit_code": 0, "exit_signal": None, "wall": 1.0, "killed": False})
        await settle()
        [exited] = [u for u in s.posted.of(JobUpdate) if u.event is JobEvent.EXITED]
        assert (exited.exit_code, exited.killed) == (0, False), exited

    run(test)


def _starter_case(tmp_path: Path, body: str) -> tuple[dict[str, object], Path]:
    """A real starter whose job runs ``body``: stopped once the job has started, then its startd
    gone (stdin closed) before it is let go on. The ``exited`` event it reports, and where its
    note would be."""
    note = tmp_path / "note.json"
    spec = dataclasses.replace(make_spec(tmp_path, starter_script(tmp_path, body)), exit_note=str(note),
                               exit_context=CONTEXT)
    seen: dict[str, object] = {}

    async def test() -> None:
        handle, events, _ = await starter_start(spec)
        handle.process.send_signal(signal.SIGSTOP)  # the starter sees nothing of what follows
        try:
            await handle.close()  # the startd is gone
        finally:
            handle.process.send_signal(signal.SIGCONT)
        seen.update(await events.until("exited"))

    starter_run(test)
    return seen, note


def test_a_job_that_ended_before_its_startd_went_away_is_noted_as_it_ended(tmp_path: Path) -> None:
    """The job ends by a signal of its own; then, before its starter has looked, the startd goes
    away (the starter's ``abandon``, as when its stdin closes). The end came first, so it is the
    job's own, not a run the starter cut short: reported as it ended and noted for the next
    startd. Run in this process, so the order is the test's."""
    note = tmp_path / "note.json"
    spec = dataclasses.replace(make_spec(tmp_path, starter_script(tmp_path, "kill -TERM $$\n")),
                               exit_note=str(note), exit_context=CONTEXT)
    out = io.StringIO()
    starter = Starter(spec, EventWriter(out))
    before = starter.start()
    assert starter.proc is not None
    deadline = time.monotonic() + 10
    while process_state(starter.proc.pid) != "Z":  # ended, not yet reaped
        assert time.monotonic() < deadline, f"the job did not end: {process_state(starter.proc.pid)}"
        time.sleep(0.01)
    starter.abandon()
    status, rusage = starter.wait()
    starter.finish(before, status, rusage, time.monotonic())
    [exited] = [e for e in map(json.loads, out.getvalue().splitlines()) if e["event"] == "exited"]
    assert (exited["exit_signal"], exited["killed"]) == (signal.SIGTERM, False), exited
    data = json.loads(note.read_text())
    assert data["context"] == CONTEXT and data["event"]["exit_signal"] == signal.SIGTERM, data
    assert not data["event"]["killed"]


def test_a_job_still_running_when_its_startd_went_away_is_not_noted(tmp_path: Path) -> None:
    """Its starter kills it: that run is lost (the job runs again), so nothing is noted."""
    event, note = _starter_case(tmp_path, "sleep 30\n")
    assert event["exit_signal"] == signal.SIGKILL, event
    assert not note.exists()


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
    cluster = pool.submit(f"executable = {exe}\narguments = {runs} {starts}\nlog = job.log\nqueue\n")
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
    events = [line.split(" ")[0] for line in (pool.jobs_dir / "job.log").read_text().splitlines()
              if line[:4] in ("000 ", "001 ", "004 ", "005 ")]
    assert events == ["000", "001", "005"], f"one start and one end expected: {events}"
    pool.wait_for(lambda: not list(notes.glob("*.json")), 30, "the note removed once the exit was kept",
                  show=lambda: list(notes.iterdir()))
