"""Environment and argument strings: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, lists, scalars, strings

NAMES = ['envV1ToV2', 'mergeEnvironment', 'argsToList', 'listToArgs']

ROWS = [
    # regressions found by generated calls: 32-bit version numbers, separator-only
    # lists, and relative times printed through C's (int)
    'listToArgs({}, -9223372036854775807)',
    'listToArgs({"a"}, 4294967298)',
    'argsToList("a b", 4294967297)',
    'envV1ToV2("A=1;B=2")',
    'envV1ToV2("B=2;A=1")',
    'envV1ToV2("A=x y;B=\'q\'")',
    'envV1ToV2("A=1;;B=2")',
    'envV1ToV2("A")',
    'envV1ToV2("=1")',
    'envV1ToV2("")',
    'envV1ToV2(undefined)',
    'envV1ToV2(1)',
    'envV1ToV2("A=1;A=2")',
    'envV1ToV2("A=a\\"b")',
    'envV1ToV2("A=x  y")',
    'envV1ToV2("A=x\\ty")',
    'mergeEnvironment("A=1 B=2", "B=3")',
    'mergeEnvironment()',
    'mergeEnvironment(undefined)',
    'mergeEnvironment("A=\'x y\'")',
    'mergeEnvironment("A=1", 1)',
    'mergeEnvironment("A")',
    'mergeEnvironment("\'A=1 2\' B=3")',
    'mergeEnvironment("A=\'it\'\'s\'")',
    'mergeEnvironment("A=")',
    'mergeEnvironment("C=1 A=2 B=3")',
    'mergeEnvironment("A=1", error)',
    'mergeEnvironment("A=1=2")',
    'mergeEnvironment("A=\'x")',
    'listToArgs({"a","b c"})',
    'listToArgs({"a\'b", "", "x\\"y"})',
    'listToArgs({})',
    'listToArgs({1})',
    'listToArgs("a")',
    'listToArgs({"a"}, 1)',
    'listToArgs({"a b"}, 1)',
    'listToArgs({"a"}, 3)',
    'listToArgs({"a  b", "c\\td"})',
    'listToArgs({""}, 1)',
    'argsToList("a \'b c\'")',
    'argsToList("a b", 1)',
    'argsToList("a \'b")',
    'argsToList("")',
    'argsToList(1)',
    'argsToList(undefined)',
    'argsToList("a  b\\tc")',
    'argsToList("\'a\'\'b\' \\"x\\"")',
    'argsToList("a\'b\'c d")',
    'argsToList("\'\'")',
    'argsToList("a", undefined)',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = st.one_of(strings, st.sampled_from(['"A=1;B=2"', '"A=1 B=\'x y\'"', '"a \'b c\'"', "1", "2", '{"a", "b c"}', '{"x\'y", ""}']), scalars, lists)


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 3)
)
