"""Job states and the legal transitions between them, as a table.

Rules that the table does not show:

* ``TRANSITIONS[(state, event)]`` is the next state; a pair missing from the
  table is illegal and raises ``IllegalTransition`` naming the event and state.
* Removed and Completed jobs leave the queue when the schedd cleans up
  (Completed ones stay while ``LeaveJobInQueue`` is true); Removed has no way out.
* ``EnteredCurrentStatus`` changes with every transition; the queue does that.
* Status numbers are HTCondor's (``proc.h``); 8 Failed, 9 Blocked and 10
  Preparing are reserved there and unused here, as in the schedd.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from htcpool.schedd.errors import ScheddError


class JobStatus(IntEnum):
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7

    @property
    def label(self) -> str:
        return STATUS_NAMES[self]


STATUS_NAMES = {
    JobStatus.IDLE: "Idle", JobStatus.RUNNING: "Running", JobStatus.REMOVED: "Removed",
    JobStatus.COMPLETED: "Completed", JobStatus.HELD: "Held",
    JobStatus.TRANSFERRING_OUTPUT: "Transferring Output", JobStatus.SUSPENDED: "Suspended",
}


class JobEvent(Enum):
    START = "start"              # a shadow starts it on a claimed slot
    HOLD = "hold"                # condor_hold, a policy expression, or an error
    RELEASE = "release"          # condor_release or PeriodicRelease
    REMOVE = "remove"            # condor_rm or PeriodicRemove
    SUSPEND = "suspend"          # the execute point suspended it
    UNSUSPEND = "unsuspend"
    EVICT = "evict"              # vacated (condor_vacate_job, preemption): back to Idle
    REQUEUE = "requeue"          # exited and OnExitRemove was false: back to Idle
    TRANSFER_OUTPUT = "transfer_output"  # exited, output coming back
    COMPLETE = "complete"        # exited and may leave the queue


class IllegalTransition(ScheddError):
    def __init__(self, event: JobEvent, state: JobStatus) -> None:
        super().__init__(f"cannot {event.value} a job that is {state.label}")
        self.event = event
        self.state = state


S, E = JobStatus, JobEvent
TRANSITIONS: dict[tuple[JobStatus, JobEvent], JobStatus] = {
    (S.IDLE, E.START): S.RUNNING,
    (S.IDLE, E.HOLD): S.HELD,
    (S.IDLE, E.REMOVE): S.REMOVED,
    (S.RUNNING, E.HOLD): S.HELD,
    (S.RUNNING, E.REMOVE): S.REMOVED,
    (S.RUNNING, E.SUSPEND): S.SUSPENDED,
    (S.RUNNING, E.EVICT): S.IDLE,
    (S.RUNNING, E.REQUEUE): S.IDLE,
    (S.RUNNING, E.TRANSFER_OUTPUT): S.TRANSFERRING_OUTPUT,
    (S.RUNNING, E.COMPLETE): S.COMPLETED,
    (S.SUSPENDED, E.UNSUSPEND): S.RUNNING,
    (S.SUSPENDED, E.HOLD): S.HELD,
    (S.SUSPENDED, E.REMOVE): S.REMOVED,
    (S.SUSPENDED, E.EVICT): S.IDLE,
    (S.TRANSFERRING_OUTPUT, E.COMPLETE): S.COMPLETED,
    (S.TRANSFERRING_OUTPUT, E.REQUEUE): S.IDLE,
    (S.TRANSFERRING_OUTPUT, E.HOLD): S.HELD,
    (S.TRANSFERRING_OUTPUT, E.REMOVE): S.REMOVED,
    (S.HELD, E.RELEASE): S.IDLE,
    (S.HELD, E.REMOVE): S.REMOVED,
    (S.COMPLETED, E.REMOVE): S.REMOVED,
}
del S, E

ACTIVE = frozenset({JobStatus.RUNNING, JobStatus.SUSPENDED, JobStatus.TRANSFERRING_OUTPUT})


def next_status(state: JobStatus, event: JobEvent) -> JobStatus:
    """The state ``event`` leads to from ``state``; IllegalTransition when there is none."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(event, state) from None


def diagram() -> str:
    """The transition table as Graphviz text (documentation is generated from it)."""
    lines = ["digraph job_states {"]
    for (state, event), target in TRANSITIONS.items():
        lines.append(f'  "{state.label}" -> "{target.label}" [label="{event.value}"];')
    lines.append("}")
    return "\n".join(lines)
