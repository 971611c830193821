"""HTCondor's ``htcondor2`` Python API over an htcpool pool.

A script written for HTCondor's bindings runs on htcpool with its import
changed to ``from htcpool import htcondor2`` (docs/python.md lists every class
and method, and what differs). The classes speak htcpool's protocol to the
pool this process's configuration names (``htcondor2._pool``): ``Schedd``,
``Collector``, ``Startd``, ``Negotiator``; ``Submit`` and ``JobEventLog`` work
without a pool; ``param`` reads the configuration. ``htcpool.htcondor2.personal``
starts a personal pool.

Names are imported on first use, so ``import htcpool.htcondor2`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "HTCondorException": "_errors",
    "Schedd": "_schedd", "SubmitResult": "_schedd",
    "Submit": "_submit",
    "Collector": "_collector",
    "Startd": "_daemons", "Negotiator": "_daemons",
    "JobEventLog": "_eventlog", "JobEvent": "_eventlog",
    "param": "_param", "set_subsystem": "_param", "reload_config": "_param", "RemoteParam": "_param",
    "send_command": "_commands", "ping": "_commands", "enable_debug": "_commands",
    "enable_log": "_commands", "disable_debug": "_commands",
}
_ENUMS = ("AdType", "AdTypes", "DaemonType", "DaemonTypes", "JobAction", "JobStatus", "DrainType",
          "DrainTypes", "CompletionType", "VacateType", "QueryOpt", "QueryOpts", "TransactionFlag",
          "TransactionFlags", "DaemonCommand", "DaemonCommands", "SubsystemType", "SubmitMethod",
          "HistorySrc", "LogLevel", "JobEventType")
_WHERE.update({name: "_enums" for name in _ENUMS})

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'htcpool.htcondor2' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"htcpool.htcondor2.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
