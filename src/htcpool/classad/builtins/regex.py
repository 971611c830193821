"""Regular expressions: ``regexp``, ``regexpMember``, ``regexps``, ``replace``, ``replaceall``.

HTCondor uses PCRE on the bytes of its strings, without UTF-8 mode. Here Python's
``re`` runs on the UTF-8 bytes as well, so ``.`` matches one byte and ``i`` folds
ASCII letters only, as PCRE does. Options are letters, any case, others ignored:
``i`` caseless, ``m`` multiline, ``s`` dot matches newline, ``x`` extended, and for
substitution ``f`` (return the whole target with the replacement in place) and
``g`` (replace every match). PCRE syntax is mapped where Python spells it
differently (``(?<name>…)``, ``\\z``, ``\\Z``); constructs Python lacks (recursion,
``\\K``, callouts, ``\\R``, ``\\h``, ``\\v`` as a class) make the pattern invalid,
which gives ERROR where PCRE would match.

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

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import from_utf8, utf8
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
def compile_pattern(pattern: str, options: str) -> re.Pattern[bytes] | None:
    """The compiled form of a PCRE pattern with HTCondor's option letters, or None if invalid."""
    flags = 0
    low = options.lower()
    if "i" in low:
        flags |= re.IGNORECASE
    if "m" in low:
        flags |= re.MULTILINE
    if "s" in low:
        flags |= re.DOTALL
    if "x" in low:
        flags |= re.VERBOSE
    try:
        return re.compile(_translate(utf8(pattern)), flags)
    except (re.error, OverflowError, RecursionError):
        return None


def _groups_used(m: re.Match[bytes]) -> int:
    """PCRE's return code: one more than the highest group that took part in the match."""
    used = 1
    for i in range(1, (m.re.groups or 0) + 1):
        if m.start(i) >= 0:
            used = i + 1
    return used


def _expand(m: re.Match[bytes], replacement: bytes) -> bytes | None:
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


def substitute(rx: re.Pattern[bytes], target: bytes, replacement: bytes, full: bool, every: bool) -> Any:
    out = bytearray()
    idx = 0
    empty_match = False
    while True:
        if empty_match:
            m = rx.match(target, idx)
            if m is not None and m.end() == idx:
                m = None
            if m is None:
                if idx >= len(target):
                    # HTCondor steps past the end of the target and PCRE refuses the offset.
                    return ERROR
                out.append(target[idx])
                idx += 1
                empty_match = False
                continue
        else:
            m = rx.search(target, idx)
            if m is None:
                break
        if full:
            out += target[idx : m.start()]
        text = _expand(m, replacement)
        if text is None:
            return ERROR
        out += text
        idx = m.end()
        empty_match = m.start() == m.end()
        if not every:
            break
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
    return rx.search(utf8(target)) is not None


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
        elif rx is not None and rx.search(utf8(v)) is not None:
            return True
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
