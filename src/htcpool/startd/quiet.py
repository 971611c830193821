"""Quiet machines: periodic polls that can only move the poll's own times.

A periodic poll (``Startd._poll``) skips the settled slots (``settle``). When *every* slot of the
machine is settled, the poll still recomputes the machine's load, marks every slot accounted,
evaluates nothing and schedules the next poll: on a busy pool with the default policy that is
most polls (a machine hears a message every few minutes and polls every ``POLLING_INTERVAL``).
Such a poll changes nothing else when the machine is *quiet*, checked once, after a poll:

* every slot is settled and none waits for a held start, and nothing is being drained or shut down;
* the load is steady: each slot's queue of load samples already holds only the sample the next
  poll would push (so the queue, the slot's ``CondorLoadAvg``, the owner's load and the totals
  stay as they are, and so does whether the machine polls fast, ``dynamic.needs_fast_poll``);
* no ``STARTD_SLOT_ATTRS`` are cross-advertised and no ad waits to be sent.

Until a message, an evaluation or a timer other than the poll reaches the machine (each ends the
quiet spell), ``Startd.handle_timer`` then does for a due poll only what that poll would have
changed: the clock of the evaluation context, the time of the last load sample and of each slot's
accounting, the drain estimate's reset and the next poll's time. A poll at which the periodic
update is due (``UPDATE_INTERVAL``: every slot is sent again) is a full one, as before; so is one
at which another timer of the machine is due. ``tests/startd/test_quiet.py`` drives machines
with and without quiet spells and compares every action and ad.

A driver may also leave the quiet polls out altogether (the simulator's, which would otherwise
spend a third of its events on them): ``Startd.quiet_deadline`` says when the machine has more
to do than a quiet poll, and ``Startd.catch_up`` makes, before anything else reaches the machine,
the last of the polls it missed (each overwrites what the one before set), counting their times
one interval at a time as the polls would have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.startd import dynamic

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

__all__ = ["QuietSpell", "quiet_spell"]


@dataclass(frozen=True, slots=True)
class QuietSpell:
    """A machine's quiet spell: its polls come every ``interval`` and change nothing but their own
    times until ``until``, the earliest of its other timers."""

    interval: float
    until: float


def quiet_spell(startd: Startd, interval: float) -> QuietSpell | None:
    """The quiet spell the machine enters after a poll (``interval``: the one it set for the next
    poll), or None when the next poll may do more than move its times (see the module docstring)."""
    slots = startd.slots
    if startd.draining is not None or startd.shutdown is not None or startd.changed or startd.cross_attrs \
            or startd.settings.startd_slot_attrs or len(startd.settled) != len(slots) \
            or any(slot.claim.start_at is not None for slot in slots) or not dynamic.loads_steady(startd):
        return None
    return QuietSpell(interval, startd.timers_deadline())
