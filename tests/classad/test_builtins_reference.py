"""The oracle for the built-in function tests: HTCondor's own ``classad2``.

``reference(text)`` and ``ours(text)`` both evaluate an expression with no ad and
print the value canonically, so type, UNDEFINED versus ERROR and formatting are
all compared. A failed evaluation or parse prints as ``<failed>`` on both sides.
Without the ``htcondor`` package every test that asks for the reference skips.
Two differences of the core printer are normalised away here, because they are
not the built-ins' business: HTCondor prints the bytes of non-ASCII characters as
octal escapes, and it prints a relative time from its whole seconds.
"""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from htcpool.classad import ClassAdError, EvalContext, ExprTree, fixed_clock

classad2: ModuleType | None
try:  # the reference is a test-only dependency: without it every comparison skips
    import classad2
    import htcondor2  # noqa: F401 - imported for HTCondor's default (old-ClassAd) semantics
except ImportError:  # pragma: no cover - depends on the environment
    classad2 = None

CONTEXT = EvalContext(clock=fixed_clock(1_700_000_000))
FAILED = "<failed>"


def reference(text: str) -> str:
    if classad2 is None:
        pytest.skip("htcondor's classad2 (the reference) is not installed")
    try:
        return repr(classad2.ExprTree(text).simplify())
    except Exception:  # classad2 raises plain ClassAdException subclasses
        return FAILED


def _octal(m: re.Match[str]) -> str:
    return "".join("\\%03o" % b for b in m.group().encode("utf-8", "surrogateescape"))


def ours(text: str, context: EvalContext = CONTEXT) -> str:
    try:
        out = repr(ExprTree(text).simplify(context=context))
    except ClassAdError:
        return FAILED
    return re.sub(r"[^\x00-\x7f]+", _octal, out)


def same(text: str) -> tuple[str, str]:
    """(ours, reference) for one expression, ready for ``assert a == b``."""
    return ours(text), reference(text)


def test_octal_normalisation_matches_reference() -> None:
    assert ours('"äb"') == reference('"äb"') == '"\\303\\244b"'


def test_failures_compare_equal() -> None:
    assert ours("1 +") == reference("1 +") == FAILED


# ------------------------------------------------------------ argument generation

from hypothesis import strategies as st  # noqa: E402

_CHARS = st.sampled_from(list("abcAB xyz019.,;:+-_@*?()[]^$|\\'\"\t\nä€"))


def _string_literal(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + out + '"'


strings = st.text(_CHARS, max_size=8).map(_string_literal)
ints = st.one_of(
    st.integers(-100, 100),
    st.sampled_from(["9223372036854775807", "-9223372036854775807", "2147483648", "4294967297"]),
).map(str)
reals = st.one_of(
    st.sampled_from(["0.0", "-0.0", "1.5", "-2.5", "0.5", "1e300", "1e-300", 'real("INF")', 'real("-INF")', 'real("NaN")']),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
)
scalars = st.one_of(
    ints, reals, strings, st.sampled_from(["true", "false", "undefined", "error", "absTime(0)", "relTime(90)"])
)
lists = st.lists(scalars, max_size=4).map(lambda xs: "{" + ", ".join(xs) + "}")
ads = st.lists(st.tuples(st.sampled_from(["a", "b", "Prio"]), st.one_of(scalars, lists)), max_size=3).map(
    lambda kv: "[" + "; ".join(f"{k} = {v}" for k, v in dict(kv).items()) + "]"
)
values = st.one_of(scalars, scalars, lists, ads)


def calls(names: list[str], args: st.SearchStrategy[str] = values, max_args: int = 4) -> st.SearchStrategy[str]:
    """Expressions calling one of ``names`` with 0 to ``max_args`` generated arguments."""
    return st.tuples(st.sampled_from(names), st.lists(args, max_size=max_args)).map(
        lambda c: f"{c[0]}({', '.join(c[1])})"
    )
