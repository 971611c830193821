"""Macro expansion for submit descriptions: ``$(NAME)``, ``$(NAME:default)`` and ``$FUNC(…)``.

This is the configuration macro language as condor_submit uses it. ``expand``
scans the text for ``$``: ``$$(…)`` is copied unchanged (it is for match time),
``$(…)`` is a macro reference and ``$NAME(…)`` a function when ``NAME`` is in
``FUNCTIONS``; anything else is plain text. The body of a reference is expanded
first, so ``$($(1))`` works, and the value found is expanded in turn; a chain
deeper than ``MAX_DEPTH`` is an error (a macro that refers to itself).

Names are looked up through a ``lookup`` callable (case-insensitive names are
its business), so the caller can count uses and note which names a value
depends on. Undefined names expand to the empty string, as in condor_submit.
"""

from __future__ import annotations

import posixpath
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from htcpool.classad import ExprTree
from htcpool.classad.errors import ClassAdError
from htcpool.classad.unparse import unparse_old
from htcpool.submit.errors import SubmitError

MAX_DEPTH = 64


class MacroError(SubmitError):
    """A macro could not be expanded (bad function arguments, runaway recursion)."""


@dataclass
class Expander:
    """Expands macros against ``lookup``; ``environ`` and ``rng`` back ``$ENV`` and ``$RANDOM_*``."""

    lookup: Callable[[str], str | None]
    environ: Mapping[str, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    cwd: str = "/"
    used_random: bool = False

    def expand(self, text: str, depth: int = 0) -> str:
        if "$" not in text:
            return text
        if depth > MAX_DEPTH:
            raise MacroError(f"macro expansion is nested too deeply in: {text}")
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            if text.startswith("$$(", j):
                end = _close(text, j + 2)
                out.append(text[j:end])
                i = end
                continue
            k = j + 1
            while k < n and (text[k].isalnum() or text[k] == "_"):
                k += 1
            name = text[j + 1 : k]
            fn = function_named(name.upper()) if name else None
            if k >= n or text[k] != "(" or (name and fn is None):
                out.append("$")
                i = j + 1
                continue
            end = _close(text, k)
            body = self.expand(text[k + 1 : end - 1], depth + 1)
            if fn is not None:
                out.append(fn(self, name.upper(), body, depth))
            else:
                out.append(self.reference(body, depth))
            i = end
        return "".join(out)

    def reference(self, body: str, depth: int) -> str:
        name, colon, default = body.partition(":")
        name = name.strip()
        if name.upper() == "DOLLAR":
            return "$"
        value = self.lookup(name)
        if not value and colon:
            return self.expand(default, depth + 1)
        return self.expand(value or "", depth + 1)

    def value_of(self, name: str, depth: int) -> str:
        """A macro's expanded value, or ``name`` itself when no macro has that name."""
        value = self.lookup(name.strip())
        return name.strip() if value is None else self.expand(value, depth + 1)


def _close(text: str, open_at: int) -> int:
    """Index just past the parenthesis matching the one at ``open_at`` (or the end of text)."""
    level = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            level += 1
        elif text[i] == ")":
            level -= 1
            if level == 0:
                return i + 1
    raise MacroError(f"unterminated macro reference in: {text}")


def _args(body: str) -> list[str]:
    return [a.strip() for a in body.split(",")]


def _evaluate(text: str, func: str) -> object:
    try:
        return ExprTree(text).evaluate()
    except ClassAdError:
        raise MacroError(f"${func}() could not parse '{text}'") from None


def _fn_env(ex: Expander, func: str, body: str, depth: int) -> str:
    name, colon, default = body.partition(":")
    value = ex.environ.get(name.strip())
    if value is None:
        return default if colon else "UNDEFINED"
    return value


def _fn_int(ex: Expander, func: str, body: str, depth: int) -> str:
    args = _args(body)
    value = _evaluate(ex.value_of(args[0], depth), func)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MacroError(f"$INT() macro: {args[0]} does not evaluate to an integer")
    fmt = args[1] if len(args) > 1 else "%d"
    return fmt % int(value)


def _fn_real(ex: Expander, func: str, body: str, depth: int) -> str:
    args = _args(body)
    value = _evaluate(ex.value_of(args[0], depth), func)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MacroError(f"$REAL() macro: {args[0]} does not evaluate to a real")
    if len(args) > 1:
        text = args[1] % float(value)
        return text if "." in text else text + ".0"
    return "%.16G" % float(value)


def _fn_string(ex: Expander, func: str, body: str, depth: int) -> str:
    args = _args(body)
    text = ex.value_of(args[0], depth)
    try:
        value = ExprTree(text).evaluate()
    except ClassAdError:
        value = text
    if not isinstance(value, str):
        value = text
    return args[1] % value if len(args) > 1 else value


def _fn_eval(ex: Expander, func: str, body: str, depth: int) -> str:
    value = _evaluate(ex.value_of(body, depth), func)
    return unparse_old(value)


def _list_items(ex: Expander, args: list[str], depth: int) -> list[str]:
    if len(args) == 1 and ex.lookup(args[0]) is not None:
        return [a.strip() for a in ex.value_of(args[0], depth).split(",")]
    return args


def _fn_choice(ex: Expander, func: str, body: str, depth: int) -> str:
    args = _args(body)
    index = _evaluate(ex.value_of(args[0], depth), func)
    items = _list_items(ex, args[1:], depth)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(items):
        raise MacroError(f"$CHOICE() macro: index {args[0]} is out of range")
    return items[index]


def _fn_random_choice(ex: Expander, func: str, body: str, depth: int) -> str:
    ex.used_random = True
    return ex.rng.choice(_list_items(ex, _args(body), depth))


def _fn_random_integer(ex: Expander, func: str, body: str, depth: int) -> str:
    ex.used_random = True
    args = [int(a) for a in _args(body)]
    step = args[2] if len(args) > 2 else 1
    if len(args) < 2 or step <= 0 or args[1] < args[0]:
        raise MacroError(f"$RANDOM_INTEGER() macro: bad arguments '{body}'")
    return str(args[0] + step * ex.rng.randint(0, (args[1] - args[0]) // step))


def _fn_substr(ex: Expander, func: str, body: str, depth: int) -> str:
    args = _args(body)
    if len(args) < 2:
        raise MacroError("$SUBSTR() macro needs a name and a start")
    text = ex.value_of(args[0], depth)
    start = int(args[1])
    start = max(0, len(text) + start) if start < 0 else min(start, len(text))
    if len(args) > 2:
        length = int(args[2])
        stop = len(text) + length if length < 0 else start + length
        return text[start:max(start, stop)]
    return text[start:]


def _fn_filename(ex: Expander, func: str, body: str, depth: int) -> str:
    flags = func[1:]
    if func == "BASENAME":
        flags = "nx"
    elif func == "DIRNAME":
        flags = "p"
    args = _args(body)
    path = ex.value_of(args[0], depth).strip().strip('"')
    if func == "BASENAME" and len(args) > 1:
        base = posixpath.basename(path)
        return base[: -len(args[1])] if args[1] and base.endswith(args[1]) else base
    return file_parts(path, flags.lower(), ex.cwd)


def file_parts(path: str, flags: str, cwd: str) -> str:
    """The parts of ``path`` that ``$F<flags>()`` selects (p, d, n, x, f, b, q, a)."""
    if "f" in flags and not path.startswith("/"):
        path = posixpath.normpath(posixpath.join(cwd, path))
    directory, base = posixpath.split(path)
    stem, ext = posixpath.splitext(base)
    bare = "b" in flags
    out = ""
    if "p" in flags:
        out += directory + ("" if bare or not directory else "/")
    elif "d" in flags:
        parent = directory
        for _ in range(flags.count("d") - 1):
            parent = posixpath.dirname(parent)
        out += posixpath.basename(parent) + ("" if bare or not parent else "/")
    if "n" in flags:
        out += stem
    if "x" in flags:
        out += ext[1:] if bare else ext
    if not any(f in flags for f in "pdnx"):
        out = path
    if "q" in flags:
        out = f'"{out}"'
    elif "a" in flags:
        out = f"'{out}'"
    return out


FUNCTIONS: dict[str, Callable[[Expander, str, str, int], str]] = {
    "ENV": _fn_env,
    "INT": _fn_int,
    "REAL": _fn_real,
    "STRING": _fn_string,
    "EVAL": _fn_eval,
    "CHOICE": _fn_choice,
    "RANDOM_CHOICE": _fn_random_choice,
    "RANDOM_INTEGER": _fn_random_integer,
    "SUBSTR": _fn_substr,
    "BASENAME": _fn_filename,
    "DIRNAME": _fn_filename,
}


def function_named(name: str) -> Callable[[Expander, str, str, int], str] | None:
    """The macro function called ``name`` (upper case), including every ``$F<flags>`` form."""
    fn = FUNCTIONS.get(name)
    if fn is None and name.startswith("F") and all(c in "PDNXFBQAWU" for c in name[1:]):
        return _fn_filename
    return fn


__all__ = ["FUNCTIONS", "Expander", "MacroError", "file_parts", "function_named"]
