"""The starter's measurements in the startd's copy of the job ad (``JobUsage``).

HTCondor's starter sends the startd its job's usage every ``STARTER_UPDATE_INTERVAL``; the
startd keeps it in the claim's job ad, so the slot's policy expressions (``PREEMPT``,
``WANT_HOLD``, ``WANT_VACATE``, ``SUSPEND`` …) read ``MemoryUsage``, ``DiskUsage``,
``ResidentSetSize``, ``CpusUsage`` and the rest as the job's attributes (an unscoped name is
looked up in the slot ad first, then in the job's: the HTCondor manual's "Policy
Configuration for Execution Points", the ``*_EXCEEDED`` templates). ``on_job_usage`` writes
the attributes into a copy of the claim's job ad - the ad the claim was activated with may be
shared with whoever sent it - and the next policy evaluation sees them. A report about a
claim that has ended, or whose job has gone, changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol.startd import JobUsage

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd


def on_job_usage(startd: Startd, msg: JobUsage, now: float) -> None:
    slot = startd.find_claim(msg.claim_id)
    if slot is None or slot.claim.id != msg.claim_id or slot.claim.job is None or not msg.attributes:
        return
    job = slot.claim.job.copy()
    for attr, value in msg.attributes.items():
        job[attr] = value
    slot.claim.job = job


__all__ = ["on_job_usage"]
