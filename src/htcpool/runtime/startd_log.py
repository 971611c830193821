"""The startd's own log lines (StartdLog): state changes, claims, activations, evictions.

HTCondor's startd writes each of these at ``D_ALWAYS``, prefixed with the slot's name; the
wording follows its log where known:

* every transition the core made (``Startd.history``, ``transitions.change``), as
  ``slot1: Changing state and activity: Unclaimed/Idle -> Claimed/Idle`` (or ``Changing
  activity: Idle -> Busy`` when only the activity moved), with the transition's number from the
  state table (``docs/startd.md``); the history is emptied once logged, so a long-running startd
  keeps no list of them;
* a claim accepted or refused (``Request accepted.``, ``Request to claim resource refused: …``),
  an activation (``Got activate_claim request``, with the job's id and owner) and a refused one;
* an eviction: ``Evicting job`` with how (KillSig and the vacate time, or a hard kill) and the
  reason the core gave the claim (``vacate_reason``: PREEMPT, draining, condor_vacate …), and a
  hold with its reason;
* under ``D_COMMAND`` each message the startd receives; under ``D_JOB`` the job ad it starts.

Nothing here decides anything: the lines are read off the core's state and actions after it
acted (``log_actions``).
"""

from __future__ import annotations

import logging
from typing import Any

from htcpool.classad import ClassAd
from htcpool.protocol import startd as m
from htcpool.runtime.debug_levels import debug_logger
from htcpool.startd import Startd

log = logging.getLogger("htcpool.startd")


def _short(slot: str) -> str:
    """``slot1_2`` of ``slot1_2@host``, as HTCondor's startd names a slot in its log."""
    return slot.split("@", 1)[0]


def log_transitions(core: Startd) -> None:
    """Write the core's transitions since the last call, then forget them."""
    for slot, number, before, after in core.history:
        old_state, old_activity = before.split("/")
        new_state, new_activity = after.split("/")
        if old_state == new_state:
            log.info("%s: Changing activity: %s -> %s (transition %d)", _short(slot), old_activity, new_activity,
                     number)
        else:
            log.info("%s: Changing state and activity: %s -> %s (transition %d)", _short(slot), before, after,
                     number)
    core.history.clear()


def _job_id(job: ClassAd | None) -> str:
    if job is None:
        return "?"
    return f"{job.get('ClusterId', '?')}.{job.get('ProcId', '?')}"


def _claim_of(core: Startd, claim_id: str) -> Any:
    slot = core.find_claim(claim_id)
    return None if slot is None else slot.claim


def log_action(core: Startd, action: Any) -> None:
    """One line for the actions a reader of StartdLog looks for (see the module docstring)."""
    if isinstance(action, m.ClaimReply):
        if action.accepted:
            claim = _claim_of(core, action.claim_id)
            owner = claim.request.get("User", claim.request.get("Owner", "?")) if claim and claim.request else "?"
            log.info("%s: Request accepted. Remote owner is %s (schedd %s)", _short(action.slot or "?"), owner,
                     claim.schedd if claim else "?")
        else:
            log.info("%s: Request to claim resource refused: %s", _short(action.slot or "?"), action.reason)
    elif isinstance(action, m.ActivateReply) and not action.accepted:
        log.info("activate_claim refused for claim %s: %s", action.claim_id.split("#")[0], action.reason)
    elif isinstance(action, m.StartJob):
        log.info("%s: Got activate_claim request: starting job %s of %s", _short(action.slot), _job_id(action.job),
                 action.job.get("User", action.job.get("Owner", "?")))
        debug_logger("D_JOB").debug("%s: job ad:\n%s", _short(action.slot), action.job.printOld())
    elif isinstance(action, m.SoftKill | m.HardKill):
        claim = _claim_of(core, action.claim_id)
        reason = (claim.vacate_reason if claim is not None else "") or "the claim ended"
        how = (f"sending {action.kill_sig}, {action.max_vacate_time:g} s to vacate"
               if isinstance(action, m.SoftKill) else "hard kill")
        log.info("%s: Evicting job %s (%s): %s", _short(action.slot), _job_id(claim.job if claim else None), how,
                 reason)
    elif isinstance(action, m.KillStarterFamily):
        log.info("%s: Killing the starter and its job's processes (KILLING_TIMEOUT)", _short(action.slot))
    elif isinstance(action, m.HoldJob):
        log.info("%s: Putting the job on hold (code %d): %s", _short(action.slot), action.code, action.reason)


def log_command(message: Any) -> None:
    """Under ``D_COMMAND``: a message the startd received."""
    debug_logger("D_COMMAND").debug("Received %s", type(message).__name__)


__all__ = ["log_action", "log_command", "log_transitions"]
