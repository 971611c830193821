"""condor_qedit at the schedd: setting job attributes, under HTCondor's protection rules.

An ``EditJobs`` names jobs (``cluster``, ``cluster.proc``, users or a constraint, as the
job action tools do, ``targets``) and the attributes to set with their expressions' text.
Every expression is parsed before any job is touched, so a malformed one changes nothing.
Each selected job is then checked against the rules below for every edit and, only when
all pass, the edits are written together (``JobQueue.save``):

* the user must own the job or be a queue super user (``QUEUE_SUPER_USERS``);
* an attribute in ``SYSTEM_IMMUTABLE_JOB_ATTRS`` or ``IMMUTABLE_JOB_ATTRS`` (HTCondor's
  manual, "condor_schedd Configuration File Entries") cannot be changed by anyone once the
  job has it;
* an attribute in ``SYSTEM_PROTECTED_JOB_ATTRS`` or ``PROTECTED_JOB_ATTRS`` may be changed
  only by a queue super user once the job has it;
* the state machine's own attributes (``JobStatus``, ``LastJobStatus``) are changed only by
  the commands that move a job between states (condor_hold, condor_release, condor_rm …);
* an attribute in ``SYSTEM_SECURE_JOB_ATTRS`` or ``SECURE_JOB_ATTRS`` is set only by the schedd.

The rules are ``htcpool.schedd.protected``'s, which also screens new jobs.

Names compare ignoring case, as ClassAd attribute names do. The reply is an
``ActionResult``: the ids of the jobs changed, and one line per job (or target) that was not.
An edited job that is Idle may now match other slots, so the negotiator is asked for a cycle.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from htcpool.classad import ClassAdError, ExprTree
from htcpool.protocol import ActionResult
from htcpool.protocol.schedd import EditJobs
from htcpool.schedd.errors import BadRequest, ScheddError
from htcpool.schedd.protected import STATE_ATTRS, Protection, check_edit
from htcpool.schedd.settings import protection_of
from htcpool.schedd.store import JobId
from htcpool.schedd.targets import select_jobs

if TYPE_CHECKING:
    from htcpool.schedd.core import Schedd

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def parse_edits(attributes: tuple[str, ...], values: tuple[str, ...]) -> list[tuple[str, ExprTree]]:
    """The edits with their expressions parsed; BadRequest naming the first bad one."""
    if not attributes:
        raise BadRequest("EditJobs: no attributes to set")
    if len(attributes) != len(values):
        raise BadRequest(f"EditJobs: {len(attributes)} attributes but {len(values)} values")
    parsed = []
    for name, text in zip(attributes, values, strict=True):
        if not _NAME.fullmatch(name):
            raise BadRequest(f"{name!r} is not a valid attribute name")
        try:
            parsed.append((name, ExprTree(text)))
        except ClassAdError as e:
            raise BadRequest(f"the value of {name}, {text!r}, is not a ClassAd expression: {e}") from None
    return parsed


def on_edit_jobs(schedd: Schedd, message: EditJobs, now: float) -> ActionResult:
    edits = parse_edits(message.attributes, message.values)
    if not message.targets and not message.constraint:
        raise BadRequest("EditJobs: name jobs, clusters or users, or give a constraint")
    queue = schedd.queue
    try:
        selected = select_jobs(queue.jobs, message.targets, message.constraint, queue.context(now))
    except ValueError as e:
        raise BadRequest(str(e)) from None
    settings = schedd.settings
    super_user = message.user in settings.queue_super_users
    protection = protection_of(settings)
    done: list[str] = []
    errors: list[str] = []
    for job_id in selected.jobs:
        try:
            _edit_one(schedd, job_id, edits, message.user, super_user, protection, now)
            done.append(f"{job_id[0]}.{job_id[1]}")
        except ScheddError as e:
            errors.append(f"Job {job_id[0]}.{job_id[1]}: {e}")
    errors.extend(selected.missing)
    if done:
        schedd.reschedule("jobs edited")
        schedd.advertise_soon(now)
    return ActionResult(tuple(done), tuple(errors))


def _edit_one(schedd: Schedd, job_id: JobId, edits: list[tuple[str, ExprTree]], user: str,
              super_user: bool, protection: Protection, now: float) -> None:
    ad = schedd.queue.job(job_id)
    schedd.queue.authorize(ad, None if super_user else user)
    for name, _ in edits:
        check_edit(ad, name, super_user=super_user, protection=protection)
    for name, expr in edits:
        ad[name] = expr
    schedd.queue.save(job_id, now)


__all__ = ["STATE_ATTRS", "check_edit", "on_edit_jobs", "parse_edits"]
