"""Configuration knobs that condor_submit reads, as one plain settings object.

The submit core takes a ``SubmitSettings``; ``settings_from_config`` fills one
from any configuration reader that answers ``get(name) -> str | None`` (the
``htcpool.config`` accessors, a dictionary's ``get``), applying HTCondor's
defaults for knobs that are not set. Values that are expressions stay text;
the builder parses them where they are used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_REQUEST_DISK = "MAX({1024, (TransferInputSizeMB+1) * 1.25}) * 1024"


@dataclass(frozen=True)
class SubmitSettings:
    job_default_request_cpus: str = "1"
    job_default_request_memory: str = "128"
    job_default_request_disk: str = DEFAULT_REQUEST_DISK
    job_default_request_gpus: str = ""
    job_default_lease_duration: str = "2400"
    default_universe: str = "vanilla"
    default_rank: str = ""
    default_rank_vanilla: str = ""
    append_rank: str = ""
    append_rank_vanilla: str = ""
    append_requirements: str = ""
    append_req_vanilla: str = ""
    schedd_interval: int = 300
    nice_user_accounting_group_name: str = "nice-user"
    submit_insert_default_policy_exprs: bool = False
    default_job_max_retries: int = 2
    submit_generate_custom_resource_requirements: bool = True
    submit_request_missing_units: str = ""


def _bool(text: str) -> bool:
    return text.strip().lower() in ("true", "yes", "t", "1", "on")


def settings_from_config(get: Callable[[str], str | None]) -> SubmitSettings:
    """A ``SubmitSettings`` from a configuration reader; unset knobs keep HTCondor's defaults."""
    base = SubmitSettings()
    values: dict[str, object] = {}
    for field_name, default in base.__dict__.items():
        text = get(field_name.upper())
        if text is None or text.strip() == "":
            continue
        if isinstance(default, bool):
            values[field_name] = _bool(text)
        elif isinstance(default, int):
            values[field_name] = int(text.strip())
        else:
            values[field_name] = text.strip()
    return SubmitSettings(**values)  # type: ignore[arg-type]
