"""Work that a request starts and may answer before it ends.

A daemon command such as condor_off -peaceful can last as long as the jobs do; the tool that
sent it must not wait that long. ``Background.run`` starts the work as a task, waits for it at
most ``answer_within`` seconds and says whether it finished; the task goes on otherwise, kept
referenced until it ends, and a failure is logged rather than lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("htcpool.background")


class Background:
    def __init__(self, answer_within: float) -> None:
        self.answer_within = answer_within
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, work: Coroutine[Any, Any, None], what: str) -> bool:
        """Start ``work``; True once it has finished, False when it is still going after
        ``answer_within`` seconds. An error it raises in that time is raised here."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._done(done, what))
        try:
            await asyncio.wait_for(asyncio.shield(task), self.answer_within)
        except TimeoutError:
            return False
        return True

    def _done(self, task: asyncio.Task[None], what: str) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed: %r", what, task.exception())

    def pending(self) -> int:
        """How many started pieces of work have not ended."""
        return len(self._tasks)
