"""Where and how nicely a job runs: ``EXECUTE``, ``SLOT<N>_EXECUTE`` and ``JOB_RENICE_INCREMENT``.

* ``startd_execute``: the startd's execute directory, ``EXECUTE`` when it names an absolute
  path, else the pool's (a second startd's comes from ``local_names``);
* ``slot_execute_dirs``: each ``SLOT<N>_EXECUTE`` that is set, made when the startd starts; the
  scratch directories of slot N's jobs (and of its dynamic slots ``slotN_M``) go there. One that
  is not an absolute path or cannot be made is a warning, and that slot's jobs use ``EXECUTE``;
* ``parse_renice`` and ``renice_increment``: ``JOB_RENICE_INCREMENT`` is a ClassAd expression
  evaluated against each job's ad; the job runs that much nicer (0 to 19). An expression that
  does not parse is one warning when the startd starts, a value that is no number one warning
  for the job, and the job runs without renice.

The HTCondor manual's "Configuration File Entries for the condor_startd" and "condor_starter"
describe the knobs.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from htcpool.classad import ClassAdError, ExprTree, as_number
from htcpool.config import Config
from htcpool.protocol import startd as m
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import execute_dir

log = logging.getLogger("htcpool.startd")

_SLOT_NUMBER = re.compile(r"slot(\d+)(?:_\d+)?(?:@|$)")


def slot_number(slot: str) -> int | None:
    """The N of ``slotN``, ``slotN_M`` or ``slotN_M@host``; None for another name."""
    found = _SLOT_NUMBER.match(slot)
    return int(found.group(1)) if found else None


def startd_execute(layout: PoolLayout, config: Config, local_name: str | None) -> Path:
    """The startd's execute directory (see the module docstring)."""
    configured = (config.get_str("EXECUTE") or "") if local_name is None else ""
    return Path(configured) if os.path.isabs(configured) else execute_dir(layout, config, local_name)


def slot_execute_dirs(lookup: Callable[[str], str | None], numbers: Iterable[int]) -> dict[int, Path]:
    """``SLOT<N>_EXECUTE`` for each slot number, the directories made now (see the module docstring)."""
    out: dict[int, Path] = {}
    for n in sorted(set(numbers)):
        text = (lookup(f"SLOT{n}_EXECUTE") or "").strip()
        if not text:
            continue
        path = Path(text)
        if not path.is_absolute():
            log.warning("SLOT%d_EXECUTE = %s is not an absolute path; slot%d's jobs use EXECUTE", n, text, n)
            continue
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            log.warning("SLOT%d_EXECUTE = %s cannot be made (%s); slot%d's jobs use EXECUTE", n, text, e.strerror, n)
            continue
        out[n] = path
    return out


def parse_renice(text: str | None) -> ExprTree | None:
    """JOB_RENICE_INCREMENT as an expression; None when unset or not an expression (logged)."""
    if not text or not text.strip():
        return None
    try:
        return ExprTree(text)
    except ClassAdError as e:
        log.warning("JOB_RENICE_INCREMENT = %s is not a ClassAd expression (%s); jobs run without renice", text, e)
        return None


def renice_increment(expr: ExprTree | None, action: m.StartJob) -> int:
    """JOB_RENICE_INCREMENT for this job (evaluated against its ad), 0 to 19; a value that is no
    number is a warning and the job runs at the starter's priority."""
    if expr is None:
        return 0
    value = as_number(expr.evaluate(action.job))
    if value is None or isinstance(value, bool):
        log.warning("%s: JOB_RENICE_INCREMENT = %s does not evaluate to a number for this job; "
                    "it runs without renice", action.slot, expr)
        return 0
    return max(0, min(19, int(value)))


__all__ = ["parse_renice", "renice_increment", "slot_execute_dirs", "slot_number", "startd_execute"]
