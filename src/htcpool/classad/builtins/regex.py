"""Regular expressions: ``regexp``, ``regexpMember``, ``regexps``, ``replace``, ``replaceall``.

HTCondor uses PCRE on the bytes of its strings, without UTF-8 mode. Here the
``regex`` package (a backtracking engine close to PCRE, with a time limit) runs on
the UTF-8 bytes as well, so ``.`` matches one byte and ``i`` folds ASCII letters
only, as PCRE does. Options are letters, any case, others ignored:
``i`` caseless, ``m`` multiline, ``s`` dot matches newline, ``x`` extended, and for
substitution ``f`` (return the whole target with the replacement in place) and
``g`` (replace every match). PCRE syntax is mapped where Python spells it
differently (``(?<name>…)``, ``\\z``, ``\\Z``); ``regex`` knows most of the rest
of PCRE (``\\K``, ``\\R``, ``\\h``, POSIX classes, branch reset), and what it lacks
(callouts, some recursion forms) makes the pattern invalid, which gives ERROR where
PCRE would match.

Every search runs under the process's time limit (``CLASSAD_REGEX_TIMEOUT``,
``htcpool.classad.context.regex_timeout``, docs/reliability.md): a pattern that
backtracks catastrophically gives ERROR once the limit passes, and a substitution
runs all its searches as one scan under one limit.

``regexpMember`` with an invalid pattern matches nothing. Substitution follows
HTCondor's loop, including its quirks: after an empty match the next match must
start right there and be non-empty, otherwise one character is copied (even
without ``f``), and an empty match at the very end of the target with ``g`` is
ERROR. In the replacement ``\\N`` (one digit) is
group N, an unset group is the empty string and a group beyond the last one that
took part in the match is ERROR; any other backslash is copied.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import regex

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import from_utf8, utf8
from htcpool.classad.context import regex_timeout
from htcpool.classad.nodes import EvalState, list_item
from htcpool.classad.values import ERROR, UNDEFINED, ListValue

_NAMED_GROUP = re.compile(rb"\(\?<(?=[A-Za-z_])")
_PCRE_ESCAPES = re.compile(rb"\\(.)", re.S)


def _translate(pattern: bytes) -> bytes:
    def escape(m: re.Match[bytes]) -> bytes:
        c = m.group(1)
        if c == b"z":
            return rb"\Z"
        if c == b"Z":
            return rb"(?=\n?\Z)"
        return m.group(0)

    return _NAMED_GROUP.sub(rb"(?P<", _PCRE_ESCAPES.sub(escape, pattern))


@lru_cache(maxsize=512)
def compile_pattern(pattern: str, options: str) -> regex.Pattern[bytes] | None:
    """The compiled form of a PCRE pattern with HTCondor's option letters, or None if invalid."""
    flags = 0
    low = options.lower()
    if "i" in low:
        flags |= regex.IGNORECASE
    if "m" in low:
        flags |= regex.MULTILINE
    if "s" in low:
        flags |= regex.DOTALL
    if "x" in low:
        flags |= regex.VERBOSE
    try:
        return regex.compile(_translate(utf8(pattern)), flags)
    except (regex.error, OverflowError, RecursionError, ValueError, IndexError):
        return None


def search(rx: regex.Pattern[bytes], target: bytes) -> Any:
    """``rx.search(target)`` under the time limit: True, False, or ERROR once it runs out."""
    try:
        return rx.search(target, timeout=regex_timeout()) is not None
    except TimeoutError:
        return ERROR


def _groups_used(m: regex.Match[bytes]) -> int:
    """PCRE's return code: one more than the highest group that took part in the match."""
    used = 1
    for i in range(1, (m.re.groups or 0) + 1):
        if m.start(i) >= 0:
            used = i + 1
    return used


def _expand(m: regex.Match[bytes], replacement: bytes) -> bytes | None:
    used = _groups_used(m)
    out = bytearray()
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == 0x5C and i + 1 < n and 0x30 <= replacement[i + 1] <= 0x39:
            group = replacement[i + 1] - 0x30
            if group >= used:
                return None
            out += m.group(group) or b""
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def substitute(rx: regex.Pattern[bytes], target: bytes, replacement: bytes, full: bool, every: bool) -> Any:
    """HTCondor's substitution loop over one scan of ``target`` (under one time limit).

    The scan's own rule for empty matches is PCRE's retry in HTCondor's loop: after an
    empty match at ``idx`` the scan takes a non-empty match starting at ``idx`` if there
    is one, and otherwise moves on from ``idx + 1``; where it moves on, HTCondor copies
    the character at ``idx`` (even without ``f``), and at the end of the target it fails.
    """
    out = bytearray()
    idx = 0
    empty_match = False
    try:
        for m in rx.finditer(target, timeout=regex_timeout()):
            start, end = m.span()
            if empty_match and start != idx:
                out.append(target[idx])  # HTCondor's loop steps over one character
                idx += 1
            if full:
                out += target[idx:start]
            text = _expand(m, replacement)
            if text is None:
                return ERROR
            out += text
            idx = end
            empty_match = start == end
            if not every:
                break
        else:
            if empty_match:
                if idx >= len(target):
                    # HTCondor steps past the end of the target and PCRE refuses the offset.
                    return ERROR
                out.append(target[idx])
                idx += 1
    except TimeoutError:
        return ERROR
    if full:
        out += target[idx:]
    return from_utf8(bytes(out))


def _options(values: tuple[Any, ...]) -> Any:
    """ERROR if any argument is ERROR, else UNDEFINED if any is UNDEFINED, else None."""
    if any(v is ERROR for v in values):
        return ERROR
    if any(v is UNDEFINED for v in values):
        return UNDEFINED
    return None


@builtin("regexp", 2, 3)
def _regexp(s: EvalState, pattern: Any, target: Any, options: Any = "") -> Any:
    bad = _options((pattern, target, options))
    if bad is not None:
        return bad
    if type(options) is not str or type(pattern) is not str or type(target) is not str:
        return ERROR
    rx = compile_pattern(pattern, options)
    if rx is None:
        return ERROR
    return search(rx, utf8(target))


@builtin("regexpMember", 2, 3)
def _regexp_member(s: EvalState, pattern: Any, targets: Any, options: Any = "") -> Any:
    bad = _options((pattern, targets, options))
    if bad is not None:
        return bad
    if type(options) is not str or type(pattern) is not str or type(targets) is not ListValue:
        return ERROR
    rx = compile_pattern(pattern, options)
    maybe_undefined = False
    for i in range(len(targets.items)):
        v = list_item(s, targets, i)
        if v is UNDEFINED:
            maybe_undefined = True
        elif type(v) is not str:
            return ERROR
        elif rx is not None:
            found = search(rx, utf8(v))
            if found is not False:
                return found
    return UNDEFINED if maybe_undefined else False


def _substitution(name: str, extra: str) -> None:
    def impl(s: EvalState, pattern: Any, target: Any, replacement: Any, options: Any = "") -> Any:
        bad = _options((pattern, target, replacement, options))
        if bad is not None:
            return bad
        if type(options) is not str:
            return ERROR
        if type(pattern) is not str or type(target) is not str or type(replacement) is not str:
            return ERROR
        opts = (options + extra).lower()
        rx = compile_pattern(pattern, opts)
        if rx is None:
            return ERROR
        return substitute(rx, utf8(target), utf8(replacement), "f" in opts, "g" in opts)

    builtin(name, 3, 4)(impl)


_substitution("regexps", "")
_substitution("replace", "f")
_substitution("replaceall", "fg")
