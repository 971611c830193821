"""The startd's messages to the schedds that hold its claims.

``ScheddLink`` finds a schedd by name through the collector (its ``MyAddress``, kept for two
seconds; the pool's address file when the collector knows none) and posts to it through the
daemon's outbox, one ordered queue per claim, so that a busy claim never waits behind another's
messages and a job's exit always precedes its claim's release.

A job's exit is the one report whose loss would run the job again (``pending_exits``): it is on
disk before it leaves, in the note its starter wrote (``exit_notes``) or else in the table, whose
worker thread writes it while nothing of its claim leaves; it is forgotten once the schedd has
answered. Queue names show the claim id without its secret (they appear in log lines). An exit on a claim the
startd keeps open may be answered with the claim's next activation (the schedd saves a message
that way), which ``take_activation`` hands to the startd as if it had come on its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from htcpool.classad import quote
from htcpool.protocol import JobUpdate, QueryAds
from htcpool.protocol import startd as m
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.runtime.local_names import local_schedd_name
from htcpool.runtime.pending_exits import PendingExit, PendingExits
from htcpool.startd.claim_ids import without_secret

log = logging.getLogger("htcpool.startd")

#: seconds a schedd's address found through the collector is used before it is looked up again
ADDRESS_TTL = 2.0

TakeActivation = Callable[[m.ActivateClaim], Awaitable[Any]]


class ScheddLink:
    """Where each claim's messages go, and their posting (see the module docstring)."""

    def __init__(self, daemon: Daemon, exits: PendingExits, take_activation: TakeActivation) -> None:
        self.daemon = daemon
        self.exits = exits
        self.take_activation = take_activation
        self.claim_schedd: dict[str, str] = {}  # claim id -> the name of the schedd that holds it
        self._urls: dict[str, tuple[float, str]] = {}  # schedd -> (when looked up, its address)
        self._looking: set[str] = set()  # schedds whose address is being looked up again
        self._saving: dict[str, asyncio.Future[None]] = {}  # claim id -> its job's exit being written
        #: this host's schedd, found by its address file when the collector has no ad of it; any
        #: other schedd (one flocking here) only through the collector, else the message waits
        #: in the outbox: given to this host's schedd it would release a claim it never asked for
        self.local_schedd = local_schedd_name(daemon.config)

    async def resolve(self, schedd: str) -> str | None:
        """The schedd's address. One known is used at once; when it is older than ADDRESS_TTL it is
        looked up again meanwhile, for the next message (a message waiting for the collector's
        answer held its claim's next job back a few milliseconds). A schedd that moved is found by
        the next try: a send to the old address fails and the outbox tries again."""
        cached = self._urls.get(schedd)
        if cached is None:
            return await self._look_up(schedd)
        if time.monotonic() - cached[0] >= ADDRESS_TTL and schedd not in self._looking:
            self._looking.add(schedd)
            asyncio.get_running_loop().create_task(self._look_up_again(schedd))
        return cached[1]

    async def _look_up_again(self, schedd: str) -> None:
        try:
            await self._look_up(schedd)
        except Exception:  # the address known stays; the next message asks again
            log.exception("looking up the address of %s failed", schedd)
        finally:
            self._looking.discard(schedd)

    async def _look_up(self, schedd: str) -> str | None:
        now = time.monotonic()
        ads = await self.daemon.collector_query(QueryAds("Scheduler", f"Name == {quote(schedd)}", ("MyAddress",)))
        url = next((str(ad["MyAddress"]) for ad in ads if "MyAddress" in ad), None)
        if url is None and schedd == self.local_schedd:  # the collector has no ad of it yet
            url = self.daemon.address_of("schedd")
        if url:
            self._urls[schedd] = (now, url)
        return url

    def to_schedd(self, schedd: str, message: Any, on_reply: Callable[[Any], Awaitable[None]] | None = None) -> None:
        """Post ``message`` to ``schedd`` in its claim's order; nothing of a claim leaves while its
        job's exit is being written to disk."""
        if not schedd:
            log.warning("no schedd known for %s", type(message).__name__)
            return
        claim_id = getattr(message, "claim_id", "")

        async def resolve() -> str | None:
            saving = self._saving.get(claim_id)
            if saving is not None:
                await asyncio.wait({saving})
            return await self.resolve(schedd)

        self.daemon.outbox.post(f"schedd:{schedd}:{without_secret(claim_id)}", message, resolve, on_reply=on_reply)

    def to_claim_schedd(self, claim_id: str, message: Any, fallback: str = "") -> None:
        self.to_schedd(self.claim_schedd.get(claim_id, fallback), message)

    def record_exit(self, schedd: str, job: str, update: JobUpdate) -> None:
        """A job's exit: on disk (by the worker thread), then to its schedd."""
        saving = self.exits.record(schedd, job, update.slot, update)
        if not saving.done():
            self._saving[update.claim_id] = saving
            saving.add_done_callback(lambda done: self._saved(update.claim_id, done))
        self.post_exit(schedd, update)

    def exit_of(self, claim_id: str) -> PendingExit | None:
        """The undelivered exit of a claim the startd does not hold: kept, or noted by a starter
        of the startd before this one (``exit_notes``) and posted at once."""
        known = self.exits.get(claim_id)
        if known is None:
            known = self.exits.noted(claim_id)
            if known is not None:
                self.post_exit(known.schedd, known.update)
        return known

    def late_notes(self, ours: Callable[[str], bool]) -> None:
        """Exits noted after the startd started by starters of the one before (their jobs ended
        as it died): kept and posted. The startd's own starters' notes (``ours``) are left to
        their reports."""
        if self.exits.any_notes():
            for item in self.exits.adopt(ours):
                self.post_exit(item.schedd, item.update)

    def _saved(self, claim_id: str, done: asyncio.Future[None]) -> None:
        if self._saving.get(claim_id) is done:
            del self._saving[claim_id]

    def post_exit(self, schedd: str, update: JobUpdate) -> None:
        """Posted at once, so that it keeps its place before the claim's release; forgotten once
        answered, and an activation in the answer goes to ``take_activation``."""
        async def delivered(reply: Any) -> None:
            self.exits.forget(update.claim_id)
            if isinstance(reply, m.ActivateClaim):
                try:
                    await self.take_activation(reply)
                except RequestRefused as e:
                    log.warning("the activation that answered the exit on claim %s was refused: %s",
                                update.claim_id.split("#")[0], e.detail)

        self.to_schedd(schedd, update, delivered)


__all__ = ["ADDRESS_TTL", "ScheddLink"]
