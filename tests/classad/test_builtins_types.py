"""Type predicates and conversions, each row checked against HTCondor's ``classad2``."""

from __future__ import annotations

from hypothesis import given, settings

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, same, scalars, values

NAMES = [
    "isUndefined", "isError", "isString", "isInteger", "isReal", "isList", "isClassAd",
    "isBoolean", "isAbstime", "isReltime", "int", "real", "string", "bool",
]  # fmt: skip

ROWS = [
    *(f"{n}({a})" for n in NAMES for a in ["undefined", "error", "1", "1.5", '"s"', "true", "{1}", "[a=1]", "absTime(0)", "relTime(5)"]),
    *(f"{n}()" for n in NAMES),
    *(f"{n}(1, 2)" for n in NAMES),
    'int("12abc")', 'int("010")', 'int("0x")', 'int("  -0x1F")', 'int("1e3")', 'int("")',
    'int("99999999999999999999")', 'int("9223372036854775807")', 'int("9007199254740993")',
    'int(" 12.7")', 'int("nan")', 'int("-inf")', "int(1e30)", "int(relTime(5.7))", 'int("+5")', 'int("  +")',
    'real("1e3x")', 'real("0x10")', 'real(" .5e")', 'real("0x1p3")', 'real("0x.8")', 'real("infinity")',
    'real("nanx")', 'real("1e400")', 'real("  -nan")', 'real("abc")', 'real("")', 'real("1e-400")',
    'bool("TRUE")', 'bool("yes")', "bool(relTime(0.5))", "bool(0.0)", "bool(2)",
    "string(1.5)", "string({1, 2})", "string([a = 1])", "string(absTime(0))", "string(relTime(5))",
    "string(-0.0)", 'string(real("NaN"))', 'isBoolean(1)', "ISINTEGER(1)",
]  # fmt: skip


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, values, 2), max_examples=300
)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(scalars)
def test_string_to_number_conversions(arg: str) -> None:
    for text in (f"int(string({arg}))", f"real(string({arg}))", f"bool(string({arg}))"):
        mine, theirs = same(text)
        assert mine == theirs, text
