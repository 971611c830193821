"""Configuration knobs that condor_submit reads, as one plain settings object.

The submit core takes a ``SubmitSettings``; ``settings_from_config`` fills one
from any configuration reader that answers ``get(name) -> str | None`` (the
``htcpool.config`` accessors, a dictionary's ``get``), applying HTCondor's
defaults for knobs that are not set. ``KNOBS`` is the table from each field to
its knob name (HTCondor's spelling: ``JOB_DEFAULT_REQUESTCPUS``, no underscore
before CPUS) and kind. Values that are expressions stay text; the builder
parses them where they are used.

``SUBMIT_ATTRS`` (and its old name ``SUBMIT_EXPRS``, and ``SYSTEM_SUBMIT_ATTRS``)
name other knobs whose values go into every job ad, as the admin manual's
"condor_submit Configuration File Entries" describes: a plain name is a default
the submit file may override (it is in the ad before any command runs), a name
written ``+Name`` or ``MY.Name`` is forced over the submit file's commands. The
referenced values are read here, so the core never sees the configuration.
Knobs that are not booleans or numbers when they should be raise ``ValueError``
naming the knob.
"""

from __future__ import annotations

import re
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
    job_default_notification: str = ""
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
    submit_default_should_transfer_files: str = ""
    submit_allow_getenv: bool = True
    warn_on_unused_submit_file_macros: bool = True
    container_shared_fs: str = ""
    #: MAX_JOBS_PER_SUBMISSION: the jobs one description may build at once (0: no cap here,
    #: the schedd's own still applies; htcpool.submit.limits)
    max_jobs_per_submission: int = 0
    #: SUBMIT_ATTRS and friends: (attribute, expression text) put in the ad before the commands
    submit_attrs: tuple[tuple[str, str], ...] = ()
    #: the ``+Name`` / ``MY.Name`` entries of SUBMIT_ATTRS: set over the submit file's commands
    forced_submit_attrs: tuple[tuple[str, str], ...] = ()


#: field -> knob name, where the knob is not simply the field's name in capitals
KNOB_NAMES = {
    "job_default_request_cpus": "JOB_DEFAULT_REQUESTCPUS",
    "job_default_request_memory": "JOB_DEFAULT_REQUESTMEMORY",
    "job_default_request_disk": "JOB_DEFAULT_REQUESTDISK",
    "job_default_request_gpus": "JOB_DEFAULT_REQUESTGPUS",
}
#: the knobs naming other knobs whose values go into the job ad, in the order HTCondor reads them
SUBMIT_ATTR_KNOBS = ("SUBMIT_ATTRS", "SUBMIT_EXPRS", "SYSTEM_SUBMIT_ATTRS")
_TRUE = ("true", "yes", "t", "y", "1", "on")
_FALSE = ("false", "no", "f", "n", "0", "off")


def knob_name(field_name: str) -> str:
    """The configuration knob a ``SubmitSettings`` field is read from."""
    return KNOB_NAMES.get(field_name, field_name.upper())


def _bool(knob: str, text: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{knob} must be a boolean, not {text.strip()!r}")


def _int(knob: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{knob} must be an integer, not {text.strip()!r}") from None


def submit_attr_names(get: Callable[[str], str | None]) -> list[str]:
    """The names SUBMIT_ATTRS, SUBMIT_EXPRS and SYSTEM_SUBMIT_ATTRS list, each once (case-blind),
    sorted as HTCondor's case-insensitive set sorts them."""
    names: dict[str, str] = {}
    for knob in SUBMIT_ATTR_KNOBS:
        for name in re.split(r"[\s,]+", get(knob) or ""):
            if name:
                names.setdefault(name.lower(), name)
    return sorted(names.values(), key=str.lower)


def _submit_attrs(get: Callable[[str], str | None]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    plain: list[tuple[str, str]] = []
    forced: list[tuple[str, str]] = []
    for name in submit_attr_names(get):
        if name.startswith("+"):
            attr, out = name[1:], forced
        elif name.lower().startswith("my."):
            attr, out = name[3:], forced
        else:
            attr, out = name, plain
        value = get(attr)
        if attr and value is not None and value.strip():
            out.append((attr, value.strip()))
    return plain, forced


def settings_from_config(get: Callable[[str], str | None]) -> SubmitSettings:
    """A ``SubmitSettings`` from a configuration reader; unset knobs keep HTCondor's defaults."""
    base = SubmitSettings()
    values: dict[str, object] = {}
    for field_name, default in base.__dict__.items():
        if isinstance(default, tuple):
            continue
        knob = knob_name(field_name)
        text = get(knob)
        if text is None or text.strip() == "":
            continue
        if isinstance(default, bool):
            values[field_name] = _bool(knob, text)
        elif isinstance(default, int):
            values[field_name] = _int(knob, text)
        else:
            values[field_name] = text.strip()
    plain, forced = _submit_attrs(get)
    return SubmitSettings(**values, submit_attrs=tuple(plain),  # type: ignore[arg-type]
                          forced_submit_attrs=tuple(forced))
