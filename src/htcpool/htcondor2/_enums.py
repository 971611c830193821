"""The enumerations of HTCondor's ``htcondor2`` module, with its names and numbers.

Values are the numbers HTCondor's bindings use (``JobAction.Hold == 1``,
``DaemonCommand.Reconfig == 60004``), so code that stores or compares them
keeps working. The plural names (``AdTypes``, ``DaemonTypes`` …) are the
bindings' aliases of the same classes. See the HTCondor manual, "Python
bindings, version 2 API reference".
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class AdType(IntEnum):
    Startd = 0
    Schedd = 1
    Master = 2
    StartdPrivate = 5
    Submitter = 6
    Collector = 7
    License = 8
    Any = 10
    Negotiator = 13
    HAD = 14
    Generic = 15
    Credd = 16
    Grid = 19
    Placementd = 20
    Defrag = 22
    Accounting = 23
    Slot = 24
    StartDaemon = 25


class DaemonType(IntEnum):
    none = 0
    Any = 1
    Master = 2
    Schedd = 3
    Startd = 4
    Collector = 5
    Negotiator = 6
    Credd = 13
    Placementd = 15
    HAD = 17
    Generic = 18


class JobAction(IntEnum):
    Hold = 1
    Release = 2
    Remove = 3
    RemoveX = 4
    Vacate = 5
    VacateFast = 6
    Suspend = 8
    Continue = 9


class JobStatus(IntEnum):
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


class DrainType(IntEnum):
    Graceful = 0
    Quick = 10
    Fast = 20


class CompletionType(IntEnum):
    Nothing = 0
    Resume = 1
    Exit = 2
    Restart = 3
    Reconfig = 4


class VacateType(IntEnum):
    Graceful = 0
    Fast = 1


class QueryOpt(IntFlag):
    Default = 0
    AutoCluster = 1
    GroupBy = 2
    DefaultMyJobsOnly = 4
    SummaryOnly = 8
    IncludeClusterAd = 16
    IncludeJobsetAds = 32


class TransactionFlag(IntFlag):
    Default = 0
    NonDurable = 1
    SetDirty = 4
    ShouldLog = 8


class DaemonCommand(IntEnum):
    DaemonOn = 469
    DaemonOff = 467
    DaemonOffFast = 468
    DaemonsOn = 483
    DaemonsOff = 454
    DaemonsOffFast = 461
    DaemonsOffPeaceful = 484
    OffFast = 60006
    OffForce = 60042
    OffGraceful = 60005
    OffPeaceful = 60015
    Reconfig = 60004
    Restart = 453
    RestartPeaceful = 485
    SetForceShutdown = 60041
    SetPeacefulShutdown = 60016


class SubsystemType(IntEnum):
    Master = 1
    Collector = 2
    Negotiator = 3
    Schedd = 4
    Shadow = 5
    Startd = 6
    Starter = 7
    GAHP = 8
    Dagman = 9
    SharedPort = 10
    Daemon = 11
    Tool = 12
    Submit = 13
    Job = 14
    Auto = 15


class SubmitMethod(IntEnum):
    CondorSubmit = 0
    DAGMan = 1
    PythonBindings = 2
    HTCondorJobSubmit = 3
    HTCondorDagSubmit = 4
    HTCondorJobSetSubmit = 5
    UserSet = 100


class HistorySrc(IntEnum):
    ScheddJob = 0
    StartdJob = 1
    JobEpoch = 2
    Daemon = 3


class LogLevel(IntEnum):
    Always = 0
    Error = 1
    Status = 2
    Job = 4
    Machine = 5
    Config = 6
    Protocol = 7
    Priv = 8
    DaemonCore = 9
    Verbose = 10
    Security = 11
    Network = 14
    Hostname = 22
    Audit = 24
    FullDebug = 1024
    SubSecond = 67108864
    Timestamp = 134217728
    PID = 268435456
    NoHeader = 2147483648


class JobEventType(IntEnum):
    SUBMIT = 0
    EXECUTE = 1
    EXECUTABLE_ERROR = 2
    CHECKPOINTED = 3
    JOB_EVICTED = 4
    JOB_TERMINATED = 5
    IMAGE_SIZE = 6
    SHADOW_EXCEPTION = 7
    GENERIC = 8
    JOB_ABORTED = 9
    JOB_SUSPENDED = 10
    JOB_UNSUSPENDED = 11
    JOB_HELD = 12
    JOB_RELEASED = 13
    NODE_EXECUTE = 14
    NODE_TERMINATED = 15
    POST_SCRIPT_TERMINATED = 16
    GLOBUS_SUBMIT = 17
    GLOBUS_SUBMIT_FAILED = 18
    GLOBUS_RESOURCE_UP = 19
    GLOBUS_RESOURCE_DOWN = 20
    REMOTE_ERROR = 21
    JOB_DISCONNECTED = 22
    JOB_RECONNECTED = 23
    JOB_RECONNECT_FAILED = 24
    GRID_RESOURCE_UP = 25
    GRID_RESOURCE_DOWN = 26
    GRID_SUBMIT = 27
    JOB_AD_INFORMATION = 28
    JOB_STATUS_UNKNOWN = 29
    JOB_STATUS_KNOWN = 30
    JOB_STAGE_IN = 31
    JOB_STAGE_OUT = 32
    ATTRIBUTE_UPDATE = 33
    PRESKIP = 34
    CLUSTER_SUBMIT = 35
    CLUSTER_REMOVE = 36
    FACTORY_PAUSED = 37
    FACTORY_RESUMED = 38
    NONE = 39
    FILE_TRANSFER = 40
    RESERVE_SPACE = 41
    RELEASE_SPACE = 42
    FILE_COMPLETE = 43
    FILE_USED = 44
    FILE_REMOVED = 45
    DATAFLOW_JOB_SKIPPED = 46
    COMMON_FILES = 47


AdTypes = AdType
DaemonTypes = DaemonType
DrainTypes = DrainType
QueryOpts = QueryOpt
DaemonCommands = DaemonCommand
TransactionFlags = TransactionFlag
