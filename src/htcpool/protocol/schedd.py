"""Messages of the schedd: submit, queue and history queries, job actions, job updates from the
startds and reconnection after a restart."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from htcpool.classad import ClassAd

# --------------------------------------------------------------------------- schedd


class JobActionKind(StrEnum):
    """condor_hold, condor_release, condor_rm, condor_vacate_job, condor_prio, condor_suspend and
    condor_continue."""

    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    VACATE = "vacate"
    PRIO = "prio"
    SUSPEND = "suspend"
    CONTINUE = "continue"


class JobEvent(StrEnum):
    """What a startd reports of the starter of a claim's job (``JobUpdate.event``)."""

    PROVISIONED = "provisioned"  # the slot's resources, sent before the activation's reply
    STARTED = "started"
    SUSPENDED = "suspended"
    CONTINUED = "continued"
    USAGE = "usage"
    ERROR = "error"  # the job could not be started
    MISSED_DEFERRAL = "missed_deferral"  # it arrived past its DeferralTime + DeferralWindow
    EXITED = "exited"


@dataclass(frozen=True, slots=True)
class NewCluster:
    """condor_submit's first question: reserve the next cluster id for the owner's Submit.

    condor_submit expands ``$(Cluster)`` with the id this returns, then sends the jobs in a
    ``Submit`` naming it; an id reserved and never used is simply skipped.
    """

    owner: str


@dataclass(frozen=True, slots=True)
class ClusterReserved:
    cluster: int


@dataclass(frozen=True, slots=True)
class Submit:
    """condor_submit: one cluster of job ads made by the submit core on the client.

    ``cluster`` is the id a ``NewCluster`` reserved for the owner (the ads already carry
    it); 0 lets the schedd number the cluster itself.
    """

    owner: str
    ads: tuple[ClassAd, ...]
    cluster: int = 0


@dataclass(frozen=True, slots=True)
class SubmitFactory:
    """condor_submit of a late-materialization factory (``max_materialize``, ``max_idle``):
    the cluster ad (the first job as the submit core built it) and the recipe the
    schedd makes every job from (``htcpool.submit.materialize``, in its JSON form). Answered
    ``Submitted`` with the number of jobs the factory will make."""

    owner: str
    cluster_ad: ClassAd
    digest: Mapping[str, Any] = field(default_factory=dict)  # empty: refused by the schedd
    cluster: int = 0


@dataclass(frozen=True, slots=True)
class Submitted:
    cluster: int
    count: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueQuery:
    """``clusters``: the late-materialization factories' cluster ads (condor_q -factory) that
    meet ``constraint``, instead of the jobs."""

    constraint: str = ""
    projection: tuple[str, ...] = ()
    clusters: bool = False


@dataclass(frozen=True, slots=True)
class QueueTotals:
    """condor_q -totals: how many jobs meet ``constraint`` and how many the queue holds, by
    state, answered with ``QueueCounts`` and no ads."""

    constraint: str = ""


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """Job counts keyed by ``JobStatus`` (its number as text; ``other`` for a status that is
    not a number): ``selected`` for the query's constraint, ``everything`` for the whole queue;
    the schedd's name and address for condor_q's heading."""

    selected: Mapping[str, int]
    everything: Mapping[str, int]
    schedd_name: str = ""
    schedd_address: str = ""


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    constraint: str = ""
    limit: int = 0


@dataclass(frozen=True, slots=True)
class JobAction:
    """condor_hold, _release, _rm, _vacate_job, _prio on job ids or a constraint.

    ``action`` is one of hold, release, remove, vacate, prio; ``targets`` are
    ``cluster`` or ``cluster.proc`` or user names; ``value`` is the new priority
    (``relative``: an adjustment) for prio.
    """

    action: JobActionKind
    user: str
    targets: tuple[str, ...] = ()
    constraint: str = ""
    reason: str = ""
    value: int = 0
    relative: bool = False


@dataclass(frozen=True, slots=True)
class EditJobs:
    """condor_qedit: set each of ``attributes`` to the ClassAd expression text at the same place
    in ``values``, in the jobs that ``targets`` (``cluster``, ``cluster.proc``, user names) or
    ``constraint`` select. The reply is an ``ActionResult``: the job ids changed, and why the
    others were not."""

    user: str
    attributes: tuple[str, ...]
    values: tuple[str, ...]
    targets: tuple[str, ...] = ()
    constraint: str = ""


@dataclass(frozen=True, slots=True)
class ActionResult:
    """Per target: the job ids acted on and the errors met."""

    done: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobUpdate:
    """A startd reports what the starter of a claim's job did.

    ``event`` is provisioned (sent before the activation's reply), started,
    suspended, continued, usage, error or exited; ``killed`` is
    true when the startd itself killed the job (vacate, preemption).
    """

    claim_id: str
    slot: str
    event: JobEvent
    exit_code: int | None = None
    exit_signal: int | None = None
    killed: bool = False
    user_cpu: float = 0.0
    sys_cpu: float = 0.0
    rss_kb: int = 0
    image_size_kb: int = 0
    wall: float = 0.0
    processes: int = 0  # "suspended": how many of the job's processes were stopped
    message: str = ""
    #: "provisioned": what the slot gives the job (Cpus/Memory/Disk/GPUsProvisioned, CondorScratchDir)
    resources: Mapping[str, Any] = field(default_factory=dict)
    disk_usage_kb: int = 0  # the scratch directory's size (DiskUsage)
    cpus_usage: float = 0.0  # cores used on average since the job began (CpusUsage)
    #: the job's NVIDIA devices as NVML read them: utilisation averaged over the job's life
    #: (GPUsUsage) and the most device memory in use, MiB (GPUsMemoryUsage); None: not measured
    gpus_usage: float | None = None
    gpus_memory_mb: float | None = None
    #: "exited": the starter ended the job and asks for it to be held (HoldReasonCode, SubCode),
    #: ``message`` being the reason (a job over its cgroup memory limit: 34)
    hold_code: int = 0
    hold_subcode: int = 0
    #: "exited": the claim takes another activation at once (the answer DEACTIVATE_CLAIM would
    #: get, given ahead), so the schedd sends the next job without deactivating first
    claim_open: bool = False


@dataclass(frozen=True, slots=True)
class Reconnect:
    """A restarted schedd asks whether a claim and its job are still alive at the startd."""

    claim_id: str
    schedd: str


@dataclass(frozen=True, slots=True)
class ReconnectReply:
    """``job``: the job (``cluster.proc``) last activated on the claim, running or exited; empty
    when the claim was never activated, so a schedd whose activation never arrived requeues."""

    claim_id: str
    alive: bool
    slot: str = ""
    activity: str = ""
    job: str = ""
