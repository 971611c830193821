"""The execute point's policy core (HTCondor's condor_startd), without I/O.

Build a ``Startd`` from ``StartdSettings`` (``settings_from_config`` fills them from
an ``htcpool.config.Config``), then feed it messages and timer calls, each with
``now``; it answers with actions (``htcpool.protocol.startd``) and keeps one ClassAd per slot::

    startd = Startd(settings_from_config(config), now=0.0)
    actions = startd.handle(RequestClaim(claim_id, job_ad), now=10.0)
    deadline = startd.next_deadline(); actions = startd.handle_timer(deadline)

Modules: ``states`` (the transition table), ``layout`` (slot types and resources),
``settings`` (knobs and the config adapter), ``policy`` (expressions), ``evaluation``
(the policy order), ``transitions`` (applying a transition), ``claim`` and
``retirement`` (claims, how they end, retirement and vacate time), ``activation``
(a job's start, held until its deferral time, and the end of its starter), ``carving``
(partitionable slots), ``dynamic`` and ``ads`` (slot ads), ``drain`` (draining),
``backfill`` (the machine's one backfill client), ``handlers`` (messages) and
``machine`` (the ``Startd`` core).
"""

from htcpool.protocol.startd import (
    Action,
    ActivateClaim,
    ActivateReply,
    Alive,
    BackfillClientExited,
    BackfillClientStarted,
    BenchmarksFinished,
    CancelDrain,
    ClaimReply,
    ContinueClaim,
    ContinueJob,
    DaemonAction,
    DeactivateClaim,
    DeactivateReply,
    Drain,
    DrainReply,
    FinalJobUpdate,
    HardKill,
    HoldJob,
    JobUsage,
    KillBackfillClient,
    KillStarterFamily,
    MatchNotification,
    Message,
    NotifySchedd,
    PolicyProblem,
    ReleaseClaim,
    RequestClaim,
    RunBenchmarks,
    SendAd,
    SensorReadings,
    Shutdown,
    SoftKill,
    StartBackfillClient,
    StarterExited,
    StartJob,
    SuspendClaim,
    SuspendJob,
    Vacate,
)
from htcpool.startd.errors import IllegalTransition, LayoutError, StartdError, StartdUsageError
from htcpool.startd.layout import (
    Inventory,
    Resources,
    Share,
    ShareKind,
    SlotSpec,
    build_layout,
    parse_slot_type,
)
from htcpool.startd.machine import Startd
from htcpool.startd.settings import (
    ConfigSource,
    SlotTypeSettings,
    StartdSettings,
    settings_from_config,
)
from htcpool.startd.slot import Slot, SlotKind
from htcpool.startd.states import (
    CLAIMED_LIKE,
    CLAIMED_OR_MATCHED,
    TRANSITIONS,
    Activity,
    Event,
    State,
    Transition,
    step,
    transition_diagram,
)

__all__ = [
    "CLAIMED_LIKE", "CLAIMED_OR_MATCHED", "TRANSITIONS", "Action", "ActivateClaim", "ActivateReply", "Activity", "Alive", "BackfillClientExited",
    "BackfillClientStarted", "BenchmarksFinished", "CancelDrain", "ClaimReply", "ConfigSource",
    "ContinueClaim", "ContinueJob", "DaemonAction", "DeactivateClaim", "DeactivateReply", "Drain",
    "DrainReply", "Event", "FinalJobUpdate", "HardKill", "HoldJob", "JobUsage", "IllegalTransition", "Inventory",
    "KillBackfillClient", "KillStarterFamily", "LayoutError", "MatchNotification", "Message",
    "NotifySchedd", "PolicyProblem", "ReleaseClaim", "RequestClaim", "Resources", "RunBenchmarks",
    "SendAd", "SensorReadings", "Share", "ShareKind", "Shutdown", "Slot", "SlotKind", "SlotSpec", "SlotTypeSettings", "SoftKill",
    "StartBackfillClient", "StartJob", "Startd", "StartdError", "StartdSettings", "StartdUsageError",
    "StarterExited", "State", "SuspendClaim", "SuspendJob", "Transition", "Vacate", "build_layout",
    "parse_slot_type", "settings_from_config", "step", "transition_diagram",
]
