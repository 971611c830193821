"""The schedd's decision core (sans-I/O): the job queue, its claims and its policies.

``Schedd`` (``core``) takes every message a schedd receives, each with ``now``, and
answers with an ``Outcome``: the reply and the actions for its driver (``messages``:
protocol messages addressed to a startd, the negotiator or the collector); its timers
come from ``next_deadline(now)`` and ``handle_timer(now)``. Its handlers live in
``commands`` (users), ``offers`` (the negotiator), ``shadow`` (the startds) and
``reconnect`` (after a restart); ``ads`` builds what it advertises.

``JobQueue`` holds clusters and procs and applies submit, hold, release,
remove, condor_prio, vacate, start, suspend and finish, with the job's
policy expressions, crontab and deferral handling, job transforms and submit
requirements. Time comes in as ``now``; state goes out through a
``QueueStore`` and ``LogEvent`` records (``format_event`` renders the user log).
``ClaimManager`` holds the schedd's claims on slots: request, activate, reuse,
release, keep-alives and job leases.
"""

from htcpool.schedd.claims import (
    ClaimEvent,
    ClaimManager,
    ClaimState,
    IllegalClaimEvent,
    UnknownClaim,
)
from htcpool.schedd.core import Schedd
from htcpool.schedd.crontab import CronError, CronSchedule
from htcpool.schedd.errors import (
    BadRequest,
    MapFileError,
    PermissionDenied,
    ScheddError,
    SubmitRejected,
    UnknownJob,
)
from htcpool.schedd.eventlog import LogEvent, format_event
from htcpool.schedd.messages import (
    Action,
    AskStartd,
    LocalJobReport,
    Outcome,
    StartdUnreachable,
    StartLocalJob,
    StopLocalJob,
    ToCollector,
    ToNegotiator,
    ToStartd,
)
from htcpool.schedd.policy import PolicyAction, PolicyKind
from htcpool.schedd.queue import JobQueue
from htcpool.schedd.settings import ScheddSettings, settings_from_config
from htcpool.schedd.states import TRANSITIONS, IllegalTransition, JobEvent, JobStatus
from htcpool.schedd.store import MemoryStore, NullStore, QueueStore
from htcpool.schedd.submit_requirements import SubmitRequirement
from htcpool.schedd.transforms import Transform
from htcpool.schedd.usermap import UserMaps

__all__ = [
    "TRANSITIONS", "Action", "AskStartd", "BadRequest", "ClaimEvent", "ClaimManager",
    "ClaimState", "CronError", "CronSchedule", "IllegalClaimEvent", "IllegalTransition",
    "JobEvent", "JobQueue", "JobStatus", "LocalJobReport", "LogEvent", "MapFileError", "MemoryStore",
    "NullStore", "Outcome", "PermissionDenied", "PolicyAction", "PolicyKind", "QueueStore", "Schedd",
    "ScheddError", "ScheddSettings", "StartLocalJob", "StartdUnreachable", "StopLocalJob", "SubmitRejected",
    "SubmitRequirement",
    "ToCollector", "ToNegotiator", "ToStartd", "Transform", "UnknownClaim", "UnknownJob",
    "UserMaps", "format_event", "settings_from_config",
]
