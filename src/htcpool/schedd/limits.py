"""The queue's limits: how many jobs the schedd takes, and how many it runs at once.

Knobs ("condor_schedd Configuration File Entries" in HTCondor's admin manual; defaults
from the parameter table):

* ``MAX_JOBS_SUBMITTED`` (default 2147483647): jobs in the whole queue;
* ``MAX_JOBS_PER_OWNER`` (default 100000): jobs of one owner in the queue;
* ``MAX_JOBS_PER_SUBMISSION`` (default 20000): jobs one submission adds;
* ``MAX_JOBS_RUNNING`` (default ``MIN({$(DETECTED_MEMORY), 10000})``): jobs the schedd
  runs at once on execute points (its shadows; local and scheduler universe jobs do
  not count). At the limit it offers the negotiator no jobs, takes no new match and
  claims no partitionable leftovers (below it, a match past the limit in one cycle is
  refused); a claim that finishes a job may still run
  the next one, which keeps the count. 0 or less starts nothing new.
* ``MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER`` (default 200) is read into
  ``ScheddSettings.max_running_scheduler_jobs_per_owner`` and applied where scheduler
  universe jobs start (``htcpool.schedd.localjobs``).

``check_submission`` refuses a submission that would pass a limit before anything of
it is queued (``SubmitRejected``, naming the limit, the count and the limit), so the
whole cluster is refused as HTCondor's condor_submit reports it ("Number of submitted
jobs would exceed …"). A job counts while it is in the queue, whatever its state.
``OwnerCounts`` keeps the jobs per owner as the queue changes, so a check costs a
dictionary lookup, not a scan of the queue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.config import integer_value
from htcpool.schedd.errors import SubmitRejected
from htcpool.schedd.knobs import lenient

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

INT_MAX = 2147483647
#: HTCondor's error codes for a refused NewProc (the submit tools print the limit's name)
MAX_JOBS_SUBMITTED_CODE = -2
MAX_JOBS_PER_OWNER_CODE = -3
MAX_JOBS_PER_SUBMISSION_CODE = -4


@dataclass(frozen=True)
class QueueLimits:
    """The limits; ``TABLE_DEFAULTS`` are HTCondor's, the defaults here none at all (a core
    built without a configuration, as in tests and benchmarks, limits nothing)."""

    max_jobs_submitted: int = INT_MAX
    max_jobs_per_owner: int = INT_MAX
    max_jobs_per_submission: int = INT_MAX
    max_jobs_running: int = INT_MAX


#: HTCondor's defaults from the parameter table (MAX_JOBS_RUNNING's is MIN(DETECTED_MEMORY, 10000))
TABLE_DEFAULTS = QueueLimits(INT_MAX, 100000, 20000, 10000)


class OwnerCounts:
    """Jobs in the queue per owner, kept up to date by the queue (``add``/``discard``)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, owner: str, n: int = 1) -> None:
        self.counts[owner] = self.counts.get(owner, 0) + n

    def discard(self, owner: str) -> None:
        left = self.counts.get(owner, 0) - 1
        if left > 0:
            self.counts[owner] = left
        else:
            self.counts.pop(owner, None)

    def of(self, owner: str) -> int:
        return self.counts.get(owner, 0)


def _refuse(knob: str, code: int, current: int, limit: int) -> SubmitRejected:
    return SubmitRejected(f"Number of submitted jobs would exceed {knob} "
                          f"(the queue would hold {current}; the limit is {limit})", code)


def check_submission(limits: QueueLimits, queued: int, owner_jobs: int, adding: int) -> None:
    """SubmitRejected when adding ``adding`` jobs of an owner who has ``owner_jobs`` to a queue
    of ``queued`` jobs would pass a limit (HTCondor's checks, in its order)."""
    if queued + adding > limits.max_jobs_submitted:
        raise _refuse("MAX_JOBS_SUBMITTED", MAX_JOBS_SUBMITTED_CODE, queued + adding,
                      limits.max_jobs_submitted)
    if owner_jobs + adding > limits.max_jobs_per_owner:
        raise _refuse("MAX_JOBS_PER_OWNER", MAX_JOBS_PER_OWNER_CODE, owner_jobs + adding,
                      limits.max_jobs_per_owner)
    if adding > limits.max_jobs_per_submission:
        raise SubmitRejected(f"Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION "
                             f"(this submission has {adding} jobs; the limit is "
                             f"{limits.max_jobs_per_submission})", MAX_JOBS_PER_SUBMISSION_CODE)


def jobs_starting_or_running(schedd: Schedd) -> int:
    """Jobs on execute points now or about to be: on a claim, running or being claimed for."""
    queue = schedd.queue
    count = 0
    for claim in schedd.claims.claims.values():
        job = claim.job
        if job is not None and job in queue.jobs:
            count += 1
    return count


def may_start_more(schedd: Schedd) -> bool:
    """Whether ``MAX_JOBS_RUNNING`` leaves room for one more job (``start_capacity`` above 0).
    Fewer claims than the limit cannot hold as many jobs, which answers without counting them."""
    if len(schedd.claims.claims) < schedd.settings.limits.max_jobs_running:
        return True
    return start_capacity(schedd) > 0


def start_capacity(schedd: Schedd) -> int:
    """How many more jobs may start on execute points under ``MAX_JOBS_RUNNING`` (never negative)."""
    return max(0, schedd.settings.limits.max_jobs_running - jobs_starting_or_running(schedd))


def running_scheduler_jobs_limit(schedd: Schedd) -> int:
    """``MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER``, for the code that starts scheduler universe jobs."""
    return schedd.settings.max_running_scheduler_jobs_per_owner


def limits_from_config(get: Callable[[str], str | None], problems: list[str]) -> QueueLimits:
    """The limits; a knob that is not an integer is reported in ``problems`` and its default kept."""
    defaults = TABLE_DEFAULTS

    def knob(name: str, default: int) -> int:
        return lenient(get, name, default, integer_value, problems)

    return QueueLimits(knob("MAX_JOBS_SUBMITTED", defaults.max_jobs_submitted),
                       knob("MAX_JOBS_PER_OWNER", defaults.max_jobs_per_owner),
                       knob("MAX_JOBS_PER_SUBMISSION", defaults.max_jobs_per_submission),
                       knob("MAX_JOBS_RUNNING", defaults.max_jobs_running))


__all__ = ["TABLE_DEFAULTS", "OwnerCounts", "QueueLimits", "check_submission", "jobs_starting_or_running",
           "may_start_more",
           "limits_from_config", "running_scheduler_jobs_limit", "start_capacity"]
