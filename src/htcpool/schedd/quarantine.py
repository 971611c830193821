"""Jobs a restarted schedd finds invalid in its store: held with the reason, never a crash.

A stored job ad should always be one the schedd wrote, but a store from an older version, a
hand-edited file or a bug elsewhere can hold one the queue cannot use: a ``JobStatus`` that
is not one of the job states (``undefined``, a string, 77), ``ClusterId`` or ``ProcId``
missing or not the job's id, an ``Owner`` that is not a name. HTCondor's schedd drops such
a job when it reads its job queue log; htcpool keeps it where its owner and the
administrator can see it:

* the ids are set from the job's place in the store (the store's key is the truth);
* the job is put on hold (``JobStatus`` 5, ``HoldReasonCode`` 0, "unspecified") with a
  ``HoldReason`` saying what was wrong; a bad ``JobStatus`` is kept, as text, in
  ``QuarantinedValue``, and ``LastJobStatus`` records a valid previous state only;
* the change is written back to the store and one line per job goes to the schedd's log.

The owner or an administrator may then fix, release or remove the job as any held job.
An ad the store cannot parse at all never reaches the queue: the store sets it aside and
reports it (``runtime.queue_store``).
"""

from __future__ import annotations

from htcpool.classad import ClassAd, ClassAdError, EvalContext
from htcpool.classad.unparse import unparse
from htcpool.schedd.states import JobStatus
from htcpool.schedd.store import JobId, QueueStore

#: HTCondor's hold code "Unspecified": no other code says "the schedd found the ad invalid"
HOLD_QUARANTINED = 0
_STATUSES = frozenset(int(s) for s in JobStatus)


def _value(ad: ClassAd, name: str, context: EvalContext) -> object:
    try:
        return ad.evaluate(name, context)
    except ClassAdError as e:
        return f"<cannot be evaluated: {e}>"


def _shown(ad: ClassAd, name: str) -> str:
    node = ad._exprs.get(name.lower())
    text = "missing" if node is None else unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def problems(job_id: JobId, ad: ClassAd, context: EvalContext) -> list[str]:
    """What makes the stored ``ad`` unusable as job ``job_id`` (empty: nothing)."""
    found = []
    for name, want in (("ClusterId", job_id[0]), ("ProcId", job_id[1])):
        value = _value(ad, name, context)
        if type(value) is not int or value != want:
            found.append(f"{name} is {_shown(ad, name)}, not {want}")
    status = _value(ad, "JobStatus", context)
    if type(status) is not int or status not in _STATUSES:
        found.append(f"JobStatus is {_shown(ad, 'JobStatus')}, not a job state (1 to 7)")
    if not isinstance(_value(ad, "Owner", context), str):
        found.append(f"Owner is {_shown(ad, 'Owner')}, not a user name")
    return found


def _hold(job_id: JobId, ad: ClassAd, found: list[str], context: EvalContext, now: float) -> None:
    status = _value(ad, "JobStatus", context)
    if "JobStatus" in ad and not (type(status) is int and status in _STATUSES):
        ad["QuarantinedValue"] = f"JobStatus = {_shown(ad, 'JobStatus')}"
    if type(status) is int and status in _STATUSES and status != JobStatus.HELD:
        ad["LastJobStatus"] = status
    ad["ClusterId"] = job_id[0]
    ad["ProcId"] = job_id[1]
    if not isinstance(_value(ad, "Owner", context), str):
        ad["Owner"] = ""
    ad["JobStatus"] = int(JobStatus.HELD)
    ad["EnteredCurrentStatus"] = int(now)
    ad["HoldReason"] = "The schedd found this job invalid when it restarted: " + "; ".join(found)
    ad["HoldReasonCode"] = HOLD_QUARANTINED
    ad["HoldReasonSubCode"] = 0


def quarantine(jobs: dict[JobId, ClassAd], context: EvalContext, store: QueueStore, now: float,
               warnings: list[str]) -> None:
    """Hold, in place, every job of ``jobs`` that ``problems`` finds invalid; each is written
    back to ``store`` and described in ``warnings`` (the schedd's log)."""
    for job_id, ad in jobs.items():
        found = problems(job_id, ad, context)
        if not found:
            continue
        _hold(job_id, ad, found, context, now)
        store.save_job(job_id, ad)
        warnings.append(f"job {job_id[0]}.{job_id[1]} is invalid in the job queue and is held: "
                        + "; ".join(found))


__all__ = ["HOLD_QUARANTINED", "problems", "quarantine"]
