"""Hypothesis strategies producing ClassAd source text.

Expressions are generated as text (not trees) so both libraries parse exactly the same
input. ``expressions()`` mixes well-typed and ill-typed operands freely: every literal
type, every operator, attribute references (unscoped, ``MY.``/``TARGET.``/``PARENT.``,
selections, subscripts, names that refer to themselves) and a few functions. ``ads()``
builds ads whose attributes refer to one another, cycles included.

The generated text never contains comments: the reference parses an expression by
wrapping it in ``[expression = TEXT]``, which a ``//`` comment would break.
"""

from __future__ import annotations

from hypothesis import strategies as st

INT64_MAX = (1 << 63) - 1

# names the generated ads define, so references hit as often as they miss
NAMES = ["a", "b", "c", "X", "Rank", "Requirements", "self_ref", "Missing"]
SCOPES = ["MY", "TARGET", "PARENT", "my", "target", "self", "Root"]

# functions whose results the core decides (the rest of the built-ins are tested elsewhere)
FUNCTIONS = {
    "strcat": (0, 3),
    "size": (1, 1),
    "ifThenElse": (3, 3),
    "isUndefined": (1, 1),
    "int": (1, 1),
    "real": (1, 1),
    "string": (1, 1),
    "member": (2, 2),
}


def available_functions() -> dict[str, tuple[int, int]]:
    """The functions of ``FUNCTIONS`` that htcpool's registry already provides."""
    from htcpool.classad.builtins import lookup

    return {name: arity for name, arity in FUNCTIONS.items() if lookup(name) is not None}


integers = st.one_of(
    st.integers(min_value=0, max_value=1000),
    st.integers(min_value=0, max_value=INT64_MAX),
    st.sampled_from([0, 1, 2, 7, 63, 64, 65, INT64_MAX, INT64_MAX - 1]),
).map(str)
# -9223372036854775808 is only reachable as a negative literal; 9223372036854775808 overflows
negative_integers = st.sampled_from(["-1", "-9223372036854775808", "-9223372036854775807", "-0"])


def _real_text(x: float) -> str:
    text = repr(x)
    return text if ("." in text or "e" in text) else text + ".0"


reals = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: _real_text(abs(x))),
    st.sampled_from(
        [
            "0.0", "1.5", "2.5e-320", "1e308", "1E+308", "1e-400", "1e400", ".5", "1e5",
            "4.9e-324", "1.7976931348623157e308", "0.1", "123456789012345678.0",
        ]
    ),
    st.sampled_from(['real("INF")', 'real("-INF")', 'real("NaN")', "-0.0"]),
)  # fmt: skip

_ESCAPES = ["\\n", "\\t", "\\r", "\\a", "\\b", "\\f", "\\v", "\\\\", '\\"', "\\'", "\\?", "\\q"]
_OCTALS = ["\\1", "\\01", "\\101", "\\177", "\\303\\251", "\\400", "\\777", "\\0012"]
_NOT_UTF8 = ["\\200", "\\377"]  # bytes that are no UTF-8: classad2 cannot always hand them to Python
_CHARS = [
    st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"\\'),
    st.characters(min_codepoint=0x80, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
    st.sampled_from(["é", "ü", "漢", "😀", "\t", "'", "[", "]", ";", "//", "/*"]),
    st.sampled_from(_ESCAPES + _OCTALS),
]
strings = st.lists(st.one_of(*_CHARS, st.sampled_from(_NOT_UTF8)), max_size=8).map(lambda p: '"' + "".join(p) + '"')
utf8_strings = st.lists(st.one_of(*_CHARS), max_size=8).map(lambda p: '"' + "".join(p) + '"')

keywords = st.sampled_from(["true", "false", "undefined", "error", "TRUE", "False", "UNDEFINED", "Error"])

abs_rel_times = st.one_of(
    st.integers(min_value=-(10**10), max_value=10**10).map(lambda n: f"absTime({n})"),
    st.integers(min_value=-(10**7), max_value=10**7).map(lambda n: f"relTime({n})"),
    st.sampled_from(['absTime("2024-02-29T12:30:00+01:00")', 'relTime("1+02:03:04")', "relTime(1.5)"]),
)

names = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(["'a'", "'a b'", "'true'", "'1x'", "'é'", "parent"]),
)
scoped_names = st.builds(lambda s, n: f"{s}.{n}", st.sampled_from(SCOPES), st.sampled_from(NAMES))

literals = st.one_of(integers, negative_integers, reals, strings, keywords)
utf8_literals = st.one_of(integers, negative_integers, reals, utf8_strings, keywords)

BINARY = [
    "||", "&&", "|", "^", "&", "==", "!=", "=?=", "=!=", "is", "isnt",
    "<", "<=", ">", ">=", "<<", ">>", ">>>", "+", "-", "*", "/", "%",
]  # fmt: skip
UNARY = ["-", "+", "!", "~"]
SPACES = st.sampled_from([" ", " ", "", "\n", "  \t"])


def _binary(draw: st.DrawFn, sub: st.SearchStrategy[str]) -> str:
    op = draw(st.sampled_from(BINARY))
    left, right = draw(sub), draw(sub)
    sep = " " if op in ("is", "isnt") else draw(SPACES)
    return f"{left}{sep}{op}{sep}{right}"


def expressions(
    functions: dict[str, tuple[int, int]] | None = None, max_leaves: int = 10, utf8: bool = False
) -> st.SearchStrategy[str]:
    """Random expressions over every literal type, operator and reference form.

    ``utf8`` keeps string literals valid UTF-8 (no ``"\\200"``).
    """
    fns = functions if functions is not None else {}
    lits = utf8_literals if utf8 else literals
    base = st.one_of(lits, lits, names, scoped_names)
    if any(f in fns for f in ("absTime", "relTime")):
        base = st.one_of(base, abs_rel_times)

    def extend(sub: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        options = [
            st.composite(lambda draw: _binary(draw, sub))(),
            st.builds(lambda op, x: f"{op}{x}", st.sampled_from(UNARY), sub),
            st.builds(lambda op, x: f"{op} {x}", st.sampled_from(UNARY), sub),
            st.builds(lambda x: f"({x})", sub),
            st.builds(lambda c, t, e: f"{c} ? {t} : {e}", sub, sub, sub),
            st.builds(lambda c, e: f"{c} ?: {e}", sub, sub),
            st.lists(sub, max_size=4).map(lambda xs: "{" + ", ".join(xs) + "}"),
            st.builds(lambda b, i: f"{b}[{i}]", sub, sub),
            st.builds(lambda b, n: f"{b}.{n}", sub, st.sampled_from(NAMES)),
            st.lists(st.tuples(st.sampled_from(NAMES), sub), max_size=3).map(
                lambda kv: "[" + "; ".join(f"{k} = {v}" for k, v in kv) + "]"
            ),
        ]
        if fns:
            options.append(
                st.sampled_from(sorted(fns)).flatmap(
                    lambda f: st.lists(sub, min_size=fns[f][0], max_size=fns[f][1]).map(
                        lambda args: f + "(" + ", ".join(args) + ")"
                    )
                )
            )
        return st.one_of(options)

    return st.recursive(base, extend, max_leaves=max_leaves)


def ads(functions: dict[str, tuple[int, int]] | None = None, max_attrs: int = 5) -> st.SearchStrategy[str]:
    """Ads (new syntax) whose attributes refer to one another, cycles and self references included."""
    value = expressions(functions, max_leaves=5)
    attr = st.tuples(st.sampled_from(NAMES), value)
    return st.lists(attr, max_size=max_attrs).map(lambda kv: "[" + "; ".join(f"{k} = {v}" for k, v in kv) + "]")


def match_ads(functions: dict[str, tuple[int, int]] | None = None) -> st.SearchStrategy[str]:
    """Ads with a Requirements expression over MY/TARGET/unscoped names, for matchmaking."""
    value = expressions(functions, max_leaves=6, utf8=True)
    return st.builds(
        lambda req, extra: "[Requirements = " + req + "; " + "; ".join(f"{k} = {v}" for k, v in extra) + "]",
        value,
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "X", "Rank"]), value), max_size=4),
    )
