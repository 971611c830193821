"""The negotiator's policy as plain data: one frozen dataclass per concern.

The core never reads configuration itself; it is handed these records. ``policy.py`` builds them
from any configuration object (the knobs and their HTCondor 25 defaults from ``param_info.in`` are
named beside each field), and tests build them directly. Expressions are kept as text here and
parsed once per cycle by the code that uses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: ``GROUP_SORT_EXPR``'s default: starvation order, ``<none>`` last, quota-less groups next to last.
DEFAULT_GROUP_SORT_EXPR = (
    'ifThenElse(AccountingGroup=?="<none>",3.4e+38,'
    "ifThenElse(GroupQuota>0,GroupResourcesInUse/GroupQuota,3.3e+38))"
)
DEFAULT_PREEMPTION_RANK = (
    "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)"
)
DEFAULT_PRE_JOB_RANK = (
    "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory"
)
DEFAULT_POST_JOB_RANK = (
    "(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops) - SlotID"
    " - 1.0e10*(Offline=?=True))"
)
ROOT_GROUP = "<none>"


@dataclass(frozen=True)
class AccountantPolicy:
    """Knobs of the accountant (user priorities and usage)."""

    priority_halflife: float = 86400.0  # PRIORITY_HALFLIFE (min 1e-5)
    default_prio_factor: float = 1000.0  # DEFAULT_PRIO_FACTOR
    nice_user_prio_factor: float = 1e10  # NICE_USER_PRIO_FACTOR
    nice_user_prefix: str = "nice-user"  # NICE_USER_ACCOUNTING_GROUP_NAME
    remote_prio_factor: float = 1e7  # REMOTE_PRIO_FACTOR
    accountant_local_domain: str = ""  # ACCOUNTANT_LOCAL_DOMAIN (empty: every user is local)
    #: GROUP_PRIO_FACTOR_<g>, keyed by lower-cased group name (``<none>`` for ungrouped users)
    group_prio_factors: Mapping[str, float] = field(default_factory=dict)
    discount_suspended_resources: bool = False  # NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES
    use_slot_weights: bool = True  # NEGOTIATOR_USE_SLOT_WEIGHTS
    slot_weight: str = "Cpus"  # SLOT_WEIGHT
    force_negotiator_slot_weight: bool = False  # FORCE_NEGOTIATOR_SLOT_WEIGHT


@dataclass(frozen=True)
class GroupSettings:
    """One entry of ``GROUP_NAMES`` with its own knobs."""

    name: str
    static_quota: float | None = None  # GROUP_QUOTA_<g>
    dynamic_quota: float | None = None  # GROUP_QUOTA_DYNAMIC_<g>
    accept_surplus: bool = False  # GROUP_ACCEPT_SURPLUS_<g>, defaulting to GROUP_ACCEPT_SURPLUS
    autoregroup: bool = False  # GROUP_AUTOREGROUP_<g>, defaulting to GROUP_AUTOREGROUP


@dataclass(frozen=True)
class GroupPolicy:
    """Hierarchical group quotas; an empty ``groups`` means no groups (plain mode)."""

    groups: tuple[GroupSettings, ...] = ()
    allow_quota_oversubscription: bool = True  # NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION
    sort_expr: str = DEFAULT_GROUP_SORT_EXPR  # GROUP_SORT_EXPR
    max_allocation_rounds: int = 3  # GROUP_QUOTA_MAX_ALLOCATION_ROUNDS
    round_robin_rate: float = 1.0e100  # GROUP_QUOTA_ROUND_ROBIN_RATE
    use_weighted_demand: bool = True  # NEGOTIATOR_USE_WEIGHTED_DEMAND
    strict_enforce_quota: bool = True  # NEGOTIATOR_STRICT_ENFORCE_QUOTA
    #: what reading the knobs above could not use, one sentence each naming the knob
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class NegotiatorPolicy:
    """Knobs of the negotiation cycle and of matchmaking."""

    interval: float = 60.0  # NEGOTIATOR_INTERVAL (0: the default)
    min_interval: float = 5.0  # NEGOTIATOR_MIN_INTERVAL
    preemption_requirements: str = "False"  # PREEMPTION_REQUIREMENTS
    preemption_requirements_stable: bool = True  # PREEMPTION_REQUIREMENTS_STABLE
    preemption_rank: str = DEFAULT_PREEMPTION_RANK  # PREEMPTION_RANK
    preemption_rank_stable: bool = True  # PREEMPTION_RANK_STABLE
    pre_job_rank: str = DEFAULT_PRE_JOB_RANK  # NEGOTIATOR_PRE_JOB_RANK
    post_job_rank: str = DEFAULT_POST_JOB_RANK  # NEGOTIATOR_POST_JOB_RANK
    consider_preemption: bool = True  # NEGOTIATOR_CONSIDER_PREEMPTION
    consider_early_preemption: bool = False  # NEGOTIATOR_CONSIDER_EARLY_PREEMPTION
    allow_pslot_preemption: bool = False  # ALLOW_PSLOT_PREEMPTION
    ignore_user_priorities: bool = False  # NEGOTIATOR_IGNORE_USER_PRIORITIES
    slot_constraint: str = ""  # NEGOTIATOR_SLOT_CONSTRAINT (empty: every slot)
    #: NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT, alias GROUP_DYNAMIC_MACH_CONSTRAINT (empty: every slot
    #: counts toward the pool size)
    slot_poolsize_constraint: str = ""
    submitter_constraint: str = ""  # NEGOTIATOR_SUBMITTER_CONSTRAINT (empty: every submitter)
    job_constraint: str = ""  # NEGOTIATOR_JOB_CONSTRAINT (empty: every job)
    max_time_per_cycle: float = 1200.0  # NEGOTIATOR_MAX_TIME_PER_CYCLE (seconds of the injected timer)
    max_time_per_submitter: float = 60.0  # NEGOTIATOR_MAX_TIME_PER_SUBMITTER
    max_time_per_schedd: float = 120.0  # NEGOTIATOR_MAX_TIME_PER_SCHEDD
    max_time_per_piespin: float = 120.0  # NEGOTIATOR_MAX_TIME_PER_PIESPIN
    cycle_stats_length: int = 3  # NEGOTIATION_CYCLE_STATS_LENGTH (0..100)
    ignore_job_ranks: bool = False  # NEGOTIATOR_IGNORE_JOB_RANKS
    use_global_job_prios: bool = False  # USE_GLOBAL_JOB_PRIOS
    cross_slot_prios: bool = False  # NEGOTIATOR_CROSS_SLOT_PRIOS
    startd_resource_prefix: str = "slot"  # STARTD_RESOURCE_PREFIX (empty: slot)
    max_global_job_prios: int = 500  # MAX_GLOBAL_JOB_PRIOS (the schedd's cap on JobPrioArray)
    depth_first: bool = False  # NEGOTIATOR_DEPTH_FIRST
    concurrency_limit_default: float = 2308032.0  # CONCURRENCY_LIMIT_DEFAULT
    #: <NAME>_LIMIT, keyed by lower-cased limit name (dotted names included)
    concurrency_limits: Mapping[str, float] = field(default_factory=dict)
    #: CONCURRENCY_LIMIT_DEFAULT_<prefix>, keyed by lower-cased prefix (for dotted names)
    concurrency_limit_defaults: Mapping[str, float] = field(default_factory=dict)
    accountant: AccountantPolicy = field(default_factory=AccountantPolicy)
    groups: GroupPolicy = field(default_factory=GroupPolicy)


@dataclass(frozen=True)
class AutoclusterPolicy:
    """How a schedd folds its idle jobs into resource requests."""

    significant_attributes: tuple[str, ...] | None = None  # SIGNIFICANT_ATTRIBUTES (overrides)
    add_significant_attributes: tuple[str, ...] = ()  # ADD_SIGNIFICANT_ATTRIBUTES
    negotiate_all_jobs_in_cluster: bool = False  # NEGOTIATE_ALL_JOBS_IN_CLUSTER
