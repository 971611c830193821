"""The messages of the job action tools (condor_hold, condor_release, condor_rm,
condor_vacate_job, condor_suspend, condor_continue), condor_prio and condor_submit.

Action tools take job ids (``2.1``), clusters (``2``), users (``alice``),
``-constraint EXPR`` and ``-all``. Job ids are acted on one by one, and each
gets a line from ``format_job_result``: ``Job 2.1 held``, ``Job 2.1 not
found``, ``Job 2.1 not held to be released`` … Clusters, users and the
constraint are turned into one constraint (``selection_constraint``), acted
on at once, and reported by one line from ``format_selection_result``:

    All jobs in cluster 3 have been marked for removal
    All jobs of user "alice" have been held
    All jobs matching constraint (ClusterId == 2 || ClusterId == 3) have been released
    All jobs have been vacated                      (-all)
    Couldn't find/hold all jobs in cluster 7        (nothing acted on)

The constraint is built as HTCondor builds it: clusters and users joined by
``||`` in command-line order (``ClusterId == 2``, ``Owner == "alice"``); a
``-constraint`` and that list joined as ``(A) && (B)``. The wording names the
cluster or the user only when the selection is exactly one of them.

condor_prio prints nothing when it succeeds; its errors are in
``PRIO_NO_PRIORITY`` and ``prio_usage``. condor_submit's report is
``format_submit_result``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# action name -> (present-tense verb, past participle)
ACTIONS: dict[str, tuple[str, str]] = {
    "hold": ("hold", "held"),
    "release": ("release", "released"),
    "remove": ("remove", "marked for removal"),
    "remove-forced": ("remove", "removed locally (remote state unknown)"),
    "vacate": ("vacate", "vacated"),
    "vacate-fast": ("fast-vacate", "fast-vacated"),
    "suspend": ("suspend", "suspended"),
    "continue": ("continue", "continued"),
}

# what "Permission denied to ..." says for each action
_DENIED_VERBS = {"remove-forced": "force removal of"}

# per-job outcomes, as the schedd reports them
RESULTS = ("success", "error", "not-found", "permission-denied", "bad-status", "already-done")

_BAD_STATUS = {
    "release": "not held to be released",
    "remove-forced": "not in `X' state to be forcibly removed",
    "vacate": "not running to be vacated",
    "vacate-fast": "not running to be fast-vacated",
    "suspend": "not running to be suspended",
    "continue": "not running to be continued",
}
_ALREADY_DONE = {
    "hold": "already held",
    "remove": "already marked for removal",
    "suspend": "already suspended",
    "continue": "already running",
    "remove-forced": "already marked for forced removal",
}


def _verbs(action: str) -> tuple[str, str]:
    try:
        return ACTIONS[action]
    except KeyError:
        raise ValueError(f"unknown job action {action!r}") from None


def format_job_result(action: str, cluster: int, proc: int, result: str = "success") -> str:
    """The line for one job id: ``Job 2.1 held`` or why it was not acted on (no newline)."""
    present, past = _verbs(action)
    job = f"{cluster}.{proc}"
    if result == "success":
        return f"Job {job} {past}"
    if result == "not-found":
        return f"Job {job} not found"
    if result == "permission-denied":
        return f"Permission denied to {_DENIED_VERBS.get(action, present)} job {job}"
    if result == "bad-status" and action in _BAD_STATUS:
        return f"Job {job} {_BAD_STATUS[action]}"
    if result == "already-done" and action in _ALREADY_DONE:
        return f"Job {job} {_ALREADY_DONE[action]}"
    if result == "error":
        return f"No result found for job {job}"
    if result in RESULTS:
        return f"Invalid result for job {job}"
    raise ValueError(f"unknown job action result {result!r}")


@dataclass(frozen=True, slots=True)
class Selection:
    """What a set of cluster/user arguments and options selects, and how to say it."""

    constraint: str
    description: str  # " in cluster 3", " of user \"alice\"", "", " matching constraint (...)"


def selection(
    targets: Sequence[int | str] = (), constraint: str | None = None, all_jobs: bool = False
) -> Selection | None:
    """The constraint and wording for clusters/users ``targets`` (in command-line order),
    ``-constraint`` and ``-all``; None when nothing is selected."""
    if all_jobs:
        return Selection("ClusterId >= 0", "")
    parts = [f"ClusterId == {t}" if isinstance(t, int) else f'Owner == "{t}"' for t in targets]
    listed = " || ".join(parts)
    if constraint is not None and listed:
        text = f"({constraint}) && ({listed})"
    else:
        text = constraint if constraint is not None else listed
    if not text:
        return None
    if constraint is None and len(targets) == 1:
        target = targets[0]
        if isinstance(target, int):
            return Selection(text, f" in cluster {target}")
        return Selection(text, f' of user "{target}"')
    return Selection(text, f" matching constraint ({text})")


def selection_constraint(
    targets: Sequence[int | str] = (), constraint: str | None = None, all_jobs: bool = False
) -> str | None:
    """The constraint an action tool sends for these arguments (None when there is none)."""
    chosen = selection(targets, constraint, all_jobs)
    return None if chosen is None else chosen.constraint


def format_selection_result(
    action: str,
    targets: Sequence[int | str] = (),
    constraint: str | None = None,
    all_jobs: bool = False,
    succeeded: bool = True,
) -> str:
    """``All jobs in cluster 3 have been marked for removal`` (or the failure line), no newline."""
    present, past = _verbs(action)
    chosen = selection(targets, constraint, all_jobs)
    if chosen is None:
        raise ValueError("no clusters, users, constraint or -all given")
    if succeeded:
        return f"All jobs{chosen.description} have been {past}"
    return f"Couldn't find/{present} all jobs{chosen.description}"


def format_action_totals(
    succeeded: int,
    failed: int,
    not_found: int,
    bad_status: int,
    already_done: int,
    permission_denied: int,
) -> str:
    """The ``-totals`` line of the action tools (no newline)."""
    return (
        f"{succeeded} Succeeded, {failed} Failed, {not_found} Not Found, {bad_status} Bad Status, "
        f"{already_done} Already Done, {permission_denied} Permission Denied"
    )


NO_JOBS_SPECIFIED = "You did not specify any jobs"

PRIO_NO_PRIORITY = "You must specify a new priority or priority adjustment."


def prio_usage(program: str = "condor_prio") -> str:
    """condor_prio's usage line (no newline)."""
    return (
        f"Usage: {program} [{{+|-}}priority ] [-p priority] [ -a ] [-n schedd_name] "
        "[ -pool pool_name ] [user | cluster | cluster.proc | -a] ..."
    )


def format_prio_error(message: str = PRIO_NO_PRIORITY, program: str = "condor_prio") -> str:
    """An error of condor_prio followed by its usage, as it prints them."""
    return f"{message}\n{prio_usage(program)}\n"


def format_submit_result(clusters: Sequence[tuple[int, int]]) -> str:
    """condor_submit's report for ``clusters``: (cluster id, number of jobs) in submit order.

    One dot per job after ``Submitting job(s)``, a line per cluster, then the
    condor_watch_q hint naming every cluster."""
    dots = "." * sum(count for _, count in clusters)
    lines = [f"Submitting job(s){dots}\n"]
    lines += [f"{count} job(s) submitted to cluster {cluster}.\n" for cluster, count in clusters]
    if clusters:
        ids = " ".join(str(cluster) for cluster, _ in clusters)
        lines.append(f"To monitor your job(s), run: condor_watch_q -clusters {ids}\n")
    return "".join(lines)
