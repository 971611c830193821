"""One slot: its resources, state/activity, claims, timers and its ClassAd.

A ``Slot`` is plain bookkeeping; the decisions are made by ``machine.Startd``
(messages, timers) and ``evaluation`` (policy order). The slot ad is kept up to date
in place: static attributes (resources, policy expressions, STARTD_ATTRS) are written
when the slot is created or resized (``publish_static``), everything that moves with
time in ``publish_dynamic``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Node
from htcpool.startd.claim import REQUEST_ATTRS, Claim
from htcpool.startd.layout import Resources
from htcpool.startd.policy import CompiledPolicy
from htcpool.startd.states import Activity, State


class SlotKind(StrEnum):
    """What a slot is, as its ``SlotType`` attribute says."""

    STATIC = "Static"
    PARTITIONABLE = "Partitionable"
    DYNAMIC = "Dynamic"


STATIC, PARTITIONABLE, DYNAMIC = SlotKind.STATIC, SlotKind.PARTITIONABLE, SlotKind.DYNAMIC

#: CondorLoadAvg is the mean of this many one-second samples of the job's CPU load.
LOAD_QUEUE_SIZE = 60

#: Attributes that describe the claim and its job; removed when the claim ends.
CLAIM_ATTRS = ("CurrentRank", "RemoteUser", "RemoteOwner", "RemoteScheddName", "AccountingGroup",
               "JobId", "GlobalJobId", "JobStart", "TotalJobRunTime", "TotalJobSuspendTime",
               "TotalClaimRunTime", "PreemptingRank", "PreemptingUser", "PreemptingOwner",
               "PublicClaimId", "RetirementTimeRemaining", "JobUniverse", "ImageSize", *REQUEST_ATTRS)


@dataclass(slots=True)
class DyingStarter:
    """The starter of a removed dynamic slot: hard-killed, not yet reported gone.

    HTCondor keeps the dynamic slot until its starter exits; htcpool returns the
    resources and removes the slot at once, so the KILLING_TIMEOUT of that starter is
    tracked here, by claim id, until ``StarterExited`` arrives.
    """

    slot_name: str
    claim_id: str
    killing_deadline: float | None


@dataclass(eq=False)
class Slot:
    """A static, partitionable or dynamic slot."""

    slot_id: int
    slot_type: int
    kind: SlotKind
    id_str: str  # slot1, slot1_2
    name: str  # slot1@host
    resources: Resources
    provisioned: Resources
    policy: CompiledPolicy
    claim: Claim
    ad: ClassAd = field(default_factory=ClassAd)
    sub_id: int = 0
    parent: Slot | None = None
    children: list[Slot] = field(default_factory=list)
    state: State = State.OWNER
    activity: Activity = Activity.IDLE
    entered_state: float = 0.0
    entered_activity: float = 0.0
    preempting: Claim | None = None
    preempting_id: str = ""
    destination: State | None = None
    starter_active: bool = False
    backfill_client: bool = False
    preempt_pending: bool = False
    vacate_deadline: float | None = None
    killing_deadline: float | None = None
    benchmarked_last: bool = False
    cpu_busy_since: float | None = None
    latches: dict[str, tuple[float | None, float]] = field(default_factory=dict)
    history: dict[str, float] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)
    consumption_policy: bool = False
    #: a consumption-policy p-slot's unused claims, one per match the negotiator may make of it
    #: in a cycle (advertised as ClaimIdList and NumClaims); each claim request takes one
    spare_claims: list[Claim] = field(default_factory=list)
    condor_load: float = 0.0
    load_samples: deque[float] = field(
        default_factory=lambda: deque([0.0] * LOAD_QUEUE_SIZE, maxlen=LOAD_QUEUE_SIZE))
    owner_load: float = 0.0
    accounted_at: float = 0.0
    requirements_node: Node | None = None

    @property
    def pair(self) -> tuple[State, Activity]:
        return (self.state, self.activity)

    @property
    def is_partitionable(self) -> bool:
        return self.kind is PARTITIONABLE

    @property
    def is_dynamic(self) -> bool:
        return self.kind is DYNAMIC

    def has_job(self) -> bool:
        return self.claim.job is not None and self.starter_active

    def record_history(self, now: float) -> None:
        """Add the time spent in the current pair to ``TotalTime<State><Activity>``."""
        key = f"TotalTime{self.state.value}{self.activity.value}"
        self.history[key] = self.history.get(key, 0.0) + max(0.0, now - self.entered_activity)
