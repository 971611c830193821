"""Version comparison: ``versioncmp``, ``versionGT`` … ``versionEQ``, ``version_in_range``.

Versions compare like glibc's ``strverscmp``: byte by byte until the first
difference; when that difference lies in a run of digits in both strings, the
runs compare as numbers, except that a run with more leading zeros counts as a
fraction and sorts first (``000 < 00 < 01 < 010 < 09 < 0 < 1 < 9 < 10``).
Arguments are converted with ``string()``; an UNDEFINED argument gives UNDEFINED.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.types import to_string, utf8
from htcpool.classad.nodes import EvalState
from htcpool.classad.values import ERROR, UNDEFINED


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _signed(c: int) -> int:
    """A byte as C's (signed) ``char``: bytes of non-ASCII characters sort before ASCII."""
    return c - 256 if c >= 128 else c


def natural_cmp(a: bytes, b: bytes) -> int:
    """HTCondor's ``natural_cmp``: negative, zero or positive as ``a`` sorts before, with or after ``b``."""
    a0, b0 = a + b"\0", b + b"\0"
    i = 0
    while a0[i] and a0[i] == b0[i]:
        i += 1
    if a0[i] == b0[i]:
        return 0
    start = i
    while start > 0 and _isdigit(a0[start - 1]):
        start -= 1
    if start == i and (not _isdigit(a0[i]) or not _isdigit(b0[i])):
        return _signed(a0[i]) - _signed(b0[i])
    za = start
    while a0[za] == 48:
        za += 1
    zb = start
    while b0[zb] == 48:
        zb += 1
    if za > start and not _isdigit(a0[za]):
        za -= 1
    if zb > start and not _isdigit(b0[zb]):
        zb -= 1
    if za - start != zb - start:
        return (zb - start) - (za - start)
    if za > start:
        return _signed(a0[i]) - _signed(b0[i])
    ea = za
    while _isdigit(a0[ea]):
        ea += 1
    eb = zb
    while _isdigit(b0[eb]):
        eb += 1
    if ea - start != eb - start:
        return (ea - start) - (eb - start)
    return _signed(a0[i]) - _signed(b0[i])


def _strings(*values: Any) -> list[bytes] | None:
    out = []
    for v in values:
        text = to_string(v)
        if type(text) is not str:
            return None
        out.append(utf8(text))
    return out


def _register(name: str, test: Callable[[int], Any]) -> None:
    def compare(s: EvalState, left: Any, right: Any) -> Any:
        if left is UNDEFINED or right is UNDEFINED:
            return UNDEFINED
        texts = _strings(left, right)
        if texts is None:
            return ERROR
        return test(natural_cmp(texts[0], texts[1]))

    builtin(name, 2)(compare)


_register("versioncmp", lambda r: r)
_register("versionGT", lambda r: r > 0)
_register("versionGE", lambda r: r >= 0)
_register("versionLT", lambda r: r < 0)
_register("versionLE", lambda r: r <= 0)
_register("versionEQ", lambda r: r == 0)


@builtin("version_in_range", 3)
def _version_in_range(s: EvalState, version: Any, low: Any, high: Any) -> Any:
    if low is UNDEFINED or high is UNDEFINED:
        return UNDEFINED
    texts = _strings(version, low, high)
    if texts is None:
        return ERROR
    v, lo, hi = texts
    return natural_cmp(lo, v) <= 0 and natural_cmp(v, hi) <= 0
