"""The two syntaxes of ``arguments`` and ``environment``.

Old (V1) syntax is the bare value: arguments split on white space, environment
entries split on ``;``. New (V2) syntax is the value in double quotes (``""``
stands for one ``"``): white space separates words, single quotes group, and
``''`` inside single quotes is one ``'``.

Job ads keep V1 arguments in ``Args`` and V2 arguments in ``Arguments``; the
environment is always written in V2 form to ``Environment``, entries sorted by
name, each word quoted the way HTCondor quotes it: every space, tab, newline or
quote is wrapped in single quotes, runs of them sharing one pair.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from htcpool.classad.builtins.env import quote_v2
from htcpool.submit.errors import SubmitError


class SyntaxProblem(SubmitError):
    """An arguments or environment value that neither syntax accepts."""


def is_v2(value: str) -> bool:
    return len(value) >= 2 and value.startswith('"') and value.endswith('"')


def split_v2(value: str) -> list[str]:
    """Words of a V2 value (the surrounding double quotes already removed)."""
    words: list[str] = []
    current: list[str] | None = None
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == '"':
            if value.startswith('""', i):
                current = (current or []) + ['"']
                i += 2
                continue
            raise SyntaxProblem(f'unescaped double quote in "{value}"; write "" for a literal one')
        if c in " \t\r\n":
            if current is not None:
                words.append("".join(current))
                current = None
            i += 1
            continue
        if c == "'":
            current = current or []
            i += 1
            while True:
                if i >= n:
                    raise SyntaxProblem(f"unbalanced single quote in {value}")
                if value[i] == "'":
                    if value.startswith("''", i):
                        current.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                if value.startswith('""', i):
                    current.append('"')
                    i += 2
                    continue
                current.append(value[i])
                i += 1
            continue
        current = (current or []) + [c]
        i += 1
    if current is not None:
        words.append("".join(current))
    return words


def join_v2(words: list[str]) -> str:
    return " ".join(quote_v2(w) for w in words)


def arguments_attribute(value: str | None) -> tuple[str, str]:
    """(attribute name, value) for an ``arguments`` command (None: no arguments)."""
    if value is None:
        return "Arguments", ""
    if is_v2(value):
        return "Arguments", join_v2(split_v2(value[1:-1]))
    if '"' in value:
        raise SyntaxProblem(f"found illegal unescaped double-quote in arguments: {value}")
    return "Args", " ".join(value.split())


def parse_environment(value: str) -> dict[str, str]:
    """NAME → value from an ``environment`` command in either syntax."""
    entries = split_v2(value[1:-1]) if is_v2(value) else [e.strip() for e in value.split(";")]
    env: dict[str, str] = {}
    for entry in entries:
        if not entry:
            continue
        name, eq, val = entry.partition("=")
        if not eq or not name:
            raise SyntaxProblem(f"environment entry '{entry}' is not of the form NAME=VALUE")
        env[name] = val
    return env


def getenv_entries(value: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of the submitter's environment that a ``getenv`` value selects."""
    low = value.strip().lower()
    if low in ("true", "yes", "t", "1"):
        return dict(environ)
    if low in ("false", "no", "f", "0", ""):
        return {}
    out: dict[str, str] = {}
    for pattern in (p.strip() for p in value.replace(",", " ").split()):
        for name, val in environ.items():
            if fnmatch.fnmatchcase(name, pattern):
                out[name] = val
    return out


def environment_attribute(env: Mapping[str, str]) -> str:
    return " ".join(quote_v2(f"{k}={env[k]}") for k in sorted(env))
