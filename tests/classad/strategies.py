"""Hypothesis strategies producing ClassAd source text.

Expressions are generated as text (not trees) so both libraries parse exactly the same
input. ``expressions()`` mixes well-typed and ill-typed operands freely: every literal
type, every operator, attribute references (unscoped, ``MY.``/``TARGET.``/``PARENT.``,
absolute ``.name``, selections, subscripts, names that refer to themselves), nested ads
and lists written with every separator form (including the ones that must be refused
alike, ``{1,}`` or ``[a = 1, b = 2]``), and calls: a few core functions, or with
``all_functions()`` every built-in with wrong arities and ``edge_literals`` arguments.
``ads()`` builds ads whose attributes refer to one another, cycles included;
``old_ads()`` the old one-attribute-per-line form.

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


# Built-ins left to their own family tests: those whose result depends on the clock, the
# process or chance, and the time constructors and splitters, whose known differences
# (a malformed time string is a syntax error there; C's garbage for years past 2^31) those
# tests tolerate by name.
_NOT_DIFFERENTIAL = {
    "time", "currenttime", "daytime", "random", "timezoneoffset", "userhome", "debug",
    "abstime", "reltime", "splittime", "formattime",
}  # fmt: skip


def all_functions() -> dict[str, tuple[int, int]]:
    """Every built-in of htcpool's registry (but the clock's and chance's), with an arity
    range one wider than the function takes on each side, so wrong arities are drawn too.
    Functions that take any number of arguments are called with up to four."""
    from htcpool.classad.builtins import REGISTRY, load_all

    load_all()
    out: dict[str, tuple[int, int]] = {}
    for key, b in REGISTRY.items():
        if key in _NOT_DIFFERENTIAL:
            continue
        top = b.max_args if b.max_args is not None else 3
        out[b.name] = (max(0, b.min_args - 1), top + 1)
    return out


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

# edge arguments for built-ins: empty, blank and non-ASCII strings, separators, user and
# slot names, numbers at the 32- and 64-bit edges, zero-led negatives, odd time values
edge_literals = st.sampled_from(
    [
        '""', '" "', '"a"', '"A,b, c"', '"x@y"', '"@"', '"a@b@c"', '"\\303\\251"', '"漢字"', '"😀"',
        '"a;b"', '"slot1_2@h"', '"ab.*"', '"[a-"', '"%Y %j"', '"1.5"', '" 7 "', '"8.1.2"', '"-05"',
        "2147483648", "4294967297", "-2147483649", "-05", "-0x1f", "1e300", "-1e-300",
        "relTime(1.5)", "relTime(-3e9)", "absTime(0)", "absTime(-1)", "{}", "[]", "{{}}", "[a = [b = 1;];]",
    ]
)  # fmt: skip

names = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(["'a'", "'a b'", "'true'", "'1x'", "'é'", "parent"]),
)
scoped_names = st.one_of(
    st.builds(lambda s, n: f"{s}.{n}", st.sampled_from(SCOPES), st.sampled_from(NAMES)),
    st.builds(lambda n: f".{n}", st.sampled_from(NAMES)),  # absolute: from the outermost ad
    st.builds(lambda s, n: f"PARENT.{s}.{n}", st.sampled_from(["PARENT", "MY", "a"]), st.sampled_from(NAMES)),
)

# The separators an ad may be written with: between attributes one or more ';' (spaced
# or not), before the first some stray ';', after the last a trailing run. '[;]' and
# ',' between attributes do not parse, and are drawn too, rarely, so both must refuse.
_AD_SEPARATORS = st.sampled_from(["; ", ";", " ; ", ";; ", "; ;"] * 4 + [", ", " "])
_AD_LEADING = st.sampled_from([""] * 6 + [";", "; ", ";;"])
_AD_TRAILING = st.sampled_from([""] * 3 + [";", "; ", ";;", " ; ;", ","])
_LIST_SEPARATORS = st.sampled_from([", ", ",", " , "] * 6 + [",, ", "; "])
_LIST_TRAILING = st.sampled_from([""] * 12 + [","])


def ad_literal(
    draw: st.DrawFn, names: st.SearchStrategy[str], value: st.SearchStrategy[str], max_attrs: int = 3, valid: bool = False
) -> str:
    """An ad literal ``[...]`` of ``value`` attributes, written with any separator form
    (``valid``: only the forms that parse)."""
    attrs = draw(st.lists(st.tuples(names, value), max_size=max_attrs))
    text = draw(_AD_LEADING) if attrs or not valid else ""
    for i, (k, v) in enumerate(attrs):
        sep = draw(_AD_SEPARATORS)
        text += (sep if not valid or ";" in sep else "; ") if i else ""
        text += f"{k} = {v}"
    if attrs:
        end = draw(_AD_TRAILING)
        text += end if not valid or "," not in end else ";"
    return "[" + text + "]"


def list_literal(draw: st.DrawFn, value: st.SearchStrategy[str]) -> str:
    """A list literal ``{...}``, written with any separator form (``{1,}`` refused alike)."""
    items = draw(st.lists(value, max_size=4))
    text = "".join((draw(_LIST_SEPARATORS) if i else "") + v for i, v in enumerate(items))
    return "{" + text + (draw(_LIST_TRAILING) if items else "") + "}"

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
    functions: dict[str, tuple[int, int]] | None = None,
    max_leaves: int = 10,
    utf8: bool = False,
    edge_arguments: bool = False,
) -> st.SearchStrategy[str]:
    """Random expressions over every literal type, operator and reference form.

    ``utf8`` keeps string literals valid UTF-8 (no ``"\\200"``); ``edge_arguments`` also
    passes functions the edge values of ``edge_literals``.
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
            st.composite(lambda draw: list_literal(draw, sub))(),
            st.builds(lambda b, i: f"{b}[{i}]", sub, sub),
            st.builds(lambda b, n: f"{b}.{n}", sub, st.sampled_from(NAMES)),
            st.composite(lambda draw: ad_literal(draw, st.sampled_from(NAMES), sub))(),
        ]
        if fns:
            arg = st.one_of(sub, sub, edge_literals) if edge_arguments else sub
            options.append(
                st.sampled_from(sorted(fns)).flatmap(
                    lambda f: st.lists(arg, min_size=fns[f][0], max_size=fns[f][1]).map(
                        lambda args: f + "(" + ", ".join(args) + ")"
                    )
                )
            )
        return st.one_of(options)

    return st.recursive(base, extend, max_leaves=max_leaves)


def ads(functions: dict[str, tuple[int, int]] | None = None, max_attrs: int = 5) -> st.SearchStrategy[str]:
    """Ads (new syntax, every separator form that parses) whose attributes refer to one
    another, cycles and self references included."""
    value = expressions(functions, max_leaves=5)
    return st.composite(lambda draw: ad_literal(draw, st.sampled_from(NAMES), value, max_attrs, valid=True))()


_OLD_ENDS = st.sampled_from([""] * 6 + [";", " ;", ";;", "  "])
_OLD_EXTRA = st.sampled_from(["# a comment", "   # indented comment", "  "])


def _one_line_expression(text: str) -> bool:
    """Whether ``text`` is one line and parses: HTCondor ends an old-form ad silently at a
    line it cannot read, where htcpool refuses the text (a deliberate difference). A
    backslash before a quote is left out too: in the old form it escapes the quote unless
    the quote ends the line, so the ``;`` this generator may add would make the line
    unreadable."""
    from htcpool.classad.errors import ClassAdParseError
    from htcpool.classad.parser import parse_expression

    if "\n" in text or "\r" in text or '\\"' in text:
        return False
    try:
        parse_expression(text)
    except ClassAdParseError:
        return False
    return True


def old_ads(functions: dict[str, tuple[int, int]] | None = None, max_attrs: int = 4) -> st.SearchStrategy[str]:
    """Text of one or more ads in the old form: ``Name = expr`` lines (an expression may end
    with ``;``), comment lines, blank lines between ads. Expressions are valid UTF-8 and on
    one line; HTCondor reads a string's backslashes the old way here."""
    value = expressions(functions, max_leaves=5, utf8=True).filter(_one_line_expression)

    @st.composite
    def one(draw: st.DrawFn) -> str:
        lines = []
        for name, v in draw(st.lists(st.tuples(st.sampled_from(NAMES), value), min_size=1, max_size=max_attrs)):
            lines.append(f"{name} = {v}{draw(_OLD_ENDS)}")
            if draw(st.integers(0, 9)) == 0:
                lines.append(draw(_OLD_EXTRA))
        return "\n".join(lines)

    return st.lists(one(), min_size=1, max_size=3).map(lambda blocks: "\n\n".join(blocks) + "\n")


def match_ads(functions: dict[str, tuple[int, int]] | None = None) -> st.SearchStrategy[str]:
    """Ads with a Requirements expression over MY/TARGET/unscoped names, for matchmaking."""
    value = expressions(functions, max_leaves=6, utf8=True)
    return st.builds(
        lambda req, extra: "[Requirements = " + req + "; " + "; ".join(f"{k} = {v}" for k, v in extra) + "]",
        value,
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "X", "Rank"]), value), max_size=4),
    )
