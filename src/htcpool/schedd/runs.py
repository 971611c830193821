"""What the end of a job's run adds to its ad: run time, slot time and suspended time.

A run ends when the job exits, is held, removed or evicted (``JobQueue``). Its wall-clock time
runs from ``JobCurrentStartDate`` to the end; it is added to ``RemoteWallClockTime`` and
``CumulativeSlotTime`` for every run, and to ``CommittedTime`` and ``CommittedSlotTime`` only for
a run whose work counts (one that completed), as HTCondor's job ClassAd attributes describe them
(HTCondor manual, "Job ClassAd Attributes"). An open suspension is closed first
(``CumulativeSuspensionTime``).
"""

from __future__ import annotations

from htcpool.classad import ClassAd, EvalContext, as_int


def close_suspension(ad: ClassAd, ctx: EvalContext, now: float) -> None:
    """Add the suspension open since ``LastSuspensionTime`` (if any) to ``CumulativeSuspensionTime``."""
    since = as_int(ad.evaluate("LastSuspensionTime", ctx))
    if since:
        ad["CumulativeSuspensionTime"] = as_int(ad.evaluate("CumulativeSuspensionTime", ctx)) + int(now) - since
        ad["LastSuspensionTime"] = 0


def end_run(ad: ClassAd, ctx: EvalContext, now: float, committed: bool) -> None:
    """The run ends at ``now``: its time counted (``committed``: as work kept), no host left."""
    close_suspension(ad, ctx, now)
    started = as_int(ad.evaluate("JobCurrentStartDate", ctx))
    wall = max(0, int(now) - started) if started else 0
    previous = ad.evaluate("RemoteWallClockTime", ctx)
    if type(previous) not in (int, float):
        previous = 0.0  # absent, undefined or not a number: no earlier runs counted
    ad["RemoteWallClockTime"] = float(previous) + wall
    ad["CumulativeSlotTime"] = as_int(ad.evaluate("CumulativeSlotTime", ctx)) + wall
    if committed:
        ad["CommittedTime"] = as_int(ad.evaluate("CommittedTime", ctx)) + wall
        ad["CommittedSlotTime"] = as_int(ad.evaluate("CommittedSlotTime", ctx)) + wall
    if "JobCurrentStartDate" in ad:
        del ad["JobCurrentStartDate"]
    ad["CurrentHosts"] = 0


__all__ = ["close_suspension", "end_run"]
