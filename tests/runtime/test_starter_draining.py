"""A starter the startd has forgotten is held until its events are all read (``Starters._forget``).

A forked starter's event-reading task is reachable only through its pipe's protocol, which
holds the stream weakly; once the fork server has told the starter's end and the startd has
forgotten the starter (its exit handled), nothing else held the task, and the collector
destroyed it while it still waited ("Task was destroyed but it is pending!" in the StartdLog).
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from htcpool.protocol import startd as m
from tests.runtime.inprocess import run
from tests.runtime.test_startd_service import Startd, job, settle


def test_a_forgotten_starter_is_held_until_its_events_are_read(tmp_path: Path) -> None:
    async def test() -> None:
        s = Startd(tmp_path)
        await s.begin()
        cid = await s.running(job(tmp_path))
        [starter] = s.started
        starter.exits(0)
        starter.done = False  # its exit is handled, its reader not yet at the end
        await settle()
        assert not s.service.starters.running  # forgotten by the startd
        held = weakref.ref(starter)
        s.started.clear()
        del starter
        gc.collect()
        alive = held()
        assert alive is not None, "a starter whose events are still being read was let go"
        alive.done = True
        del alive
        await s.service.handle(m.ActivateClaim(cid, job(tmp_path)))  # the claim's next job: its
        await settle()  # starter's end lets the drained one go
        s.started[0].exits(0)
        await settle()
        gc.collect()
        assert held() is None, "a drained starter is still held"

    run(test)
