"""What a negotiation cycle produces: matches, rejections and the reasons behind them."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class PreemptState(enum.IntEnum):
    """Why a slot is a candidate for a job (``PreemptState`` in the slot ad): worse first."""

    PRIO = 0  # the running job's user has a worse priority (PREEMPTION_REQUIREMENTS held)
    RANK = 1  # the slot's RANK prefers the new job
    NONE = 2  # the slot runs nothing: no preemption


@dataclass(frozen=True, slots=True)
class Match:
    """One job given one slot in this cycle."""

    submitter: str
    schedd: str
    job: tuple[int, int]  # (ClusterId, ProcId)
    slot: str  # the slot's Name
    reason: PreemptState
    cost: float  # weighted usage charged
    negotiating_group: str  # SubmitterNegotiatingGroup / RemoteNegotiatingGroup
    autoregroup: bool = False
    preempted_user: str | None = None  # the remote user of a preempted slot
    preempted_dslots: tuple[str, ...] = ()  # dynamic slots freed by p-slot preemption
    consumed: tuple[tuple[str, float], ...] = ()  # consumption-policy amounts deducted
    #: with NEGOTIATOR_DEPTH_FIRST, the further jobs of the request the schedd packs into the slot
    packed_jobs: tuple[tuple[int, int], ...] = ()
    concurrency_limits: str = ""  # MatchedConcurrencyLimits (lower-cased)
    #: the submitter's accounting group (SubmitterGroup, passed on as RemoteGroup); None without groups
    group: str | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """A request (autocluster) that found no slot in a submitter's session."""

    submitter: str
    job: tuple[int, int]
    #: "concurrency limit <name> reached", "PREEMPTION_REQUIREMENTS == False",
    #: "submitter limit exceeded", "no match found", or "job could not be evaluated: <why>"
    #: when an expression of the job (or one it meets in a slot) cannot be evaluated at all
    reason: str


@dataclass
class SubmitterShare:
    """What the pie gave one submitter in its first spin (``SubmitterShare``, ``SubmitterLimit``)."""

    share: float = 0.0
    limit: float = 0.0
    starvation: float = 0.0
    matches: int = 0


@dataclass
class CycleResult:
    matches: list[Match] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    shares: dict[str, SubmitterShare] = field(default_factory=dict)
    #: what the cycle passed over because an expression could not be evaluated at all (a job, a
    #: slot or a submitter, named in each line); the cycle went on without it
    failures: list[str] = field(default_factory=list)
