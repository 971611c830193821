"""When the schedd evaluates the periodic policy, what it reads from the configuration, and
what a decision does to a job's claim.

Configuration ("condor_schedd Configuration File Entries" in HTCondor's admin manual):

* ``SYSTEM_PERIODIC_HOLD``, ``_RELEASE``, ``_REMOVE`` and ``_VACATE``, each with
  ``SYSTEM_PERIODIC_<K>_NAMES`` naming more expressions ``SYSTEM_PERIODIC_<K>_<Name>``,
  evaluated in that order before the nameless one; each may have ``_REASON`` (a
  string expression) and ``_SUBCODE`` (an integer expression). ``system_policy_from_config``
  parses them; an expression that does not parse is left out and reported, naming
  the knob; one that is the constant false is left out silently, as HTCondor does.
* ``PERIODIC_EXPR_INTERVAL`` (default 60 s; 0 turns the evaluation off),
  ``MAX_PERIODIC_EXPR_INTERVAL`` (default 1200 s) and ``PERIODIC_EXPR_TIMESLICE``
  (default 0.01): the schedd spends at most that share of its time on the
  evaluation. The core cannot time itself, so the driver reports what the last
  pass cost (``Schedd.note_periodic_cost``) and ``policy_interval`` stretches the
  interval to ``cost / timeslice``, within the two bounds. The queue's periodic pass
  also carries the cron schedules and missed deferrals, due every ``SCHEDD_INTERVAL``
  (at most 60 s apart); it evaluates the policy only on the passes where it is due.

What a decision does beyond the job's state (the queue changes the state): a
job that a hold, a removal or a vacate takes out of Running, Suspended or an
activation loses its claim, which is released (``release_claims_of_stopped_jobs``):
the startd then stops the job as it does for condor_hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.parser import parse_expression
from htcpool.config import integer_value, real_value
from htcpool.schedd.knobs import lenient
from htcpool.schedd.policy import SystemExpression, SystemPolicy
from htcpool.schedd.states import ACTIVE, JobStatus
from htcpool.schedd.store import JobId

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

KINDS = ("HOLD", "RELEASE", "REMOVE", "VACATE")


@dataclass(frozen=True)
class PeriodicTiming:
    """``PERIODIC_EXPR_INTERVAL``, ``MAX_PERIODIC_EXPR_INTERVAL``, ``PERIODIC_EXPR_TIMESLICE``."""

    interval: int = 60
    max_interval: int = 1200
    timeslice: float = 0.01

    @property
    def enabled(self) -> bool:
        return self.interval > 0


def policy_interval(timing: PeriodicTiming, cost: float = 0.0) -> float:
    """Seconds to the next evaluation of the policy: ``PERIODIC_EXPR_INTERVAL``, stretched by the
    cost of the last pass to ``cost / PERIODIC_EXPR_TIMESLICE``, at most
    ``MAX_PERIODIC_EXPR_INTERVAL``."""
    interval = float(timing.interval)
    if timing.timeslice > 0 and cost > 0:
        interval = min(max(interval, cost / timing.timeslice), float(max(timing.max_interval, timing.interval)))
    return interval


def _names(text: str | None) -> list[str]:
    return [n for n in re.split(r"[\s,]+", text or "") if n and n.upper() != "NAMES"]


def _parse(knob: str, text: str, problems: list[str]) -> Node | None:
    try:
        return parse_expression(text)
    except ClassAdError as e:
        problems.append(f"{knob}: cannot parse '{text}': {e}; the expression is ignored")
        return None


def _expression(get: Callable[[str], str | None], knob: str, label: str,
                problems: list[str]) -> SystemExpression | None:
    text = (get(knob) or "").strip()
    if not text:
        return None
    expr = _parse(knob, text, problems)
    if expr is None:
        return None
    if isinstance(expr, Literal) and not isinstance(expr.value, str) and expr.value in (False, 0):
        return None  # the constant false: never fires
    parts: dict[str, Node | None] = {}
    for suffix in ("_REASON", "_SUBCODE"):
        extra = (get(knob + suffix) or "").strip()
        parts[suffix] = _parse(knob + suffix, extra, problems) if extra else None
    return SystemExpression(knob, label, text, expr, parts["_REASON"], parts["_SUBCODE"])


def system_policy_from_config(get: Callable[[str], str | None], problems: list[str]) -> SystemPolicy:
    """The ``SYSTEM_PERIODIC_*`` expressions; what cannot be used is added to ``problems``."""
    policy = SystemPolicy()
    for kind in KINDS:
        base = f"SYSTEM_PERIODIC_{kind}"
        rules = getattr(policy, kind.lower())
        for knob in [f"{base}_{name}" for name in _names(get(f"{base}_NAMES"))] + [base]:
            rule = _expression(get, knob, base, problems)
            if rule is not None:
                rules.append(rule)
    return policy


def timing_from_config(get: Callable[[str], str | None], problems: list[str]) -> PeriodicTiming:
    defaults = PeriodicTiming()

    def number(knob: str, default: float, convert: Callable[[str, str], float]) -> float:
        return lenient(get, knob, default, convert, problems)

    return PeriodicTiming(int(number("PERIODIC_EXPR_INTERVAL", defaults.interval, integer_value)),
                          int(number("MAX_PERIODIC_EXPR_INTERVAL", defaults.max_interval, integer_value)),
                          number("PERIODIC_EXPR_TIMESLICE", defaults.timeslice, real_value))


def release_claims_of_stopped_jobs(schedd: Schedd, moved: dict[JobId, JobStatus], now: float) -> None:
    """Release the claims whose job the periodic pass held, removed or vacated (``moved``: the
    jobs the pass moved or removed, with their status before it; ``JobQueue.handle_timer``).
    The claims of jobs the pass left alone are not looked at."""
    from htcpool.schedd.claims import (
        TRANSITIONS as CLAIM_TRANSITIONS,  # claims imports the queue, which imports this
    )
    from htcpool.schedd.claims import ClaimEvent

    if not moved:
        return
    held = [(claim_id, claim.job, moved[claim.job]) for claim_id, claim in schedd.claims.claims.items()
            if claim.job is not None and claim.job in moved]
    for claim_id, job_id, was in held:
        claim = schedd.claims.claims.get(claim_id)
        if claim is None or claim.job != job_id or (claim.state, ClaimEvent.RELEASE) not in CLAIM_TRANSITIONS:
            continue  # a claim still being requested finds its job gone when the startd answers
        gone = job_id not in schedd.queue.jobs
        status = None if gone else schedd.queue.status(job_id)
        if gone or (status != was and status not in ACTIVE):
            schedd.send_claim_actions(schedd.claims.release(claim_id, now))


__all__ = ["KINDS", "PeriodicTiming", "policy_interval",
           "release_claims_of_stopped_jobs", "system_policy_from_config", "timing_from_config"]
