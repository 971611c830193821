"""Job deferral: the one place that says when a deferred job is offered, started or missed.

HTCondor's job deferral (the manual's "Time Scheduling for Job Execution", "Job
Deferral"; docs/submit.md) is read from three job attributes, each an expression
evaluated at the moment of the decision:

* ``DeferralTime``: the epoch second at which the job should start;
* ``DeferralWindow`` (seconds, default 0): how late the start may still be;
* ``DeferralPrepTime`` (seconds, default 0): how early the job may be matched and
  its slot claimed, so that it is ready on the execute point in time.

The rules, shared by the schedd core (which offers the job and holds one whose
window passed while it was still idle) and the startd core (which keeps the claimed
slot busy until the deferral time, then starts the job, or refuses a job that
arrives too late):

* the schedd offers the job for matching once
  ``now + SCHEDD_INTERVAL >= DeferralTime - DeferralPrepTime`` (the schedd looks
  once an interval, so it offers one interval early rather than one late);
* the job is missed, and put on hold with code 20, once
  ``now > DeferralTime + DeferralWindow``;
* otherwise the startd starts it at ``DeferralTime`` (at once if that has passed).

A job without a ``DeferralTime``, or whose ``DeferralTime`` does not evaluate to a
number, is not deferred. Pure functions of the job ad and ``now``; nothing here reads
a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.classad import ClassAd, EvalContext, as_number, fixed_clock

HOLD_MISSED_DEFERRAL = 20  # HTCondor's hold code for a missed deferral time
MISSED_DEFERRAL_REASON = "The job missed its deferred execution time and therefore failed to run."


@dataclass(frozen=True, slots=True)
class Deferral:
    """A deferred job's times, evaluated at one moment."""

    time: float
    window: float = 0.0
    prep_time: float = 0.0

    def offer_from(self, schedd_interval: float) -> float:
        """The earliest time the schedd offers the job for matching."""
        return self.time - self.prep_time - schedd_interval

    @property
    def missed_after(self) -> float:
        """After this time the job can no longer start."""
        return self.time + self.window


def deferral_of(job: ClassAd, now: float) -> Deferral | None:
    """The job's deferral times evaluated at ``now``, or None when the job is not deferred."""
    if "DeferralTime" not in job:
        return None
    ctx = EvalContext(clock=fixed_clock(now))
    when = as_number(job.evaluate("DeferralTime", ctx))
    if when is None:
        return None
    window = as_number(job.evaluate("DeferralWindow", ctx)) if "DeferralWindow" in job else None
    prep = as_number(job.evaluate("DeferralPrepTime", ctx)) if "DeferralPrepTime" in job else None
    return Deferral(when, window or 0.0, prep or 0.0)


def ready_to_offer(job: ClassAd, now: float, schedd_interval: float) -> bool:
    """Whether the schedd may offer the job for matching at ``now``."""
    deferral = deferral_of(job, now)
    return deferral is None or now >= deferral.offer_from(schedd_interval)


def missed(job: ClassAd, now: float) -> bool:
    """Whether a deferred job can no longer start: ``now`` is past its window."""
    deferral = deferral_of(job, now)
    return deferral is not None and now > deferral.missed_after


def start_time(job: ClassAd, now: float) -> float:
    """When the startd starts the job: its deferral time, or ``now`` if that has passed or none is set."""
    deferral = deferral_of(job, now)
    return now if deferral is None else max(now, deferral.time)



__all__ = ["HOLD_MISSED_DEFERRAL", "MISSED_DEFERRAL_REASON", "Deferral", "deferral_of", "missed",
           "ready_to_offer", "start_time"]
