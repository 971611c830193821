"""Backfill: the machine's one backfill client (HTCondor's BOINC manager) and its slots.

As in HTCondor (``BOINC_BackfillMgr``; the Backfill state in the HTCondor manual's "Machine States",
"Policy Configuration for Execution Points"), a machine runs at most one backfill client, however
many slots are in Backfill. The client is started under the name of the first slot that enters
Backfill/Idle (``StartBackfillClient(slot)``); the driver reports it running or gone with that same
slot name (``BackfillClientStarted``/``BackfillClientExited``). Rules:

* entering Backfill/Idle: with a pending destination, go there (30-32); with the client
  running, join it at once - Backfill/Busy (26); with no client, ask for one (unless one
  was asked for already and is starting);
* the client running: every slot waiting in Backfill/Idle joins it (26); if none is
  waiting any more, the client is not needed and is killed;
* a slot leaving Backfill/Busy (EVICT_BACKFILL, a match, a claim, vacate, shutdown:
  Backfill/Killing, 28) while other slots still use the client just leaves it - the
  client keeps running for them - and goes on at once (29, then 30-32); the last slot
  kills the client (``KillBackfillClient`` with the client's slot name) and waits for it
  to exit;
* the client gone: every slot using it goes Backfill/Idle (27 from Busy, 29 from
  Killing), then to its destination or, with none, asks for a new client.

``Slot.backfill_client`` says whether a slot uses the client; ``Startd.backfill_client``
is the slot name the client runs under (None: no client), ``Startd.backfill_running``
whether it has been reported running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol.startd import KillBackfillClient, StartBackfillClient
from htcpool.startd import transitions
from htcpool.startd.slot import Slot
from htcpool.startd.states import Activity, Event, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

A, S, E = Activity, State, Event
TOWARD = {S.OWNER: E.BACKFILL_TO_OWNER, S.CLAIMED: E.BACKFILL_TO_CLAIMED, S.MATCHED: E.BACKFILL_TO_MATCHED}


def toward(startd: Startd, slot: Slot, dest: State, now: float) -> None:
    """Leave Backfill for ``dest``: stop using the client first (28), else go now (30-32)."""
    slot.destination = dest
    if slot.activity is A.BUSY:
        transitions.change(startd, slot, E.EVICT_BACKFILL, now)
    elif slot.activity is A.IDLE:
        transitions.change(startd, slot, TOWARD[dest], now)


def enter_idle(startd: Startd, slot: Slot, now: float, depth: int) -> bool:
    """Backfill/Idle entered; True when the slot has already moved on."""
    if slot.destination is not None and slot.destination is not S.BACKFILL:
        transitions.change(startd, slot, TOWARD[slot.destination], now, depth + 1)
        return True
    if startd.backfill_running:
        slot.backfill_client = True
        transitions.change(startd, slot, E.BACKFILL_STARTED, now, depth + 1)
        return True
    if startd.backfill_client is None:
        startd.backfill_client = slot.name
        startd.emit(StartBackfillClient(slot.name))
    return False


def enter_killing(startd: Startd, slot: Slot, now: float, depth: int) -> bool:
    """Backfill/Killing entered: leave the client to the other slots, or kill it."""
    if slot.backfill_client and any(o.backfill_client for o in startd.slots if o is not slot):
        slot.backfill_client = False
        transitions.change(startd, slot, E.BACKFILL_EXITED, now, depth + 1)
        return True
    startd.emit(KillBackfillClient(startd.backfill_client or slot.name))
    return False


def client_started(startd: Startd, name: str, now: float) -> None:
    """The client runs: every slot waiting in Backfill/Idle uses it (26)."""
    startd.backfill_client = name
    startd.backfill_running = True
    waiting = [s for s in startd.slots if s.pair == (S.BACKFILL, A.IDLE) and s.destination is None]
    if not waiting:
        startd.emit(KillBackfillClient(name))
        return
    for slot in waiting:
        slot.backfill_client = True
        transitions.change(startd, slot, E.BACKFILL_STARTED, now)


def client_exited(startd: Startd, name: str, now: float) -> None:
    """The client is gone: its slots go Backfill/Idle (27/29) and on from there."""
    startd.backfill_client = None
    startd.backfill_running = False
    users = [s for s in startd.slots if s.backfill_client or (s.state is S.BACKFILL
                                                               and s.activity in (A.BUSY, A.KILLING))]
    for slot in users:
        slot.backfill_client = False
    for slot in users:
        if startd.is_live(slot) and slot.state is S.BACKFILL and slot.activity in (A.BUSY, A.KILLING):
            transitions.change(startd, slot, E.BACKFILL_EXITED, now)
