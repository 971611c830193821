"""What a job specification, a constraint or a projection given to the bindings means.

HTCondor's ``Schedd.act``, ``edit`` and the like take a job specification: an ``int``
cluster id, a ``"cluster"`` or ``"cluster.proc"`` string, a list of those, or a
constraint (an ``ExprTree`` or its text). ``job_targets`` turns it into the
``targets`` and ``constraint`` of a schedd message. Constraints and projections are
checked here, before anything is sent, so a mistake is reported with what the caller
wrote (``HTCondorException``) rather than as a refusal from the daemon.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from htcpool.htcondor2._errors import HTCondorException

_JOB_ID = re.compile(r"\d+(\.\d+)?")
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def constraint_text(constraint: Any, what: str = "constraint") -> str:
    """The text of a constraint (``None``, ``""`` and ``True`` mean every ad), checked to parse."""
    if constraint is None:
        return ""
    from htcpool.classad import ClassAdError, ExprTree

    if isinstance(constraint, ExprTree):
        text = str(constraint)
    elif isinstance(constraint, bool):
        text = "true" if constraint else "false"
    elif isinstance(constraint, str):
        text = constraint.strip()
    else:
        raise TypeError(f"{what} must be a string or an ExprTree, not {type(constraint).__name__}")
    if not text or text.lower() == "true":
        return ""
    try:
        ExprTree(text)
    except ClassAdError as e:
        raise HTCondorException(f"Invalid {what} {text!r}: {e}") from None
    return text


def projection_names(projection: Iterable[str] | None) -> tuple[str, ...]:
    """Attribute names of a projection, each checked to be one."""
    if projection is None:
        return ()
    if isinstance(projection, str):
        raise TypeError("projection must be a list of attribute names, not a string")
    names = []
    for name in projection:
        if not isinstance(name, str):
            raise TypeError(f"projection entries must be strings, not {type(name).__name__}")
        if not _ATTRIBUTE.fullmatch(name):
            raise HTCondorException(f"Invalid projection: {name!r} is not an attribute name")
        names.append(name)
    return tuple(names)


def job_targets(job_spec: Any) -> tuple[tuple[str, ...], str]:
    """(job ids, constraint) named by an htcondor2 job specification."""
    if isinstance(job_spec, bool):
        raise TypeError("job_spec must be a job id, a list of job ids or a constraint")
    if isinstance(job_spec, int):
        return (str(job_spec),), ""
    if isinstance(job_spec, list | tuple):
        ids = []
        for item in job_spec:
            text = str(item).strip()
            if not _JOB_ID.fullmatch(text):
                raise HTCondorException(f"Invalid job id {text!r} (expected cluster or cluster.proc)")
            ids.append(text)
        if not ids:
            raise HTCondorException("the job id list is empty")
        return tuple(ids), ""
    if isinstance(job_spec, str) and _JOB_ID.fullmatch(job_spec.strip()):
        return (job_spec.strip(),), ""
    text = constraint_text(job_spec, "job constraint")
    return (), text or "true"


def project(ads: Iterable[Any], names: tuple[str, ...]) -> list[Any]:
    """Copies of ``ads`` with only ``names`` (all of each ad when ``names`` is empty)."""
    if not names:
        return list(ads)
    from htcpool.classad import ClassAd

    out = []
    for ad in ads:
        out.append(ClassAd({name: ad.lookup(name) for name in names if name in ad}))
    return out
