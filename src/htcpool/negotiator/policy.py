"""Reading the negotiator's knobs from a configuration: the one place that knows their names.

``policy_from_config(config)`` takes any object with HTCondor-style typed accessors
(``get_bool/get_int/get_float/get_str(name, subsystem=…)``, returning None for a knob that is
unset and has no default) and returns a ``NegotiatorPolicy``. Defaults come from the
configuration's own table (``param_info.in``); where a knob has no table entry (the ``_STABLE``
pair, ``ALLOW_PSLOT_PREEMPTION``, ``NEGOTIATOR_STRICT_ENFORCE_QUOTA``) HTCondor's code default is
used (``matchmaker.cpp`` and ``GroupEntry.cpp``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from htcpool.config import ConfigValueError
from htcpool.negotiator.errors import PolicyError
from htcpool.negotiator.groupknobs import group_policy_from_config
from htcpool.negotiator.settings import (
    AccountantPolicy,
    AutoclusterPolicy,
    NegotiatorPolicy,
)

SUBSYSTEM = "NEGOTIATOR"


class ConfigSource(Protocol):
    """What the adapter needs of a configuration (``htcpool.config.Config`` has it)."""

    def get_bool(self, name: str, *, subsystem: str | None = None) -> Any: ...

    def get_int(self, name: str, *, subsystem: str | None = None) -> Any: ...

    def get_float(self, name: str, *, subsystem: str | None = None) -> Any: ...

    def get_str(self, name: str, *, subsystem: str | None = None) -> Any: ...


def _str(cfg: ConfigSource, name: str, default: str = "") -> str:
    v = cfg.get_str(name, subsystem=SUBSYSTEM)
    return default if v is None else str(v)


def _bool(cfg: ConfigSource, name: str, default: bool) -> bool:
    v = cfg.get_bool(name, subsystem=SUBSYSTEM)
    return default if v is None else bool(v)


def _int(cfg: ConfigSource, name: str, default: int, subsystem: str = SUBSYSTEM) -> int:
    v = cfg.get_int(name, subsystem=subsystem)
    return default if v is None else int(v)


def _float(cfg: ConfigSource, name: str, default: float | None) -> float | None:
    """A real knob, converted by the configuration as ``param_double`` does (``24*3600`` works)."""
    try:
        v = cfg.get_float(name, subsystem=SUBSYSTEM)
    except (ConfigValueError, ValueError) as e:
        raise PolicyError(f"{name} is not a number: {e}") from None
    return default if v is None else float(v)


def _names(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,]+", text) if w]


def accountant_policy_from_config(cfg: ConfigSource) -> AccountantPolicy:
    factors: dict[str, float] = {}
    for name in ["<none>", *_names(_str(cfg, "GROUP_NAMES"))]:
        v = _float(cfg, f"GROUP_PRIO_FACTOR_{name}", None)
        if v:
            factors[name.lower()] = v
    d = AccountantPolicy()
    return AccountantPolicy(
        priority_halflife=max(1e-5, _float(cfg, "PRIORITY_HALFLIFE", d.priority_halflife) or d.priority_halflife),
        default_prio_factor=_float(cfg, "DEFAULT_PRIO_FACTOR", d.default_prio_factor) or d.default_prio_factor,
        nice_user_prio_factor=_float(cfg, "NICE_USER_PRIO_FACTOR", d.nice_user_prio_factor) or d.nice_user_prio_factor,
        nice_user_prefix=_str(cfg, "NICE_USER_ACCOUNTING_GROUP_NAME", "nice-user") or "nice-user",
        remote_prio_factor=_float(cfg, "REMOTE_PRIO_FACTOR", d.remote_prio_factor) or d.remote_prio_factor,
        accountant_local_domain=_str(cfg, "ACCOUNTANT_LOCAL_DOMAIN"),
        group_prio_factors=factors,
        discount_suspended_resources=_bool(cfg, "NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES", False),
        use_slot_weights=_bool(cfg, "NEGOTIATOR_USE_SLOT_WEIGHTS", True),
        slot_weight=_str(cfg, "SLOT_WEIGHT", "Cpus") or "Cpus",
        force_negotiator_slot_weight=_bool(cfg, "FORCE_NEGOTIATOR_SLOT_WEIGHT", False),
    )


def _concurrency_limits(cfg: ConfigSource, names: Iterable[str]) -> dict[str, Any]:
    """CONCURRENCY_LIMIT_DEFAULT, and the ``<NAME>_LIMIT`` / ``CONCURRENCY_LIMIT_DEFAULT_<prefix>``
    knobs: those the configuration defines (when it can list its definitions; names of the
    parameter table are not limits) and those of the limit ``names`` given (a driver may pass the
    names its jobs use)."""
    wanted = {n.lower() for n in names}
    defined = getattr(cfg, "definitions", None)
    in_table = getattr(cfg, "table_default", None)
    if callable(defined):
        for d in defined():
            knob = str(getattr(d, "name", "")).lower()
            if callable(in_table) and in_table(knob.upper()) is not None:
                continue  # a knob of the parameter table (DETECTED_CPUS_LIMIT …), not a limit
            if knob.endswith("_limit") and len(knob) > len("_limit"):
                wanted.add(knob[: -len("_limit")])
            elif knob.startswith("concurrency_limit_default_"):
                wanted.add(knob[len("concurrency_limit_default_"):] + ".*")
    maxima: dict[str, float] = {}
    prefixes: dict[str, float] = {}
    for name in sorted(wanted):
        if name.endswith(".*"):
            prefix = name[:-2]
        else:
            v = _number_or_none(cfg, f"{name.upper()}_LIMIT")
            if v is not None:
                maxima[name] = v
            prefix = name.partition(".")[0] if "." in name else ""
        if prefix:
            v = _number_or_none(cfg, f"CONCURRENCY_LIMIT_DEFAULT_{prefix.upper()}")
            if v is not None:
                prefixes[prefix] = v
    default = _float(cfg, "CONCURRENCY_LIMIT_DEFAULT", 2308032.0)
    return {
        "concurrency_limit_default": 2308032.0 if default is None else default,
        "concurrency_limits": maxima,
        "concurrency_limit_defaults": prefixes,
    }


def _number_or_none(cfg: ConfigSource, name: str) -> float | None:
    """A knob's numeric value; None when it is unset or not a number (an unrelated ``…_LIMIT``)."""
    try:
        return _float(cfg, name, None)
    except PolicyError:
        return None


def policy_from_config(cfg: ConfigSource, limit_names: Iterable[str] = ()) -> NegotiatorPolicy:
    """Every negotiator knob, read once; the result is a plain frozen record. ``limit_names`` are
    concurrency-limit names whose ``<NAME>_LIMIT`` to read beyond those the configuration lists."""
    d = NegotiatorPolicy()
    length = cfg.get_int("NEGOTIATION_CYCLE_STATS_LENGTH", subsystem=SUBSYSTEM)
    min_interval = cfg.get_float("NEGOTIATOR_MIN_INTERVAL", subsystem=SUBSYSTEM)
    return NegotiatorPolicy(
        interval=float(cfg.get_int("NEGOTIATOR_INTERVAL", subsystem=SUBSYSTEM) or d.interval),
        min_interval=d.min_interval if min_interval is None else float(min_interval),
        preemption_requirements=_str(cfg, "PREEMPTION_REQUIREMENTS") or "False",
        preemption_requirements_stable=_bool(cfg, "PREEMPTION_REQUIREMENTS_STABLE", True),
        preemption_rank=_str(cfg, "PREEMPTION_RANK") or d.preemption_rank,
        preemption_rank_stable=_bool(cfg, "PREEMPTION_RANK_STABLE", True),
        pre_job_rank=_str(cfg, "NEGOTIATOR_PRE_JOB_RANK") or d.pre_job_rank,
        post_job_rank=_str(cfg, "NEGOTIATOR_POST_JOB_RANK") or d.post_job_rank,
        consider_preemption=_bool(cfg, "NEGOTIATOR_CONSIDER_PREEMPTION", True),
        consider_early_preemption=_bool(cfg, "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION", False),
        allow_pslot_preemption=_bool(cfg, "ALLOW_PSLOT_PREEMPTION", False),
        ignore_user_priorities=_bool(cfg, "NEGOTIATOR_IGNORE_USER_PRIORITIES", False),
        slot_constraint=_str(cfg, "NEGOTIATOR_SLOT_CONSTRAINT"),
        slot_poolsize_constraint=(_str(cfg, "NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT")
                                  or _str(cfg, "GROUP_DYNAMIC_MACH_CONSTRAINT")),
        submitter_constraint=_str(cfg, "NEGOTIATOR_SUBMITTER_CONSTRAINT"),
        job_constraint=_str(cfg, "NEGOTIATOR_JOB_CONSTRAINT"),
        max_time_per_cycle=_float(cfg, "NEGOTIATOR_MAX_TIME_PER_CYCLE", d.max_time_per_cycle) or 0.0,
        max_time_per_submitter=_float(cfg, "NEGOTIATOR_MAX_TIME_PER_SUBMITTER", d.max_time_per_submitter) or 0.0,
        max_time_per_schedd=_float(cfg, "NEGOTIATOR_MAX_TIME_PER_SCHEDD", d.max_time_per_schedd) or 0.0,
        max_time_per_piespin=_float(cfg, "NEGOTIATOR_MAX_TIME_PER_PIESPIN", d.max_time_per_piespin) or 0.0,
        cycle_stats_length=max(0, min(100, int(length) if length is not None else 3)),
        ignore_job_ranks=_bool(cfg, "NEGOTIATOR_IGNORE_JOB_RANKS", False),
        use_global_job_prios=_bool(cfg, "USE_GLOBAL_JOB_PRIOS", False),
        cross_slot_prios=_bool(cfg, "NEGOTIATOR_CROSS_SLOT_PRIOS", False),
        startd_resource_prefix=_str(cfg, "STARTD_RESOURCE_PREFIX") or "slot",
        max_global_job_prios=_int(cfg, "MAX_GLOBAL_JOB_PRIOS", 500, subsystem="SCHEDD"),
        depth_first=_bool(cfg, "NEGOTIATOR_DEPTH_FIRST", False),
        **_concurrency_limits(cfg, limit_names),
        accountant=accountant_policy_from_config(cfg),
        groups=group_policy_from_config(cfg),
    )


def autocluster_policy_from_config(cfg: ConfigSource) -> AutoclusterPolicy:
    """The schedd's knobs for folding jobs into autoclusters (read with subsystem SCHEDD)."""
    sig = cfg.get_str("SIGNIFICANT_ATTRIBUTES", subsystem="SCHEDD")
    add = cfg.get_str("ADD_SIGNIFICANT_ATTRIBUTES", subsystem="SCHEDD")
    all_jobs = cfg.get_bool("NEGOTIATE_ALL_JOBS_IN_CLUSTER", subsystem="SCHEDD")
    return AutoclusterPolicy(
        significant_attributes=tuple(_names(str(sig))) if sig else None,
        add_significant_attributes=tuple(_names(str(add))) if add else (),
        negotiate_all_jobs_in_cluster=bool(all_jobs) if all_jobs is not None else False,
    )
