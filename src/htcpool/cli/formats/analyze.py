"""``condor_q -better-analyze JOB``: why a job does or does not match the pool's slots.

The report, in HTCondor 25's order and wording:

1. ``-- Schedd: NAME : <ADDRESS?...`` (no time stamp in this mode);
2. the job's Requirements, wrapped at the width (``clauses.wrap_expression``),
   then every numbered clause (``clauses.split_clauses``);
3. ``Job C.PPP defines the following attributes:``: the job attributes the
   Requirements use, directly or through other job attributes, as written in
   the job (RequestDisk and RequestMemory numbers get ``(kb)`` and ``(mb)``);
4. when all slots are on one machine, ``NAME has the following attributes:``
   for each slot analysed, with the ``TARGET.`` attributes the Requirements use
   (Disk ``(kb)``, Memory ``(mb)``);
5. the table of the clauses left after pruning with the number of slots each
   matches (``clauses.count_matches``);
6. the summary: how many slots the job's Requirements reject, how many reject
   the job through their own Requirements (START and WithinResourceLimits),
   how many are running the user's jobs or other users' jobs, and how many
   would run it now; a warning when no slot matches.

Every evaluation runs at the time the caller passes (``now``: the tool's wall
clock), so Requirements and START expressions that read ``CurrentTime`` or
``time()`` see the time of the query.

Job ids print as ``%d.%03d`` in sentences and ``%03d.%03d`` before the summary.
Like HTCondor, dynamic slots are left out of the counts (their partitionable
slot stands for them) and, when there is more than one slot, out of the
attribute listing and the clause table. A slot's name is its ``Name``; its
machine is ``Machine`` (the name after ``@`` when there is none).

What is not done: user priorities (the summary always says "ignoring user
priority"), HTCondor's drain simulation of a partitionable slot that is too
full for the job, and the "last match" history lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.refs import Scope
from htcpool.classad.refs import references as refs_of
from htcpool.classad.unparse import unparse, unparse_old
from htcpool.cli.formats.clauses import (
    count_matches,
    find_constants,
    numbered_lines,
    propagate_constants,
    reduced_rows,
    split_clauses,
    wrap_expression,
)
from htcpool.cli.formats.fields import (
    COMPLETED,
    HELD,
    REMOVED,
    RUNNING,
    SUSPENDED,
    TRANSFERRING_OUTPUT,
    job_id,
    lookup_bool,
    lookup_int,
    lookup_str,
)
from htcpool.cli.formats.fields import summarize_address as _summarize

UNITS = {"requestdisk": "kb", "requestmemory": "mb", "disk": "kb", "memory": "mb"}
_NOT_LISTED = frozenset({"requirements", "start"})

TABLE_HEADINGS = "        Slots\nStep   Matched  Condition\n----- --------- ---------\n"


# ---------------------------------------------------------------- references


def references(node: Node, job: ClassAd) -> tuple[dict[str, str], dict[str, str]]:
    """The job attributes and the slot attributes ``node`` uses (lower-case name → spelling).

    ``TARGET.x`` is a slot attribute; ``MY.x`` and names the job defines are job
    attributes, whose own expressions are followed; other bare names are looked
    for in the slot. A selection ``base.x`` counts for what its base uses. Built on
    ``htcpool.classad.refs.references``; the first spelling met wins."""
    mine: dict[str, str] = {}
    theirs: dict[str, str] = {}
    pending = [iter(refs_of(node))]
    while pending:
        ref = next(pending[-1], None)
        if ref is None:
            pending.pop()
        elif ref.scope is Scope.TARGET:
            theirs.setdefault(ref.key, ref.name)
        elif ref.scope is Scope.SELECTED:
            assert ref.base is not None
            pending.append(iter(refs_of(ref.base)))
        elif ref.name in job:
            if ref.key not in mine:
                mine[ref.key] = ref.name
                pending.append(iter(refs_of(job.lookup(ref.name).node)))
        elif ref.scope is Scope.MY:
            mine.setdefault(ref.key, ref.name)
        else:
            theirs.setdefault(ref.key, ref.name)
    return mine, theirs


def _with_unit(name: str, text: str, numeric: bool) -> str:
    unit = UNITS.get(name.lower())
    return f"{text} ({unit})" if unit and numeric else text


def _job_attribute_lines(job: ClassAd, mine: dict[str, str]) -> list[str]:
    lines = []
    for key in sorted(mine):
        if key in _NOT_LISTED or mine[key] not in job:
            continue
        node = job.lookup(mine[key]).node
        numeric = isinstance(node, Literal) and type(node.value) in (int, float)
        lines.append(f"    {mine[key]} = {_with_unit(mine[key], unparse_old(node), numeric)}\n")
    return lines


def _slot_attribute_lines(slot: ClassAd, job: ClassAd, theirs: dict[str, str], context: EvalContext) -> list[str]:
    lines = []
    for key in sorted(theirs):
        name = theirs[key]
        if name not in slot:
            continue
        try:
            value = ExprTree(name).evaluate(slot, job, context)
        except ClassAdError:
            continue
        numeric = type(value) in (int, float)
        lines.append(f"    TARGET.{name} = {_with_unit(name, unparse_old(value), numeric)}\n")
    return lines


# ---------------------------------------------------------------- slots and counts


def _is_dynamic(slot: ClassAd) -> bool:
    return lookup_bool(slot, "DynamicSlot") is True


def machine_of(slot: ClassAd) -> str:
    machine = lookup_str(slot, "Machine")
    if machine is not None:
        return machine
    return (lookup_str(slot, "Name") or "").rsplit("@", 1)[-1]


def _job_status_note(job: ClassAd) -> str:
    status = lookup_int(job, "JobStatus")
    if status in (RUNNING, TRANSFERRING_OUTPUT, SUSPENDED):
        return "Job is running."
    if status == HELD:
        reason = lookup_str(job, "HoldReason")
        return "Job is held." + (f"\n\nHold reason: {reason}" if reason else "")
    if status == REMOVED:
        return "Job is removed."
    if status == COMPLETED:
        return "Job is completed."
    return ""


def summary_lines(job: ClassAd, slots: Sequence[ClassAd], context: EvalContext) -> list[str]:
    """The run-analysis summary and its warning (each line ends in a newline)."""
    counted = [s for s in slots if not _is_dynamic(s)]
    machines = len({machine_of(s) for s in slots})
    rejected_by_job = rejected_by_slot = available = running = running_yours = 0
    user = lookup_str(job, "User")
    for slot in counted:
        if not slot.matches(job, context):
            rejected_by_job += 1
            continue
        if not job.matches(slot, context):
            rejected_by_slot += 1
            continue
        remote = lookup_str(slot, "RemoteUser")
        if remote is None:
            available += 1
            continue
        running += 1
        if remote == user:
            running_yours += 1
    cluster, proc = job_id(job)
    lines = [
        "\n%03d.%03d:  Run analysis summary ignoring user priority.  Of %d slots on %d machines,\n"
        % (cluster, proc, len(counted), machines),
        "  %5d slots are rejected by your job's requirements\n" % rejected_by_job,
        "  %5d slots reject your job because of their own requirements\n" % rejected_by_slot,
    ]
    if running_yours:
        lines.append("  %5d slots match and are already running your jobs\n" % running_yours)
    if running - running_yours:
        lines.append("  %5d slots match but are serving other users\n" % (running - running_yours))
    lines.append("  %5d slots match and are willing to run your job\n" % available)
    matched_by_job = len(counted) - rejected_by_job
    if matched_by_job == 0:
        lines.append("\nWARNING:  Be advised:\n   No machines matched the job's constraints\n")
    elif available + running == 0:
        lines.append(
            "\nWARNING:  Be advised:\n"
            "   Job did not match any machines's constraints\n"
            "   To see why, pick a machine that you think should match and add\n"
            "     -reverse -machine <name>\n"
            "   to your query.\n"
        )
    return lines


# ---------------------------------------------------------------- the report


def format_better_analyze(
    job: ClassAd,
    slots: Sequence[ClassAd],
    *,
    schedd_name: str,
    schedd_address: str,
    now: float,
    width: int = 80,
) -> str:
    """condor_q's ``-better-analyze`` report for one job against ``slots``, at time ``now``."""
    context = EvalContext(clock=fixed_clock(now))
    cluster, proc = job_id(job)
    jid = "%d.%03d" % (cluster, proc)
    out = ["\n\n-- Schedd: %s : %s\n" % (schedd_name, _summarize(schedd_address))]
    listed = [s for s in slots if not (len(slots) > 1 and _is_dynamic(s))]
    requirements = job.lookup("Requirements").node if "Requirements" in job else None
    if requirements is not None:
        out.append(f"The Requirements expression for job {jid} is\n\n    ")
        out.append(wrap_expression(unparse(requirements), 4, width) + "\n\n")
        clauses = split_clauses(requirements)
        out.extend(line + "\n" for line in numbered_lines(clauses))
        out.append("\n")
        mine, theirs = references(requirements, job)
        out.append(f"Job {jid} defines the following attributes:\n\n")
        out.extend(_job_attribute_lines(job, mine))
        if len({machine_of(s) for s in slots}) == 1:
            for slot in listed:
                attrs = _slot_attribute_lines(slot, job, theirs, context)
                if attrs:
                    name = lookup_str(slot, "Name") or "Target"
                    out.append(f"\n{name} has the following attributes:\n\n")
                    out.extend(attrs)
        out.append("\n")
        find_constants(clauses, job, [references(c.node, job)[1] for c in clauses], context)
        propagate_constants(clauses)
        count_matches(clauses, job, listed, context)
        out.append(f"The Requirements expression for job {jid} reduces to these conditions:\n\n")
        out.append(TABLE_HEADINGS)
        out.extend(row + "\n" for row in reduced_rows(clauses))
        out.append("\n")
    note = _job_status_note(job)
    if note:
        out.append("\n%03d.%03d:  %s\n\n" % (cluster, proc, note))
    out.extend(summary_lines(job, slots, context))
    out.append("\n")
    return "".join(out)
