"""A startd keeps job exits on disk until its schedd has them (``runtime/pending_exits.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from htcpool.protocol import JobEvent, JobUpdate, Ok, Reconnect, ReconnectReply
from htcpool.protocol.startd import UNKNOWN_CLAIM, Alive
from htcpool.runtime.pending_exits import KEEP, PendingExits
from tests.runtime.inprocess import T0, Clock, run
from tests.runtime.test_startd_service import Startd

EXIT = JobUpdate("c1", "slot1_1@exec.test", JobEvent.EXITED, exit_code=3)


def test_an_exit_is_kept_until_delivered_and_read_back_by_the_next_startd(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "startd.exits.json"
    exits = PendingExits(path, clock)
    exits.add("schedd@pool.test", "4.2", EXIT.slot, EXIT)
    again = PendingExits(path, clock)  # a restarted startd
    pending = again.get("c1")
    assert pending is not None and (pending.schedd, pending.job, pending.update) == ("schedd@pool.test", "4.2", EXIT)
    again.delivered("c1")
    assert PendingExits(path, clock).items == {}


def test_exits_recorded_from_the_event_loop_are_written_by_the_worker_in_order(tmp_path: Path) -> None:
    """``record`` is done once the exit is on disk; a burst ends with the newest table written."""
    clock = Clock()
    path = tmp_path / "startd.exits.json"
    exits = PendingExits(path, clock)

    async def test() -> None:
        await exits.record("schedd@pool.test", "4.2", EXIT.slot, EXIT)
        assert PendingExits(path, clock).get("c1") is not None
        others = [JobUpdate(f"c{n}", EXIT.slot, JobEvent.EXITED, exit_code=0) for n in range(2, 12)]
        saves = [exits.record("s", f"5.{n}", u.slot, u) for n, u in enumerate(others)]
        exits.forget("c1")
        await asyncio.gather(*saves)
        exits.close()

    asyncio.run(test())
    assert sorted(PendingExits(path, clock).items) == sorted(f"c{n}" for n in range(2, 12))


def test_old_exits_are_dropped_and_a_damaged_file_is_set_aside(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "startd.exits.json"
    PendingExits(path, clock).add("s", "1.0", EXIT.slot, EXIT)
    clock.now = T0 + KEEP + 1
    assert PendingExits(path, clock).items == {}
    path.write_text("{ not json")
    assert PendingExits(path, clock).items == {}
    assert path.with_suffix(".damaged").exists()


def test_a_restarted_startd_answers_for_a_claim_whose_exit_is_pending(tmp_path: Path) -> None:
    """The schedd's reconnect finds the claim alive, Idle, with the job named, and a keep-alive is
    taken, until the exit is delivered; then the claim is unknown."""
    first = Startd(tmp_path)
    first.service.exits.add("schedd@pool.test", "4.2", EXIT.slot, EXIT)
    second = Startd(tmp_path)  # the same pool directory: what the first left is read back

    async def test() -> None:
        await second.begin()
        assert [m for m in second.posted.of(JobUpdate) if m == EXIT]  # sent again at start
        reply = await second.service.handle(Reconnect("c1", "schedd@pool.test"))
        assert reply == ReconnectReply("c1", True, EXIT.slot, "Idle", "4.2")
        assert await second.service.handle(Alive("c1")) == Ok()
        second.service.exits.delivered("c1")
        assert await second.service.handle(Alive("c1")) == Ok(UNKNOWN_CLAIM)
        assert (await second.service.handle(Reconnect("c1", "schedd@pool.test"))).alive is False

    run(test)
