"""States, activities and the numbered transition table of a slot.

Rules of this module:

* The table is data. ``TRANSITIONS`` maps ``(state, activity)`` and an ``Event``
  to the next ``(state, activity)`` and the transition number used by HTCondor's
  manual ("State and Activity Transitions", numbers 1-37). Transitions the manual
  does not number (Cleaning, deletion of dynamic slots, fast kills from Busy, a
  Drained slot claimed for a job the draining START accepts) carry number 0.
* ``step()`` is the only way a slot changes state; an event the table does not
  list for the current pair raises ``IllegalTransition`` naming both.
* Which event to send is decided elsewhere (``evaluation`` for expressions,
  ``machine`` for messages and timers); this module knows nothing of ClassAds.
* ``transition_diagram()`` renders the table (Graphviz dot) for the docs.
* ``CLAIMED_LIKE`` and ``CLAIMED_OR_MATCHED`` are the one definition of the states in
  which a claim (or a match) holds a slot.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from htcpool.startd.errors import IllegalTransition


class State(enum.Enum):
    """Slot states, with the names HTCondor advertises in ``State``."""

    OWNER = "Owner"
    UNCLAIMED = "Unclaimed"
    MATCHED = "Matched"
    CLAIMED = "Claimed"
    PREEMPTING = "Preempting"
    BACKFILL = "Backfill"
    DRAINED = "Drained"
    DELETE = "Delete"  # internal: a dynamic slot being returned to its parent


class Activity(enum.Enum):
    """Slot activities, with the names HTCondor advertises in ``Activity``."""

    IDLE = "Idle"
    BUSY = "Busy"
    RETIRING = "Retiring"
    VACATING = "Vacating"
    SUSPENDED = "Suspended"
    BENCHMARKING = "Benchmarking"
    KILLING = "Killing"
    CLEANING = "Cleaning"
    NONE = "None"


class Event(enum.Enum):
    """What can move a slot; the reason a transition happens."""

    IS_OWNER_FALSE = "IS_OWNER is false"
    IS_OWNER_TRUE = "IS_OWNER is true"
    RUN_BENCHMARKS = "RunBenchmarks is true"
    BENCHMARKS_DONE = "benchmarks finished"
    CLAIM = "claim request accepted"
    MATCH = "negotiator match notification"
    START_BACKFILL = "START_BACKFILL is true"
    MATCH_GONE = "match timed out, START false or vacate"
    PREEMPT_VACATE = "preempt: vacate the job"
    PREEMPT_KILL = "preempt: kill the job"
    ACTIVATE = "claim activated"
    STARTER_EXITED = "starter exited"
    RETIRE = "retire the claim"
    SUSPEND = "SUSPEND is true"
    CONTINUE = "CONTINUE is true"
    UNRETIRE = "preempting claim went away"
    KILL = "KILL is true"
    FINAL_UPDATE = "starter sent its final update"
    PREEMPTION_DONE_OWNER = "starter gone, back to the owner"
    PREEMPTION_DONE_CLAIMED = "starter gone, preempting claim takes over"
    BACKFILL_STARTED = "backfill client running"
    BACKFILL_EXITED = "backfill client exited"
    EVICT_BACKFILL = "kill the backfill client"
    BACKFILL_TO_OWNER = "backfill ended toward Owner"
    BACKFILL_TO_CLAIMED = "backfill ended toward Claimed"
    BACKFILL_TO_MATCHED = "backfill ended toward Matched"
    ALL_DRAINED = "every slot is drained"
    DRAIN_END = "draining finalized or cancelled"
    DRAIN_START = "draining started"
    DELETE = "dynamic slot released"


#: A claim holds the slot: Claimed, and Preempting while the claim ends.
CLAIMED_LIKE: frozenset[State] = frozenset({State.CLAIMED, State.PREEMPTING})
#: A claim holds the slot or a match is about to become one: a job may run or arrive, so
#: the startd does not finish shutting down, nor restart to reconfigure.
CLAIMED_OR_MATCHED: frozenset[State] = CLAIMED_LIKE | {State.MATCHED}


@dataclass(frozen=True, slots=True)
class Transition:
    """One row of the table."""

    number: int
    source: tuple[State, Activity]
    event: Event
    target: tuple[State, Activity]


S, A, E = State, Activity, Event
_ROWS: tuple[tuple[int, State, Activity, Event, State, Activity], ...] = (
    (1, S.OWNER, A.IDLE, E.IS_OWNER_FALSE, S.UNCLAIMED, A.IDLE),
    (2, S.UNCLAIMED, A.IDLE, E.IS_OWNER_TRUE, S.OWNER, A.IDLE),
    (3, S.UNCLAIMED, A.IDLE, E.RUN_BENCHMARKS, S.UNCLAIMED, A.BENCHMARKING),
    (4, S.UNCLAIMED, A.BENCHMARKING, E.BENCHMARKS_DONE, S.UNCLAIMED, A.IDLE),
    (5, S.UNCLAIMED, A.IDLE, E.CLAIM, S.CLAIMED, A.IDLE),
    (5, S.UNCLAIMED, A.BENCHMARKING, E.CLAIM, S.CLAIMED, A.IDLE),
    (0, S.OWNER, A.IDLE, E.CLAIM, S.CLAIMED, A.IDLE),
    (6, S.UNCLAIMED, A.IDLE, E.MATCH, S.MATCHED, A.IDLE),
    (6, S.UNCLAIMED, A.BENCHMARKING, E.MATCH, S.MATCHED, A.IDLE),
    (6, S.OWNER, A.IDLE, E.MATCH, S.MATCHED, A.IDLE),
    (7, S.UNCLAIMED, A.IDLE, E.START_BACKFILL, S.BACKFILL, A.IDLE),
    (8, S.MATCHED, A.IDLE, E.MATCH_GONE, S.OWNER, A.IDLE),
    (9, S.MATCHED, A.IDLE, E.CLAIM, S.CLAIMED, A.IDLE),
    (10, S.CLAIMED, A.IDLE, E.PREEMPT_VACATE, S.PREEMPTING, A.VACATING),
    (10, S.CLAIMED, A.IDLE, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (11, S.CLAIMED, A.IDLE, E.ACTIVATE, S.CLAIMED, A.BUSY),
    (12, S.CLAIMED, A.BUSY, E.STARTER_EXITED, S.CLAIMED, A.IDLE),
    (12, S.CLAIMED, A.SUSPENDED, E.STARTER_EXITED, S.CLAIMED, A.IDLE),
    (13, S.CLAIMED, A.BUSY, E.RETIRE, S.CLAIMED, A.RETIRING),
    (14, S.CLAIMED, A.BUSY, E.SUSPEND, S.CLAIMED, A.SUSPENDED),
    (15, S.CLAIMED, A.SUSPENDED, E.CONTINUE, S.CLAIMED, A.BUSY),
    (16, S.CLAIMED, A.SUSPENDED, E.RETIRE, S.CLAIMED, A.RETIRING),
    (17, S.CLAIMED, A.SUSPENDED, E.PREEMPT_VACATE, S.PREEMPTING, A.VACATING),
    (17, S.CLAIMED, A.SUSPENDED, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (18, S.CLAIMED, A.RETIRING, E.PREEMPT_VACATE, S.PREEMPTING, A.VACATING),
    (18, S.CLAIMED, A.RETIRING, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (18, S.CLAIMED, A.RETIRING, E.STARTER_EXITED, S.PREEMPTING, A.VACATING),
    (19, S.CLAIMED, A.RETIRING, E.UNRETIRE, S.CLAIMED, A.BUSY),
    (20, S.CLAIMED, A.RETIRING, E.SUSPEND, S.CLAIMED, A.SUSPENDED),
    (21, S.PREEMPTING, A.VACATING, E.KILL, S.PREEMPTING, A.KILLING),
    (22, S.PREEMPTING, A.VACATING, E.PREEMPTION_DONE_OWNER, S.OWNER, A.IDLE),
    (23, S.PREEMPTING, A.VACATING, E.PREEMPTION_DONE_CLAIMED, S.CLAIMED, A.IDLE),
    (24, S.PREEMPTING, A.KILLING, E.PREEMPTION_DONE_CLAIMED, S.CLAIMED, A.IDLE),
    (25, S.PREEMPTING, A.KILLING, E.PREEMPTION_DONE_OWNER, S.OWNER, A.IDLE),
    (26, S.BACKFILL, A.IDLE, E.BACKFILL_STARTED, S.BACKFILL, A.BUSY),
    (27, S.BACKFILL, A.BUSY, E.BACKFILL_EXITED, S.BACKFILL, A.IDLE),
    (28, S.BACKFILL, A.BUSY, E.EVICT_BACKFILL, S.BACKFILL, A.KILLING),
    (29, S.BACKFILL, A.KILLING, E.BACKFILL_EXITED, S.BACKFILL, A.IDLE),
    (30, S.BACKFILL, A.IDLE, E.BACKFILL_TO_OWNER, S.OWNER, A.IDLE),
    (31, S.BACKFILL, A.IDLE, E.BACKFILL_TO_CLAIMED, S.CLAIMED, A.IDLE),
    (32, S.BACKFILL, A.IDLE, E.BACKFILL_TO_MATCHED, S.MATCHED, A.IDLE),
    (33, S.DRAINED, A.RETIRING, E.ALL_DRAINED, S.DRAINED, A.IDLE),
    (34, S.DRAINED, A.IDLE, E.DRAIN_END, S.OWNER, A.IDLE),
    (35, S.DRAINED, A.RETIRING, E.DRAIN_END, S.OWNER, A.IDLE),
    (36, S.OWNER, A.IDLE, E.DRAIN_START, S.DRAINED, A.RETIRING),
    (37, S.UNCLAIMED, A.IDLE, E.DRAIN_START, S.DRAINED, A.RETIRING),
    (37, S.UNCLAIMED, A.BENCHMARKING, E.DRAIN_START, S.DRAINED, A.RETIRING),
    # Not numbered in the manual.
    (0, S.CLAIMED, A.BUSY, E.PREEMPT_VACATE, S.PREEMPTING, A.VACATING),
    (0, S.CLAIMED, A.BUSY, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (0, S.CLAIMED, A.BUSY, E.FINAL_UPDATE, S.CLAIMED, A.CLEANING),
    (0, S.CLAIMED, A.RETIRING, E.FINAL_UPDATE, S.CLAIMED, A.CLEANING),
    (0, S.CLAIMED, A.SUSPENDED, E.FINAL_UPDATE, S.CLAIMED, A.CLEANING),
    (0, S.CLAIMED, A.CLEANING, E.STARTER_EXITED, S.CLAIMED, A.IDLE),
    (0, S.CLAIMED, A.CLEANING, E.PREEMPT_VACATE, S.PREEMPTING, A.VACATING),
    (0, S.CLAIMED, A.CLEANING, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (0, S.PREEMPTING, A.VACATING, E.PREEMPT_KILL, S.PREEMPTING, A.KILLING),
    (0, S.OWNER, A.IDLE, E.DELETE, S.DELETE, A.NONE),
    (0, S.UNCLAIMED, A.IDLE, E.DELETE, S.DELETE, A.NONE),
    # A Drained slot claimed by a job the draining START accepts (command.cpp request_claim).
    (0, S.DRAINED, A.RETIRING, E.CLAIM, S.CLAIMED, A.IDLE),
)

TRANSITIONS: dict[tuple[State, Activity], dict[Event, Transition]] = {}
for _n, _s, _a, _e, _ts, _ta in _ROWS:
    TRANSITIONS.setdefault((_s, _a), {})[_e] = Transition(_n, (_s, _a), _e, (_ts, _ta))

#: Every numbered transition of the manual appears in the table.
NUMBERED = frozenset(row[0] for row in _ROWS if row[0])
assert NUMBERED == frozenset(range(1, 38)), sorted(set(range(1, 38)) - NUMBERED)


def step(state: State, activity: Activity, event: Event) -> Transition:
    """The transition ``event`` causes from ``(state, activity)``; raises when there is none."""
    row = TRANSITIONS.get((state, activity), {}).get(event)
    if row is None:
        raise IllegalTransition(event.name, f"{state.value}/{activity.value}")
    return row


def allowed(state: State, activity: Activity, event: Event) -> bool:
    """Whether the table has a row for ``event`` in ``(state, activity)``."""
    return event in TRANSITIONS.get((state, activity), {})


def transition_diagram() -> str:
    """The table as a Graphviz digraph (one node per pair, edges labelled with numbers)."""
    lines = ["digraph startd {", "  rankdir=LR;"]
    for transitions in TRANSITIONS.values():
        for t in transitions.values():
            src = f"{t.source[0].value}/{t.source[1].value}"
            dst = f"{t.target[0].value}/{t.target[1].value}"
            label = str(t.number) if t.number else ""
            lines.append(f'  "{src}" -> "{dst}" [label="{label} {t.event.name}"];')
    lines.append("}")
    return "\n".join(lines)
