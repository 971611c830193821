"""Messages into the startd core and actions out of it.

Messages come from the negotiator (``MatchNotification``), the schedd
(``RequestClaim``, ``ActivateClaim``, ``DeactivateClaim``, ``ReleaseClaim``,
``Alive``), the starter (``StarterExited``, ``FinalJobUpdate``), the backfill client,
the benchmark runner, administrators (``Vacate``, ``Shutdown``, ``Drain``,
``CancelDrain``, ``SuspendClaim``, ``ContinueClaim``) and sensors
(``SensorReadings``). Actions tell the driver what to do: start, suspend, continue,
soft-kill (with the job's KillSig) or hard-kill a job, send ads, tell the schedd, and
report policy problems. All are small frozen slotted dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from htcpool.classad import ClassAd
from htcpool.protocol.admin import How
from htcpool.protocol.schedd import JobUpdate


class DrainSpeed(StrEnum):
    """condor_drain -how: graceful retires jobs, quick vacates them, fast kills them."""

    GRACEFUL = "graceful"
    QUICK = "quick"
    FAST = "fast"


class DrainCompletion(StrEnum):
    """What a startd does when a drain completes (condor_drain's -resume/-exit/-restart/-reconfig-on-completion)."""

    NOTHING = "nothing"
    RESUME = "resume"
    EXIT = "exit"
    RESTART = "restart"
    RECONFIG = "reconfig"


class DaemonActionKind(StrEnum):
    EXIT = "exit"
    RESTART = "restart"
    RECONFIG = "reconfig"


class Notice(StrEnum):
    """What a startd tells the schedd of a claim."""

    RELEASE = "release"  # the claim is gone


#: the detail of the ``Ok`` that answers a message about a claim the receiver does not hold (a
#: restarted startd asked to keep a claim alive that it never knew, a schedd told of a claim it
#: has let go)
UNKNOWN_CLAIM = "unknown claim"

# --------------------------------------------------------------------------- messages in


@dataclass(frozen=True, slots=True)
class SensorReadings:
    """Machine readings; idle times are seconds since the last activity at ``now``."""

    load_avg: float = 0.0
    keyboard_idle: float | None = None
    console_idle: float | None = None
    memory: int | None = None  # MiB, overrides the configured total when given
    disk: int | None = None  # KiB free on the execute partition
    swap: int | None = None  # KiB
    condor_load: Mapping[str, float] = field(default_factory=dict)  # slot name -> job CPU load


@dataclass(frozen=True, slots=True)
class MatchNotification:
    """The negotiator's MATCH_INFO: a slot's claim id was matched."""

    claim_id: str


@dataclass(frozen=True, slots=True)
class RequestClaim:
    """The schedd's REQUEST_CLAIM with the request (job) ad."""

    claim_id: str
    request: ClassAd
    schedd: str = "schedd"
    alive_interval: float = 300.0
    preempt_claim_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ActivateClaim:
    claim_id: str
    job: ClassAd


@dataclass(frozen=True, slots=True)
class DeactivateClaim:
    claim_id: str
    forcibly: bool = False


@dataclass(frozen=True, slots=True)
class ReleaseClaim:
    """The schedd releases (gives up) a claim."""

    claim_id: str


@dataclass(frozen=True, slots=True)
class Alive:
    """A keep-alive for a claim: renews its lease."""

    claim_id: str


@dataclass(frozen=True, slots=True)
class StarterExited:
    """The starter of a slot is gone (the job finished, was vacated or killed).

    ``claim_id`` is the claim the starter ran under (``StartJob.claim_id``). Give it:
    dynamic sub-ids are reused, so only the claim id tells a removed ``slot1_1`` from
    the new one; without it the message is taken to be about a removed incarnation of
    that name whose starter is still being killed, if there is one.
    """

    slot: str
    claim_id: str = ""


@dataclass(frozen=True, slots=True)
class FinalJobUpdate:
    """The starter sent its final job update and is exiting (Claimed/Cleaning).

    ``claim_id`` as for ``StarterExited``.
    """

    slot: str
    claim_id: str = ""


@dataclass(frozen=True, slots=True)
class JobUsage:
    """The starter measured the claim's job: ``attributes`` (HTCondor's names: ``ResidentSetSize``,
    ``MemoryUsage``, ``ImageSize``, ``DiskUsage``, ``CpusUsage``, ``RemoteUserCpu`` …) go into
    the startd's copy of the job ad, where its policy expressions read them."""

    slot: str
    claim_id: str
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BenchmarksFinished:
    slot: str
    mips: int = 0
    kflops: int = 0


@dataclass(frozen=True, slots=True)
class BackfillClientStarted:
    slot: str


@dataclass(frozen=True, slots=True)
class BackfillClientExited:
    slot: str


@dataclass(frozen=True, slots=True)
class Vacate:
    """condor_vacate (``fast``: condor_vacate -fast); ``slot`` None means every slot."""

    slot: str | None = None
    fast: bool = False


@dataclass(frozen=True, slots=True)
class SuspendClaim:
    """Suspend the job of ``slot`` (condor_suspend, through the schedd). ``claim_id``, when given,
    must be the slot's claim: a message about a claim that has ended does nothing."""

    slot: str
    claim_id: str = ""


@dataclass(frozen=True, slots=True)
class ContinueClaim:
    """Resume a suspended job (condor_continue); ``claim_id`` as in ``SuspendClaim``."""

    slot: str
    claim_id: str = ""


@dataclass(frozen=True, slots=True)
class Shutdown:
    """condor_off: peaceful, graceful or fast."""

    how: How = How.GRACEFUL


@dataclass(frozen=True, slots=True)
class Drain:
    """condor_drain: how fast, what to do on completion, and the optional expressions."""

    how_fast: DrainSpeed = DrainSpeed.GRACEFUL
    on_completion: DrainCompletion = DrainCompletion.NOTHING
    check_expr: str | None = None
    start_expr: str | None = None
    reason: str = "by admin"
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class CancelDrain:
    request_id: str | None = None


Message = (SensorReadings | MatchNotification | RequestClaim | ActivateClaim | DeactivateClaim
           | ReleaseClaim | Alive | StarterExited | FinalJobUpdate | JobUsage | BenchmarksFinished
           | BackfillClientStarted | BackfillClientExited | Vacate | SuspendClaim | ContinueClaim
           | Shutdown | Drain | CancelDrain)

# --------------------------------------------------------------------------- actions out


@dataclass(frozen=True, slots=True)
class StartJob:
    slot: str
    claim_id: str
    job: ClassAd


@dataclass(frozen=True, slots=True)
class SuspendJob:
    slot: str
    claim_id: str


@dataclass(frozen=True, slots=True)
class ContinueJob:
    slot: str
    claim_id: str


@dataclass(frozen=True, slots=True)
class SoftKill:
    """Vacate gracefully: send the job its KillSig and allow ``max_vacate_time`` seconds."""

    slot: str
    claim_id: str
    kill_sig: str
    max_vacate_time: float


@dataclass(frozen=True, slots=True)
class HardKill:
    slot: str
    claim_id: str


@dataclass(frozen=True, slots=True)
class KillStarterFamily:
    """KILLING_TIMEOUT passed: SIGKILL the starter and all its children."""

    slot: str
    claim_id: str = ""


@dataclass(frozen=True, slots=True)
class HoldJob:
    """WANT_HOLD was true when PREEMPT fired: put the job on hold (code 21)."""

    slot: str
    claim_id: str
    reason: str
    code: int = 21
    subcode: int = 0
    hard: bool = False


@dataclass(frozen=True, slots=True)
class SendAd:
    """Advertise a slot ad to the collector (``invalidate``: withdraw it)."""

    name: str
    ad: ClassAd | None
    invalidate: bool = False


@dataclass(frozen=True, slots=True)
class ClaimReply:
    """Answer to REQUEST_CLAIM; ``leftovers`` is the partitionable slot after carving."""

    claim_id: str
    accepted: bool
    reason: str = ""
    slot: str = ""
    leftovers: ClassAd | None = None


@dataclass(frozen=True, slots=True)
class ActivateReply:
    """Answer to ACTIVATE_CLAIM; an accepted one carries what the slot gives the job, as job ad
    attributes (``…Provisioned``, ``ProvisionedResources``, ``CondorScratchDir``): what a
    ``provisioned`` JobUpdate would say, in the same message."""

    claim_id: str
    accepted: bool
    reason: str = ""
    resources: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeactivateReply:
    """``start``: whether the schedd may activate the claim again."""

    claim_id: str
    start: bool


@dataclass(frozen=True, slots=True)
class NotifySchedd:
    """Tell the schedd that holds ``claim_id`` something (``release``: the claim is gone)."""

    schedd: str
    claim_id: str
    kind: Notice
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RunBenchmarks:
    slot: str


@dataclass(frozen=True, slots=True)
class StartBackfillClient:
    slot: str


@dataclass(frozen=True, slots=True)
class KillBackfillClient:
    slot: str


@dataclass(frozen=True, slots=True)
class DrainReply:
    accepted: bool
    request_id: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DaemonAction:
    """The startd itself should exit, restart or reconfigure (drain completion, shutdown);
    ``no_restart``: an exit the master must not undo by starting the startd again
    (condor_drain -exit-on-completion)."""

    kind: DaemonActionKind
    no_restart: bool = False


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    """A policy expression did not parse or evaluated to ERROR; the slot used its safe value."""

    slot: str
    knob: str
    problem: str


#: ``JobUpdate`` is the schedd's message: the core sends it itself about a job it does not
#: start (a missed deferral time, a held start ended by a vacate)
Action = (StartJob | SuspendJob | ContinueJob | SoftKill | HardKill | KillStarterFamily | HoldJob
          | SendAd | ClaimReply | ActivateReply | DeactivateReply | NotifySchedd | RunBenchmarks
          | StartBackfillClient | KillBackfillClient | DrainReply | DaemonAction | PolicyProblem
          | JobUpdate)
