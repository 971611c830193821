"""Job environment and argument strings: ``envV1ToV2``, ``mergeEnvironment``, ``argsToList``, ``listToArgs``.

Two syntaxes, as in HTCondor's ``Env`` and ``ArgList`` classes:

* V1: environment entries ``NAME=value`` separated by ``;`` (or by the punctuation
  character the string starts with) and newlines; arguments separated
  by white space, with no quoting at all;
* V2: items separated by white space; a single quote starts and ends a quoted
  section in which white space is literal and ``''`` stands for one quote.

Environments are kept sorted by name (HTCondor keeps them in a map), a later
definition of a name replacing an earlier one. Writing V2, each run of white space
and single quotes in an item is wrapped in quotes (``x y`` becomes ``x' 'y``) and an
empty item is ``''``. Anything that does not parse is ERROR.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.nodes import EvalState, Literal, Node, list_values
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

_WHITE = " \t\n\r"
_SPECIAL = _WHITE + "'"


def split_v2(text: str) -> list[str] | None:
    """Items of a V2 string, or None when a quote is left open."""
    items: list[str] = []
    current: list[str] = []
    started = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _WHITE:
            if started:
                items.append("".join(current))
                current, started = [], False
            i += 1
        elif c == "'":
            started = True
            i += 1
            while True:
                if i >= n:
                    return None
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        current.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                current.append(text[i])
                i += 1
        else:
            started = True
            current.append(c)
            i += 1
    if started:
        items.append("".join(current))
    return items


def quote_v2(item: str) -> str:
    """One word in the V2 arguments/environment syntax: runs of white space and single quotes
    wrapped in single quotes (a quote doubled), the empty word as ``''``. condor_submit writes
    Arguments and Environment with it too."""
    if not item:
        return "''"
    out: list[str] = []
    run: list[str] = []
    for c in item + "\0":
        if c in _SPECIAL and c != "\0":
            run.append("''" if c == "'" else c)
            continue
        if run:
            out.append("'" + "".join(run) + "'")
            run = []
        if c != "\0":
            out.append(c)
    return "".join(out)


def _entry(item: str, env: dict[str, str]) -> bool:
    name, eq, value = item.partition("=")
    if not eq or not name:
        return False
    env[name] = value
    return True


def _write_env(env: dict[str, str]) -> str:
    return " ".join(quote_v2(f"{k}={env[k]}") for k in sorted(env))


@builtin("envV1ToV2", 1)
def _env_v1_to_v2(s: EvalState, v: Any) -> Any:
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is not str:
        return ERROR
    env: dict[str, str] = {}
    for item in v1_entries(v):
        if not _entry(item, env):
            return ERROR
    return _write_env(env)


# A V1 environment may name its own separator in its first character (``|a=1|b=2``).
_V1_DELIMITERS = frozenset("!#$%&*+,-/:;<>?@^`|~")


def v1_entries(text: str) -> list[str]:
    """The ``NAME=value`` entries of a V1 environment string, as HTCondor's ``Env`` reads them.

    Entries are separated by ``;`` (or by the punctuation character the string starts
    with) and by newlines; white space at the start of an entry is dropped, and entries
    left empty are skipped.
    """
    delim = ";"
    if text and text[0] in _V1_DELIMITERS:
        delim, text = text[0], text[1:]
    entries: list[str] = []
    for line in text.split("\n"):
        for item in line.split(delim):
            item = item.lstrip(" \t\r\n")
            if item:
                entries.append(item)
    return entries


@builtin("mergeEnvironment", 0, None)
def _merge_environment(s: EvalState, *values: Any) -> Any:
    env: dict[str, str] = {}
    for v in values:
        if v is UNDEFINED:
            continue
        if type(v) is not str:
            return ERROR
        items = split_v2(v)
        if items is None:
            return ERROR
        for item in items:
            if not _entry(item, env):
                return ERROR
    return _write_env(env)


def _version(v: Any) -> int | None:
    """The arguments syntax asked for: 1 or 2, read as HTCondor reads it, through a 32-bit int."""
    if type(v) is not int:
        return None
    low = v & 0xFFFFFFFF
    return low if low in (1, 2) else None


def _version_first(s: EvalState, version: Node | None) -> int | None:
    """The syntax argument, evaluated before the other one as HTCondor does (a bad one is
    ERROR without the other being evaluated at all)."""
    return 2 if version is None else _version(version.compiled()(s))


@builtin("argsToList", 1, 2, lazy=True)
def _args_to_list(s: EvalState, arg: Node, version: Node | None = None) -> Any:
    vers = _version_first(s, version)
    if vers is None:
        return ERROR
    text = arg.compiled()(s)
    if type(text) is not str:
        return ERROR
    items = text.split() if vers == 1 else split_v2(text)
    if items is None:
        return ERROR
    return ListValue(tuple(Literal(x) for x in items), None)


@builtin("listToArgs", 1, 2, lazy=True)
def _list_to_args(s: EvalState, arg: Node, version: Node | None = None) -> Any:
    vers = _version_first(s, version)
    if vers is None:
        return ERROR
    lst = arg.compiled()(s)
    if type(lst) is not ListValue:
        return ERROR
    items = list_values(s, lst)
    if any(type(x) is not str for x in items):
        return ERROR
    if vers == 1:
        if any(c in _WHITE for x in items for c in x):
            return ERROR
        return " ".join(items)
    return " ".join(quote_v2(x) for x in items)
