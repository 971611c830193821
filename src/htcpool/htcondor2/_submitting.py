"""Turning a ``Submit`` and ``Schedd.submit``'s arguments into job ads, as condor_submit does.

The bindings' rules for the queue statement (HTCondor manual, ``Schedd.submit``):
``queue`` replaces the description's queue arguments; ``itemdata`` (strings, or
dictionaries from variable names to values) becomes a ``queue … from (…)`` list,
dictionary values separated by the unit separator ``\\x1F`` so that they may hold
spaces and commas; ``itemdata=None`` means a bare ``queue``; ``count``, when not
0, replaces the statement's count. The resulting description is run by the
submit language (``htcpool.submit.submit_description``) on this machine, as
condor_submit does (``htcpool.cli.submit``: the pool's submit knobs and machine
facts, this process's user, working directory, environment and clock), for the cluster id
the schedd reserved; any error in it becomes an ``HTCondorException`` with
condor_submit's message.
"""

from __future__ import annotations

import re
from typing import Any

from htcpool.htcondor2._errors import HTCondorException
from htcpool.htcondor2._submit import Submit

SEPARATOR = "\x1f"
_COUNT = re.compile(r"^\s*(\d+)(?=\s|$)")


def queue_arguments(description: Submit, count: int, itemdata: Any, queue: str | None) -> str:
    """The arguments of the queue statement the submission runs."""
    if queue is not None:
        args = queue.strip()
        return args[6:] if args.casefold().startswith("queue ") else args
    if itemdata is ...:
        return _with_count(description.full_queue_arguments(), count)
    if itemdata is None:
        return str(count) if count else ""
    items = iter(itemdata)
    try:
        first = next(items)
    except StopIteration:
        return "0"
    rows = [first, *items]
    if isinstance(first, str):
        head = "item"
        names: list[str] = []
    elif isinstance(first, dict):
        names = list(first)
        if any(not isinstance(k, str) for k in names):
            raise TypeError("itemdata dictionaries must have string keys")
        head = ",".join(names)
    else:
        raise TypeError("itemdata must be a list of strings or dictionaries")
    lines = [_row(row, names) for row in rows]
    prefix = f"{count} " if count else ""
    return prefix + head + " from (\n" + "\n".join(lines) + "\n)"


def _row(row: Any, names: list[str]) -> str:
    if isinstance(row, str):
        if "\n" in row:
            raise ValueError("itemdata strings must not contain newlines")
        return row
    if not isinstance(row, dict):
        raise TypeError("itemdata must be a list of strings or dictionaries")
    values = [str(row.get(name, "")) for name in names]
    if any("\n" in v for v in values):
        raise ValueError("itemdata values must not contain newlines")
    return SEPARATOR.join(values)


def _with_count(args: str, count: int) -> str:
    if not count:
        return args
    if _COUNT.match(args):
        return _COUNT.sub(str(count), args, count=1)
    return f"{count} {args}".strip()


def build_jobs(description: Submit, cluster: int, owner: str, *, count: int = 0,
               itemdata: Any = ..., queue: str | None = None) -> list[Any]:
    """The job ads of the submission, numbered in ``cluster`` from proc 0."""
    import dataclasses

    from htcpool.cli import submit as condor_submit
    from htcpool.gcpause import paused_gc
    from htcpool.submit import SubmitError, submit_description

    if not isinstance(count, int) or count < 0:
        raise ValueError("count must be a non-negative integer")
    commands = "".join(f"{name} = {value}\n" for name, value in description.items())
    args = queue_arguments(description, count, itemdata, queue)
    try:
        settings, facts = condor_submit.pool_settings()
    except condor_submit.SubmitConfigError as e:
        raise HTCondorException(f"Submit failed: {e}") from None
    host = dataclasses.replace(condor_submit.local_host(facts), user=owner)
    try:
        with paused_gc():  # thousands of job ads and no cycles (htcpool.gcpause)
            result = submit_description(commands, file="", host=host, fs=condor_submit.DiskFileSystem(),
                                        settings=settings, cluster_id=cluster, queue_args=args)
    except SubmitError as e:
        raise HTCondorException(f"Submit failed: {e}") from None
    return list(result.jobs)
