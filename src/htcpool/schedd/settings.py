"""Configuration of the schedd core, filled from any configuration reader.

``ScheddSettings`` holds the knobs the core reads: queue super users, the
submit requirements, the job transforms, the ``userMap`` maps, the system
periodic expressions, the accounting domain of submitter names
(``ACCOUNTING_DOMAIN``, default ``UID_DOMAIN``; empty: names without a
domain), the local time zone used for cron schedules, and the claim knobs
``ALIVE_INTERVAL`` (default 300 s), ``MAX_CLAIM_ALIVES_MISSED`` (default 6) and
``CLAIM_PARTITIONABLE_LEFTOVERS`` (default true).
``settings_from_config(get, read_file)`` builds it from a reader that answers
``get(NAME) -> str | None`` with raw (unexpanded) values where HTCondor wants
them raw (transform bodies), and ``read_file(path)`` for map files.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.config import integer_value
from htcpool.schedd.submit_requirements import SubmitRequirement
from htcpool.schedd.transforms import Transform
from htcpool.schedd.usermap import UserMaps


def _names(text: str | None) -> list[str]:
    return [n for n in re.split(r"[\s,]+", text or "") if n]


def _int(get: Callable[[str], str | None], name: str, default: int) -> int:
    """An integer knob, converted as HTCondor's ``param_integer`` does (``5*60`` is 300)."""
    text = get(name)
    return default if text is None or not text.strip() else integer_value(name, text)


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
    system_periodic_hold: str = ""
    system_periodic_release: str = ""
    system_periodic_remove: str = ""
    system_max_releases: int = -1
    schedd_interval: int = 300
    local_zone: int = 0
    accounting_domain: str = ""
    schedd_name: str = "schedd@localhost"
    schedd_address: str = "<127.0.0.1:9618>"
    alive_interval: int = 300
    max_claim_alives_missed: int = 6
    claim_partitionable_leftovers: bool = True


def settings_from_config(get: Callable[[str], str | None],
                         read_file: Callable[[str], str | None] = lambda path: None) -> ScheddSettings:
    s = ScheddSettings()
    supers = get("QUEUE_SUPER_USERS")
    if supers is not None:
        s.queue_super_users = frozenset(_names(supers))
    for name in _names(get("SUBMIT_REQUIREMENT_NAMES")):
        if name.upper() == "NAMES":
            continue
        expr = get(f"SUBMIT_REQUIREMENT_{name}")
        if not expr:
            continue
        s.submit_requirements.append(SubmitRequirement.from_text(
            name, expr, get(f"SUBMIT_REQUIREMENT_{name}_REASON"),
            _bool(get(f"SUBMIT_REQUIREMENT_{name}_IS_WARNING"))))
    for name in _names(get("JOB_TRANSFORM_NAMES")):
        body = get(f"JOB_TRANSFORM_{name}")
        if body:
            s.transforms.append(Transform.parse(name, body))
    for name in _names(get("SCHEDD_CLASSAD_USER_MAP_NAMES")):
        text = get(f"CLASSAD_USER_MAPDATA_{name}")
        path = get(f"CLASSAD_USER_MAPFILE_{name}")
        if text is None and path:
            text = read_file(path)
        if text is not None:
            s.user_maps.add(name, text, _bool(get(f"CLASSAD_USER_MAP_PREFIX_{name}")))
    s.system_periodic_hold = get("SYSTEM_PERIODIC_HOLD") or ""
    s.system_periodic_release = get("SYSTEM_PERIODIC_RELEASE") or ""
    s.system_periodic_remove = get("SYSTEM_PERIODIC_REMOVE") or ""
    s.system_max_releases = _int(get, "SYSTEM_MAX_RELEASES", -1)
    s.schedd_interval = _int(get, "SCHEDD_INTERVAL", 300)
    s.alive_interval = _int(get, "ALIVE_INTERVAL", 300)
    s.max_claim_alives_missed = _int(get, "MAX_CLAIM_ALIVES_MISSED", 6)
    s.claim_partitionable_leftovers = _bool(get("CLAIM_PARTITIONABLE_LEFTOVERS"), True)
    domain = get("ACCOUNTING_DOMAIN")
    s.accounting_domain = (domain if domain is not None else get("UID_DOMAIN") or "").strip()
    return s
