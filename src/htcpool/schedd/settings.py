"""Configuration of the schedd core, filled from any configuration reader.

``ScheddSettings`` holds the knobs the core reads: queue super users, the
submit requirements, the job transforms, the ``userMap`` maps, the system
periodic expressions, the accounting domain of submitter names
(``ACCOUNTING_DOMAIN``, default ``UID_DOMAIN``; empty: names without a
domain), the local time zone used for cron schedules, and the claim knobs
``ALIVE_INTERVAL`` (default 300 s), ``MAX_CLAIM_ALIVES_MISSED`` (default 6) and
``CLAIM_PARTITIONABLE_LEFTOVERS`` (default true), and the local and scheduler universe
knobs ``START_LOCAL_UNIVERSE``, ``START_SCHEDULER_UNIVERSE`` (expressions, kept as text)
and ``MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER`` (default 200), and
``SCHEDD_ALLOW_LATE_MATERIALIZE`` (default true: late-materialization factories are taken).
The pool's periodic expressions and their timing are ``htcpool.schedd.periodic``'s,
the queue limits ``htcpool.schedd.limits``'.
``settings_from_config(get, read_file, raw)`` builds it from a reader that answers
``get(NAME) -> str | None`` with expanded values, ``raw(NAME)`` with unexpanded ones
(HTCondor reads a transform body unexpanded, so that ``$(MY.attr)`` is expanded
against each job and other ``$(NAME)`` against the configuration then), and
``read_file(path)`` for map files. A knob that cannot be used (an integer that is not
one, an expression or a transform that does not parse) is left at its default and
described in ``problems``, naming the knob: the driver logs them and the schedd runs on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.classad.errors import ClassAdError
from htcpool.config import integer_value
from htcpool.schedd.errors import ScheddError
from htcpool.schedd.knobs import lenient
from htcpool.schedd.limits import QueueLimits, limits_from_config
from htcpool.schedd.periodic import PeriodicTiming, system_policy_from_config, timing_from_config
from htcpool.schedd.policy import SystemPolicy
from htcpool.schedd.protected import DEFAULT_SECURE_ATTRS, Protection
from htcpool.schedd.submit_requirements import SubmitRequirement
from htcpool.schedd.transforms import Transform
from htcpool.schedd.usermap import UserMaps
from htcpool.statistics import Collection, StatsSettings, default_settings, statistics_settings


def _names(text: str | None) -> list[str]:
    return [n for n in re.split(r"[\s,]+", text or "") if n]


def _int(get: Callable[[str], str | None], name: str, default: int, problems: list[str] | None = None) -> int:
    """An integer knob, converted as HTCondor's ``param_integer`` does (``5*60`` is 300); one
    that is not an integer raises, or is noted in ``problems`` and gives ``default``."""
    if problems is not None:
        return lenient(get, name, default, integer_value, problems)
    text = get(name)
    if text is None or not text.strip():
        return default
    return integer_value(name, text)


def _bool(text: str | None, default: bool = False) -> bool:
    if text is None or not text.strip():
        return default
    return text.strip().lower() in ("true", "yes", "t", "1")


@dataclass
class ScheddSettings:
    queue_super_users: frozenset[str] = frozenset({"root", "condor"})
    submit_requirements: list[SubmitRequirement] = field(default_factory=list)
    transforms: list[Transform] = field(default_factory=list)
    user_maps: UserMaps = field(default_factory=UserMaps)
    system_policy: SystemPolicy = field(default_factory=SystemPolicy)
    periodic_timing: PeriodicTiming = field(default_factory=PeriodicTiming)
    limits: QueueLimits = field(default_factory=QueueLimits)
    system_max_releases: int = -1
    #: knobs that could not be used, each naming the knob and why (the driver logs them)
    problems: list[str] = field(default_factory=list)
    schedd_interval: int = 300
    #: SCHEDD_MIN_INTERVAL: the least time between two sendings of the ads after changes (``core``)
    schedd_min_interval: int = 5
    local_zone: int = 0
    accounting_domain: str = ""
    schedd_name: str = "schedd@localhost"
    schedd_address: str = "<127.0.0.1:9618>"
    alive_interval: int = 300
    max_claim_alives_missed: int = 6
    claim_partitionable_leftovers: bool = True
    start_local_universe: str = "TotalLocalJobsRunning < 200"
    start_scheduler_universe: str = "TotalSchedulerJobsRunning < 500"
    max_running_scheduler_jobs_per_owner: int = 200
    #: condor_qedit's rules (schedd/edit.py): (SYSTEM_)IMMUTABLE_JOB_ATTRS, (SYSTEM_)PROTECTED_JOB_ATTRS
    immutable_job_attrs: frozenset[str] = frozenset(
        {"Owner", "ClusterId", "JobUniverse", "ProcId", "MyType", "TargetType", "User", "OsUser"})
    protected_job_attrs: frozenset[str] = frozenset()
    #: (SYSTEM_)SECURE_JOB_ATTRS and IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS (schedd/protected.py)
    secure_job_attrs: frozenset[str] = DEFAULT_SECURE_ATTRS
    refuse_secure_job_attrs: bool = False
    #: SCHEDD_ALLOW_LATE_MATERIALIZE: false refuses late-materialization factories (``factory``)
    allow_late_materialize: bool = True
    #: STATISTICS_TO_PUBLISH's SCHEDD collection and the window knobs (``statistics.schedd``)
    statistics: StatsSettings = field(default_factory=lambda: default_settings(Collection.SCHEDD))


def protection_of(settings: ScheddSettings) -> Protection:
    """The attribute rules of ``settings`` (schedd/protected.py), names in lower case."""
    return Protection.of(settings.immutable_job_attrs, settings.protected_job_attrs,
                         settings.secure_job_attrs, settings.refuse_secure_job_attrs)


def settings_from_config(get: Callable[[str], str | None],
                         read_file: Callable[[str], str | None] = lambda path: None,
                         raw: Callable[[str], str | None] | None = None) -> ScheddSettings:
    s = ScheddSettings()
    unexpanded = raw or get
    supers = get("QUEUE_SUPER_USERS")
    if supers is not None:
        s.queue_super_users = frozenset(_names(supers))
    for name in _names(get("SUBMIT_REQUIREMENT_NAMES")):
        if name.upper() == "NAMES":
            continue
        expr = get(f"SUBMIT_REQUIREMENT_{name}")
        if not expr:
            continue
        try:
            s.submit_requirements.append(SubmitRequirement.from_text(
                name, expr, get(f"SUBMIT_REQUIREMENT_{name}_REASON"),
                _bool(get(f"SUBMIT_REQUIREMENT_{name}_IS_WARNING"))))
        except (ClassAdError, ValueError, ScheddError) as e:
            s.problems.append(f"SUBMIT_REQUIREMENT_{name}: {e}; the requirement is ignored")
    for name in _names(get("JOB_TRANSFORM_NAMES")):
        body = unexpanded(f"JOB_TRANSFORM_{name}")
        if not body or not body.strip():
            s.problems.append(f"JOB_TRANSFORM_{name}: not defined, but named in JOB_TRANSFORM_NAMES; "
                              "the transform is skipped")
            continue
        try:
            s.transforms.append(Transform.parse(name, body, unexpanded))
        except ValueError as e:
            s.problems.append(f"{e}; the transform is skipped")
    for name in _names(get("SCHEDD_CLASSAD_USER_MAP_NAMES")):
        text = get(f"CLASSAD_USER_MAPDATA_{name}")
        path = get(f"CLASSAD_USER_MAPFILE_{name}")
        if text is None and path:
            text = read_file(path)
        if text is not None:
            s.user_maps.add(name, text, _bool(get(f"CLASSAD_USER_MAP_PREFIX_{name}")))
    s.system_policy = system_policy_from_config(get, s.problems)
    s.periodic_timing = timing_from_config(get, s.problems)
    s.limits = limits_from_config(get, s.problems)
    s.system_max_releases = _int(get, "SYSTEM_MAX_RELEASES", -1, s.problems)
    s.schedd_interval = _int(get, "SCHEDD_INTERVAL", 300, s.problems)
    s.schedd_min_interval = _int(get, "SCHEDD_MIN_INTERVAL", 5, s.problems)
    s.alive_interval = _int(get, "ALIVE_INTERVAL", 300, s.problems)
    s.max_claim_alives_missed = _int(get, "MAX_CLAIM_ALIVES_MISSED", 6, s.problems)
    s.claim_partitionable_leftovers = _bool(get("CLAIM_PARTITIONABLE_LEFTOVERS"), True)
    s.immutable_job_attrs = frozenset(_names(get("SYSTEM_IMMUTABLE_JOB_ATTRS"))
                                      + _names(get("IMMUTABLE_JOB_ATTRS"))) or s.immutable_job_attrs
    s.protected_job_attrs = frozenset(_names(get("SYSTEM_PROTECTED_JOB_ATTRS")) + _names(get("PROTECTED_JOB_ATTRS")))
    secure = _names(get("SYSTEM_SECURE_JOB_ATTRS")) + _names(get("SECURE_JOB_ATTRS"))
    s.secure_job_attrs = frozenset(secure) or s.secure_job_attrs
    s.refuse_secure_job_attrs = not _bool(get("IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS"), True)
    s.start_local_universe = get("START_LOCAL_UNIVERSE") or s.start_local_universe
    s.start_scheduler_universe = get("START_SCHEDULER_UNIVERSE") or s.start_scheduler_universe
    s.max_running_scheduler_jobs_per_owner = _int(get, "MAX_RUNNING_SCHEDULER_JOBS_PER_OWNER", 200,
                                                  s.problems)
    s.allow_late_materialize = _bool(get("SCHEDD_ALLOW_LATE_MATERIALIZE"), True)
    s.statistics = statistics_settings(get, Collection.SCHEDD, s.problems)
    domain = get("ACCOUNTING_DOMAIN")
    s.accounting_domain = (domain if domain is not None else get("UID_DOMAIN") or "").strip()
    return s
