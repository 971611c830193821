"""Draining: the machine-wide drain request and its accounting.

A drain request (``messages.Drain``) is graceful, quick or fast. While it lasts every
slot advertises unavailable Requirements (``False``, or the drain's start expression
``&& WithinResourceLimits``), Owner and Unclaimed slots move to Drained/Retiring
(36/37), and claims are retired (graceful: reversibly, with full retirement; quick:
irreversibly with retirement forced to 0, so jobs are vacated; fast: killed).
Jobs accepted while draining (they satisfy the drain's start expression) may run as
long as the longest remaining retirement of the original jobs. When every original job
is gone the start expression is cleared and leftover claims are released; when every
slot is Drained the slots go Drained/Idle (33) and the completion action runs
(``resume`` cancels the drain: slots go to Owner, 34).

Accounting, cumulative over drains: ``TotalMachineDrainingBadput`` (cpu-seconds of
job run time lost to draining preemptions) and ``TotalMachineDrainingUnclaimedTime``
(cpu-seconds slots spent without a job while the drain was in progress).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcpool.classad.nodes import Node

HOW_FAST = ("graceful", "quick", "fast")
ON_COMPLETION = ("nothing", "resume", "exit", "restart", "reconfig")


@dataclass(slots=True)
class DrainState:
    """The drain in progress."""

    request_id: str
    how_fast: str
    on_completion: str
    reason: str
    started: float
    start_expr: Node | None = None
    start_text: str | None = None
    original_claims: set[str] = field(default_factory=set)
    mjrt_override: float | None = None
    completed_action_done: bool = False
    originals_gone: bool = False


@dataclass(slots=True)
class DrainTotals:
    """Accounting kept across drains."""

    badput: float = 0.0
    unclaimed_time: float = 0.0
    last_start: float | None = None
    last_stop: float | None = None
    requests: int = 0
