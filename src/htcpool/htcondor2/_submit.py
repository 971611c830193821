"""``Submit``: a submit description as a mutable mapping, as HTCondor's ``htcondor2.Submit``.

A ``Submit`` holds the description's commands (``name -> value``, both text;
names case-insensitive, keeping the case they were first given in) and the
arguments of its queue statement. Built from a dictionary, each item is one
command; built from text, the text is read as condor_submit reads it
(``htcpool.submit``'s reader: continuations, ``@=`` values, ``+=``, ``if`` blocks,
``include``) up to its first ``queue`` statement, whose arguments become the
queue arguments. ``+Attr`` is kept as ``MY.Attr``, as HTCondor does. The lines of a ``queue … from (``
list are kept with the queue arguments but, as in HTCondor's bindings, ``str()`` and
``getQArgs()`` show only the statement's first line.

``str()`` prints the commands and the queue statement; ``expand(name)`` expands a
command's macros with the submit language's expander, as for the first job of
cluster 1 (``$(Cluster)`` 1, ``$(Process)`` 0, loop variables empty);
``itemdata()`` lists the items of the queue statement as dictionaries from the
loop variable names to values (None when it has no item list). See the
HTCondor manual, "Python bindings, version 2 API reference", class Submit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from htcpool.htcondor2._errors import HTCondorException

#: the per-job layer while expanding outside a submission (the first job of cluster 1)
_FIRST_JOB = {"cluster": "1", "clusterid": "1", "process": "0", "procid": "0", "step": "0",
              "row": "0", "itemindex": "0", "item": "", "node": "", "jobid": ""}


def _command_name(key: str) -> str:
    return "MY." + key[1:] if key.startswith("+") else key


class Submit(MutableMapping[str, str]):
    """A job submit description (the HTCondor manual's ``htcondor2.Submit``)."""

    def __init__(self, input: dict[str, Any] | str | None = None, queue: str | None = None,
                 **kwargs: Any) -> None:
        self._commands: dict[str, tuple[str, str]] = {}
        self._qargs = ""
        self._items = ""  # the lines of a ``from (`` list after the queue line, up to ``)``
        if isinstance(input, dict):
            for key, value in input.items():
                if not isinstance(key, str):
                    raise TypeError("key must be a string")
                if key.casefold() == "queue":
                    raise ValueError("the queue statement can not be specified in a dictionary")
                self[key] = _as_text(value)
        elif isinstance(input, str):
            self._read(input)
        elif input is not None:
            raise TypeError("input must be a dictionary mapping string to strings, a string, or None")
        for key, value in kwargs.items():
            self[key] = value
        if queue is not None:
            if not isinstance(queue, str):
                raise TypeError("queue must be a string")
            self.setQArgs(queue)

    # -- reading text
    def _read(self, text: str) -> None:
        from htcpool.config.conditions import ConditionError, IfStack
        from htcpool.submit.errors import SubmitError
        from htcpool.submit.session import classad_condition
        from htcpool.submit.source import Assign, Conditional, Include, Queue, read_statements

        ifs = IfStack(lambda condition: classad_condition(condition))
        try:
            pending = [read_statements(text)]
            while pending:
                statements = pending.pop()
                while statements:
                    st = statements.pop(0)
                    if isinstance(st, Conditional):
                        ifs.handle(f"{st.keyword} {st.condition}".rstrip(), self.expand_text,
                                   self._raw)
                    elif not ifs.enabled():
                        continue
                    elif isinstance(st, Queue):
                        self.setQArgs(st.args)
                        return
                    elif isinstance(st, Assign):
                        old = self._raw(st.key) if st.append else None
                        self[_command_name(st.key)] = f"{old} {st.value}" if old else st.value
                    elif isinstance(st, Include):
                        path = Path(self.expand_text(st.path)).expanduser()
                        try:
                            included = read_statements(path.read_text(), str(path))
                        except OSError:
                            if st.if_exists:
                                continue
                            raise ValueError(f"cannot open include file {path}") from None
                        pending.append(statements)
                        statements = included
        except (SubmitError, ConditionError) as e:
            raise ValueError(f"the submit description cannot be read: {e}") from None

    def _raw(self, name: str) -> str | None:
        found = self._commands.get(_command_name(name).lower())
        return None if found is None else found[1]

    # -- the mapping
    def __getitem__(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("key must be a string")
        found = self._commands.get(key.lower())
        if found is None:
            raise KeyError(key)
        return found[1]

    def __setitem__(self, key: str, value: str) -> None:
        if not isinstance(key, str):
            raise TypeError("key must be a string")
        if not isinstance(value, str):
            raise TypeError("value must be a string")
        old = self._commands.get(key.lower())
        self._commands[key.lower()] = (old[0] if old else key, value.strip())

    def __delitem__(self, key: str) -> None:
        raise NotImplementedError("Submit object keys can not be removed, but the empty string is "
                                  "defined to have no effect.")

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self._commands.values()])

    def __len__(self) -> int:
        return len(self._commands)

    def __str__(self) -> str:
        lines = [f"{name} = {value}\n" for name, value in self._commands.values()]
        lines.append("queue\n" if not self._qargs else f"queue {self._qargs}\n")
        return "".join(lines)

    def __repr__(self) -> str:
        return f"Submit({self})"

    # -- macros and the queue statement
    def _hash(self, user: str = "", cwd: str | None = None) -> Any:
        from htcpool.submit.hash import SubmitHash
        from htcpool.submit.world import SubmitHost

        host = SubmitHost(user=user, cwd=cwd or os.getcwd(), environ=dict(os.environ))
        table = SubmitHash(host)
        table.builtin["owner"] = user
        for name, value in self._commands.values():
            table.set(name, value)
        table.set_job(dict(_FIRST_JOB))
        return table

    def expand_text(self, text: str) -> str:
        """``text`` with this description's macros expanded."""
        from htcpool.submit.errors import SubmitError

        try:
            return str(self._hash().expand(text))
        except SubmitError as e:
            raise HTCondorException(f"cannot expand {text!r}: {e}") from None

    def expand(self, attr: str) -> str:
        """The value of the command ``attr`` with every macro expanded."""
        if not isinstance(attr, str):
            raise TypeError("attr must be a string")
        return self.expand_text(self[attr])

    def getQArgs(self) -> str:  # noqa: N802 - htcondor2's name
        return self._qargs

    def setQArgs(self, args: str) -> None:  # noqa: N802 - htcondor2's name
        """Replace the queue statement's arguments (``args`` may start with ``queue``)."""
        if not isinstance(args, str):
            raise TypeError("args must be a string")
        if args.casefold().startswith("queue "):
            args = args[6:]
        elif args.casefold() == "queue":
            args = ""
        head, newline, items = args.strip().partition("\n")
        self._qargs, self._items = head.strip(), items if newline else ""

    def full_queue_arguments(self) -> str:
        """The queue arguments with the lines of their item list (``str()`` shows the first line)."""
        return self._qargs + ("\n" + self._items if self._items else "")

    def itemdata(self, qargs: str | None = None) -> Iterator[dict[str, str]] | None:
        """The items of the queue statement (``qargs`` instead, when given), or None without any."""
        if qargs is not None:
            other = Submit()
            other._commands = dict(self._commands)
            other.setQArgs(qargs)
            return other.itemdata()
        plan = self.queue_plan()
        if plan.rows is None or not plan.rows:
            return None
        return iter([dict(zip(plan.variables, row, strict=False)) for row in plan.rows])

    def queue_plan(self) -> Any:
        """The queue statement as ``htcpool.submit`` reads it (count, variables, rows)."""
        from htcpool.cli.submit import DiskFileSystem
        from htcpool.submit.errors import SubmitError
        from htcpool.submit.queue import parse_queue

        try:
            return parse_queue(self.expand_text(self.full_queue_arguments()), DiskFileSystem(),
                               os.getcwd())
        except SubmitError as e:
            raise ValueError(f"invalid queue statement 'queue {self._qargs}': {e}") from None

    def jobs(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Submit.jobs() is not implemented by htcondor2 either; "
                                  "submit with Schedd.submit()")

    def procs(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Submit.procs() is not implemented by htcondor2 either; "
                                  "submit with Schedd.submit()")


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float | Path):
        return str(value)
    from htcpool.classad import ClassAd

    if isinstance(value, ClassAd):
        return repr(value)
    raise TypeError("value must be a string")
