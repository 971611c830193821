"""The job attributes the schedd owns, and what a submission or an edit may do with them.

One definition serves both ways in: a new job (``screen_submission``, called by admission
for every proc) and condor_qedit (``check_edit``). Names compare ignoring case, as ClassAd
attribute names do; every set here holds lower-case names.

A new job (HTCondor's manual, "condor_schedd Configuration File Entries", and the
schedd's queue management, which checks each attribute a submitter sets):

* ``JobStatus`` must be Idle (1) or Held (5), the two states condor_submit gives a job
  (``hold = true`` is Held); anything else (``undefined``, a string, 77, Running) refuses
  the cluster, naming the attribute and the value. A job without one is Idle.
* ``Owner`` is the authenticated submitter's: a value naming anyone else is replaced, with a
  warning naming it (HTCondor refuses such an ``Owner`` as a security violation; htcpool
  keeps the submission, as a job ad copied from another user's job is a common template).
* ``ClusterId``, ``ProcId``, ``QDate``, ``EnteredCurrentStatus``, ``User`` and
  ``TotalSubmitProcs`` are set by the schedd on every new job (``QUEUE_SET_ATTRS``):
  condor_submit sends its own values, which are replaced without a word.
* The attributes the schedd and its shadows write while a job runs (``RUN_ATTRS``: claims,
  remote hosts, start dates, ``LastJobStatus``) and those in ``SYSTEM_SECURE_JOB_ATTRS`` /
  ``SECURE_JOB_ATTRS`` are dropped from the submitted ad with a warning naming each one;
  with ``IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS = false`` a secure attribute refuses the
  cluster instead.

An edit (condor_qedit): the state machine's attributes (``STATE_ATTRS``) change only through
the job commands; an immutable attribute cannot change once set; a protected one only by a
queue super user.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcpool.classad import ClassAd, ClassAdError, EvalContext
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.unparse import unparse
from htcpool.schedd.errors import PermissionDenied, SubmitRejected
from htcpool.schedd.states import JobStatus

#: attributes only the schedd's state machine changes (hold, release, rm …)
STATE_ATTRS = frozenset({"jobstatus", "lastjobstatus"})
#: set by the schedd on every new job; a submitted value is replaced
QUEUE_SET_ATTRS = frozenset({"clusterid", "procid", "qdate", "enteredcurrentstatus", "owner", "user",
                             "totalsubmitprocs"})
#: written by the schedd and its shadows while a job runs; never taken from a submission
RUN_ATTRS = frozenset(name.lower() for name in (
    "LastJobStatus", "ClaimId", "ClaimIds", "PublicClaimId", "PublicClaimIds", "RemoteHost", "RemoteHosts",
    "LastRemoteHost", "RemoteSlotID", "RemotePool", "StartdAddress", "StartdPrincipal", "StartdIpAddr",
    "ShadowBday", "JobStartDate", "JobCurrentStartDate", "JobCurrentStartExecutingDate",
    "JobCurrentStartTransferOutputDate", "LastJobLeaseRenewal", "LastMatchTime", "NumJobMatches",
    "LastRejMatchTime", "LastRejMatchReason", "CompletionDate", "RemoveReason", "LastHoldReason",
    "LastHoldReasonCode", "LastHoldReasonSubCode", "LastReleaseReason", "LastVacateTime",
    "GlobalJobId", "JobMaterializeNextProcId"))
#: the states a new job may be submitted in
SUBMIT_STATUSES = frozenset({JobStatus.IDLE, JobStatus.HELD})
#: SYSTEM_SECURE_JOB_ATTRS' default (param_info.in), less the schedd's own TotalSubmitProcs
DEFAULT_SECURE_ATTRS = frozenset(name.lower() for name in (
    "x509userProxySubject", "x509UserProxyEmail", "x509UserProxyVOName", "x509UserProxyFirstFQAN",
    "x509UserProxyFQAN", "AuthTokenSubject", "AuthTokenIssuer", "AuthTokenGroups", "AuthTokenId",
    "AuthTokenScopes", "AuthTokenProject", "OsUser"))


@dataclass(frozen=True)
class Protection:
    """The configured lists (lower-case names) and how a secure attribute is treated."""

    immutable: frozenset[str] = frozenset()
    protected: frozenset[str] = frozenset()
    secure: frozenset[str] = DEFAULT_SECURE_ATTRS
    refuse_secure: bool = False  # IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS = false

    @classmethod
    def of(cls, immutable: frozenset[str], protected: frozenset[str], secure: frozenset[str],
           refuse_secure: bool) -> Protection:
        return cls(frozenset(a.lower() for a in immutable), frozenset(a.lower() for a in protected),
                   frozenset(a.lower() for a in secure) - QUEUE_SET_ATTRS, refuse_secure)

    #: attributes a submission may not carry at all (run attributes and secure ones)
    dropped: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        object.__setattr__(self, "dropped", RUN_ATTRS | self.secure)


def _shown(ad: ClassAd, low: str) -> str:
    """The submitted expression, cut short when it is long (it goes into messages)."""
    text = unparse(ad._exprs[low])
    return text if len(text) <= 60 else text[:57] + "..."


def submitted_status(ad: ClassAd, context: EvalContext) -> JobStatus:
    """The status a new job enters the queue in; SubmitRejected naming a value not allowed."""
    node = ad._exprs.get("jobstatus")
    if node is None:
        return JobStatus.IDLE
    value = node.value if type(node) is Literal else None
    if value is None:
        try:
            value = ad._evaluate_node(node, None, context)
        except ClassAdError as e:
            raise SubmitRejected(f"JobStatus = {_shown(ad, 'jobstatus')} cannot be evaluated: {e}") from None
    if type(value) is int and value in SUBMIT_STATUSES:
        return JobStatus(value)
    raise SubmitRejected(f"JobStatus = {_shown(ad, 'jobstatus')}: a new job's status is set by the schedd; "
                         "it may be submitted Idle (1) or Held (5) only")


def screen_status(ad: ClassAd, context: EvalContext) -> None:
    """Leave ``ad`` with a literal ``JobStatus`` of 1 or 5, or raise SubmitRejected
    (``submitted_status``)."""
    node = ad._exprs.get("jobstatus")
    if type(node) is not Literal or node.value not in SUBMIT_STATUSES or type(node.value) is not int:
        ad["JobStatus"] = int(submitted_status(ad, context))  # refuses, or a computed 1 or 5


def screen_submission(ad: ClassAd, owner: str, protection: Protection, context: EvalContext,
                      warnings: list[str]) -> None:
    """Make ``ad`` (a new job, before the schedd sets its own attributes) fit to queue, in
    place: see the module docstring. Adds one warning per dropped attribute to ``warnings``
    (each once); raises SubmitRejected for a value that refuses the cluster."""
    exprs = ad._exprs
    screen_status(ad, context)
    node = exprs.get("owner")
    if type(node) is Literal and type(node.value) is str and node.value != owner:
        message = (f"Owner = {_shown(ad, 'owner')} is replaced: a job's owner is the user who submits "
                   f"it ({owner})")
        if message not in warnings:
            warnings.append(message)
    dropped = protection.dropped
    if exprs.keys().isdisjoint(dropped):
        return
    for low in [low for low in exprs if low in dropped]:
        name = ad._names[low]
        if low in protection.secure and low not in RUN_ATTRS and protection.refuse_secure:
            raise SubmitRejected(f"{name} is a secure attribute (SECURE_JOB_ATTRS): only the schedd sets it")
        del ad[name]
        message = f"{name} is set by the schedd; the submitted value is ignored"
        if message not in warnings:
            warnings.append(message)


class Screen:
    """``screen_submission`` for the procs of one cluster, in turn. A proc whose ``JobStatus``
    and ``Owner`` are the very expression objects of the proc screened before it (copies of one
    cluster ad, as condor_submit's procs are) shares that proc's verdict on them, so only its
    names are looked at for attributes to drop."""

    def __init__(self, owner: str, protection: Protection, context: EvalContext, warnings: list[str]) -> None:
        self.owner, self.protection, self.context, self.warnings = owner, protection, context, warnings
        self.dropped = protection.dropped
        self.status: object = self  # the last proc's nodes after screening (self: none yet)
        self.who: object = self

    def __call__(self, ad: ClassAd) -> Node:
        """Screen ``ad`` in place; returns its ``JobStatus`` node, a literal 1 or 5."""
        exprs = ad._exprs
        if (exprs.get("jobstatus") is not self.status or exprs.get("owner") is not self.who
                or not exprs.keys().isdisjoint(self.dropped)):
            screen_submission(ad, self.owner, self.protection, self.context, self.warnings)
            self.status, self.who = exprs["jobstatus"], exprs.get("owner")
        return self.status  # type: ignore[return-value]


def check_edit(ad: ClassAd, name: str, *, super_user: bool, protection: Protection) -> None:
    """PermissionDenied when ``name`` may not be set in ``ad`` by this user (condor_qedit)."""
    key = name.lower()
    if key in STATE_ATTRS:
        raise PermissionDenied(f"{name} is changed only by the job commands (hold, release, rm)")
    if key in protection.secure:
        raise PermissionDenied(f"{name} is a secure attribute: only the schedd sets it")
    if name not in ad:
        return  # the lists protect committed values only
    if key in protection.immutable:
        raise PermissionDenied(f"{name} is immutable")
    if key in protection.protected and not super_user:
        raise PermissionDenied(f"{name} is protected: only a queue super user may change it")


__all__ = ["DEFAULT_SECURE_ATTRS", "QUEUE_SET_ATTRS", "RUN_ATTRS", "STATE_ATTRS", "SUBMIT_STATUSES",
           "Protection", "Screen", "check_edit", "screen_status", "screen_submission",
           "submitted_status"]
