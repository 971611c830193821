"""HTCondor's command names: ``condor_q`` runs ``htcpool q``, ``condor_submit`` runs ``htcpool
submit`` and so on, so scripts and tools written for HTCondor find them on ``PATH``.

Each name is an entry point in pyproject.toml's ``[project.scripts]`` pointing at one of the
functions below. A function only looks its subcommand up in ``htcpool.cli.COMMANDS`` and
imports that one module, so starting ``condor_q`` costs what ``htcpool q`` costs and nothing
more. ``TOOLS`` is the whole table (condor name -> htcpool subcommand); usage and error
messages name the tool as the user typed it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: HTCondor's tool name -> the htcpool subcommand that implements it
TOOLS: dict[str, str] = {
    "condor_submit": "submit",
    "condor_q": "q",
    "condor_status": "status",
    "condor_rm": "rm",
    "condor_hold": "hold",
    "condor_release": "release",
    "condor_history": "history",
    "condor_userprio": "userprio",
    "condor_prio": "prio",
    "condor_qedit": "qedit",
    "condor_drain": "drain",
    "condor_vacate": "vacate",
    "condor_vacate_job": "vacate_job",
    "condor_reschedule": "reschedule",
    "condor_config_val": "config_val",
    "condor_on": "on",
    "condor_off": "off",
    "condor_restart": "restart",
    "condor_reconfig": "reconfig",
    "condor_who": "who",
    "condor_version": "version",
    "condor_wait": "wait",
    "condor_watch_q": "watch_q",
    "condor_tail": "tail",
    "classad_eval": "classad_eval",
    "condor_master": "master",
    "condor_suspend": "suspend",
    "condor_continue": "continue",
    "condor_token_create": "token_create",
    "condor_token_list": "token_list",
    "condor_ping": "ping",
}


def run(tool: str, argv: list[str] | None = None) -> int:
    """Run HTCondor's ``tool`` with ``argv`` (default: this process's arguments)."""
    import htcpool.cli

    htcpool.cli.INVOKED_AS = tool
    args = sys.argv[1:] if argv is None else argv
    return htcpool.cli.main([TOOLS[tool], *args])


def _entry(tool: str) -> Callable[[], int]:
    def entry() -> int:
        return run(tool)

    entry.__name__ = tool
    entry.__doc__ = f"{tool}: ``htcpool {TOOLS[tool]}``."
    return entry


condor_submit = _entry("condor_submit")
condor_q = _entry("condor_q")
condor_status = _entry("condor_status")
condor_rm = _entry("condor_rm")
condor_hold = _entry("condor_hold")
condor_release = _entry("condor_release")
condor_history = _entry("condor_history")
condor_userprio = _entry("condor_userprio")
condor_prio = _entry("condor_prio")
condor_qedit = _entry("condor_qedit")
condor_drain = _entry("condor_drain")
condor_vacate = _entry("condor_vacate")
condor_vacate_job = _entry("condor_vacate_job")
condor_reschedule = _entry("condor_reschedule")
condor_config_val = _entry("condor_config_val")
condor_on = _entry("condor_on")
condor_off = _entry("condor_off")
condor_restart = _entry("condor_restart")
condor_reconfig = _entry("condor_reconfig")
condor_who = _entry("condor_who")
condor_version = _entry("condor_version")
condor_wait = _entry("condor_wait")
condor_watch_q = _entry("condor_watch_q")
condor_tail = _entry("condor_tail")
classad_eval = _entry("classad_eval")
condor_master = _entry("condor_master")
condor_suspend = _entry("condor_suspend")
condor_continue = _entry("condor_continue")
condor_token_create = _entry("condor_token_create")
condor_token_list = _entry("condor_token_list")
condor_ping = _entry("condor_ping")
