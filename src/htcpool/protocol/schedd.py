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
    """condor_hold, condor_release, condor_rm, condor_vacate_job and condor_prio."""

    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    VACATE = "vacate"
    PRIO = "prio"


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
class Submit:
    """condor_submit: one cluster of job ads made by the submit core on the client."""

    owner: str
    ads: tuple[ClassAd, ...]


@dataclass(frozen=True, slots=True)
class Submitted:
    cluster: int
    count: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueQuery:
    constraint: str = ""
    projection: tuple[str, ...] = ()


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


@dataclass(frozen=True, slots=True)
class Reconnect:
    """A restarted schedd asks whether a claim and its job are still alive at the startd."""

    claim_id: str
    schedd: str


@dataclass(frozen=True, slots=True)
class ReconnectReply:
    claim_id: str
    alive: bool
    slot: str = ""
    activity: str = ""
