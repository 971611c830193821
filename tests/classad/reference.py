"""Run the same case through htcpool and through HTCondor's own ClassAd library.

The reference is ``classad2`` from the ``htcondor`` package (a test-only dependency).
``htcondor2`` is imported first so the library runs with HTCondor's default
old-ClassAd compatibility (``MY``/``CurrentTime`` implicit, unscoped names falling
back to the target in matches), which is what htcpool's default context does.

Each ``*_outcome`` function returns a tuple of plain strings, so a disagreement shows up
in pytest's diff as the first field that differs. Failures are reduced to a marker
(``"<parse error>"``, ``"<eval error>"``): the two libraries word their messages
differently, and what matters is that both refuse.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from htcpool import classad as ours

try:  # the reference is optional: without it the differential tests are skipped
    import classad2 as ref
    import htcondor2  # noqa: F401  (sets HTCondor's default evaluation semantics)
except ImportError:  # pragma: no cover - depends on the environment
    ref = None

HAVE_REFERENCE = ref is not None
requires_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason="htcondor's classad2 is not installed")

PARSE_ERROR = "<parse error>"
EVAL_ERROR = "<eval error>"
NOT_UTF8 = "<not UTF-8>"

try:
    from htcpool.classad import json_form as _json_form  # noqa: F401

    HAVE_JSON = True
except ImportError:  # pragma: no cover - the JSON printer is written separately
    HAVE_JSON = False


def examples(default: int) -> int:
    """How many examples a property test runs: ``HTCPOOL_DIFF_EXAMPLES`` overrides ``default``."""
    return int(os.environ.get("HTCPOOL_DIFF_EXAMPLES", default))


def _lib(which: str) -> Any:
    return ours if which == "ours" else ref


def expr_outcome(which: str, text: str, scope: str | None = None, target: str | None = None) -> tuple[str, ...]:
    """Parse ``text`` and evaluate it (optionally with MY = ``scope``, TARGET = ``target`` ads).

    Returns (repr, str, value) where value is ``repr`` of ``simplify()``: it shows the type,
    UNDEFINED versus ERROR and the formatting of the result.
    """
    lib = _lib(which)
    try:
        e = lib.ExprTree(text)
    except Exception:  # noqa: BLE001 - both libraries' parse failures are compared
        return (PARSE_ERROR,)
    args: list[Any] = []
    try:
        if scope is not None:
            args.append(lib.ClassAd(scope))
            if target is not None:
                args.append(lib.ClassAd(target))
    except Exception:  # noqa: BLE001
        return (repr(e), str(e), "<ad parse error>")
    try:
        value = repr(e.simplify(*args))
    except RecursionError:  # never acceptable: make it stand out in the diff
        value = "<RecursionError>"
    except Exception:  # noqa: BLE001
        value = EVAL_ERROR
    return (repr(e), str(e), value)


def ad_outcome(which: str, text: str) -> tuple[str, ...]:
    """Parse an ad and print it every way both libraries can."""
    lib = _lib(which)
    try:
        ad = lib.ClassAd(text)
    except Exception:  # noqa: BLE001
        return (PARSE_ERROR,)
    try:
        out = [repr(ad), str(ad), ad.printOld()]
        if HAVE_JSON:
            out.append(ad.printJson())
    except UnicodeDecodeError:  # classad2 cannot hand strings that are not UTF-8 to Python
        return (NOT_UTF8,)
    return tuple(out)


def old_ads_outcome(which: str, text: str, parser: str = "Old") -> tuple[str, ...]:
    """``parseAds`` (with ``parser``: ``"Old"`` or ``"Auto"``) and ``parseOne`` of ``text``:
    each ad canonically and in the old form."""
    lib = _lib(which)
    kind = getattr(lib.ParserType, parser)
    try:
        out = [x for ad in lib.parseAds(text, parser=kind) for x in (repr(ad), ad.printOld())]
        out.append(repr(lib.parseOne(text, parser=kind)))
    except UnicodeDecodeError:
        return (NOT_UTF8,)
    except Exception:  # noqa: BLE001
        return (PARSE_ERROR,)
    return tuple(out)


def match_outcome(which: str, left: str, right: str) -> tuple[str, ...]:
    """``matches`` both ways and ``symmetricMatch`` of two ads."""
    lib = _lib(which)
    try:
        a, b = lib.ClassAd(left), lib.ClassAd(right)
    except Exception:  # noqa: BLE001
        return (PARSE_ERROR,)
    out = []
    for f in (lambda: a.matches(b), lambda: b.matches(a), lambda: a.symmetricMatch(b)):
        try:
            out.append(repr(f()))
        except UnicodeDecodeError:  # classad2 cannot hand strings that are not UTF-8 to Python
            return (NOT_UTF8,)
        except Exception:  # noqa: BLE001
            out.append(EVAL_ERROR)
    return tuple(out)


def assert_same_expr(text: str, scope: str | None = None, target: str | None = None) -> None:
    assert expr_outcome("ours", text, scope, target) == expr_outcome("ref", text, scope, target), text


def assert_same_ad(text: str) -> None:
    assert ad_outcome("ours", text) == ad_outcome("ref", text), text
