"""String-list functions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, scalars, strings

NAMES = ['stringListSize', 'stringListSum', 'stringListAvg', 'stringListMin', 'stringListMax', 'stringListMember', 'stringListIMember', 'stringListsIntersect', 'stringListSubsetMatch', 'stringListISubsetMatch', 'stringList_regexpMember']

ROWS = [
    # regressions found by generated calls: 32-bit version numbers, separator-only
    # lists, and relative times printed through C's (int)
    'stringListSubsetMatch(" , ", "")',
    'stringListSubsetMatch(" ", undefined)',
    'stringListISubsetMatch(",", ",")',
    'stringListSize("a, b, c")',
    'stringListSize("a,,b")',
    'stringListSize(" a ; b ", ";")',
    'stringListSize("")',
    'stringListSize(undefined)',
    'stringListSize(1)',
    'stringListSize("a b", "")',
    'stringListSize("a b", 1)',
    'stringListSize("a,b", undefined)',
    'stringListSize(" , ")',
    'stringListSum("1,2,3")',
    'stringListSum("1,2.5")',
    'stringListSum("")',
    'stringListSum("1,x")',
    'stringListSum("1e2")',
    'stringListSum("+1,-2")',
    'stringListSum(" 1 , 2 ")',
    'stringListSum(undefined)',
    'stringListAvg("1,2")',
    'stringListAvg("")',
    'stringListAvg("1,2,4")',
    'stringListMin("3,1,2")',
    'stringListMin("")',
    'stringListMax("-1,-2")',
    'stringListMax("-1.5,-2")',
    'stringListMin("1e40")',
    'stringListMax("1,2.5")',
    'stringListMax("0x10")',
    'stringListSum("inf")',
    'stringListSum("1;2", ";")',
    'stringListMember("b", "a, b, c")',
    'stringListMember("B", "a, b, c")',
    'stringListIMember("B", "a, b, c")',
    'stringListMember("b", undefined)',
    'stringListMember(undefined, "a")',
    'stringListMember(1, "1")',
    'stringListMember("b", "a;b", ";")',
    'stringListMember("", "")',
    'stringListMember(" b", "a, b")',
    'stringListsIntersect("a,b", "b,c")',
    'stringListsIntersect("a,b", "c,d")',
    'stringListsIntersect("a, b", "c, b")',
    'stringListsIntersect("a ,b", "b")',
    'stringListsIntersect(undefined, "a")',
    'stringListsIntersect("a", error)',
    'stringListsIntersect(1, "a")',
    'stringListsIntersect("a;b", "b", ";")',
    'stringListsIntersect("a;b", "b", undefined)',
    'stringListsIntersect("a", "a", 1)',
    'stringListsIntersect("", "")',
    'stringListSubsetMatch("a,b", "b,a,c")',
    'stringListSubsetMatch("a,d", "b,a,c")',
    'stringListSubsetMatch(undefined, "a")',
    'stringListSubsetMatch("", "a")',
    'stringListSubsetMatch("a", undefined)',
    'stringListSubsetMatch("", undefined)',
    'stringListSubsetMatch(undefined, undefined)',
    'stringListSubsetMatch(1, "a")',
    'stringListSubsetMatch("a", 1)',
    'stringListSubsetMatch(undefined, 1)',
    'stringListSubsetMatch("A", "a")',
    'stringListISubsetMatch("A", "a")',
    'stringListSubsetMatch("a;b", "b;a", ";")',
    'stringListSubsetMatch("a", "a", undefined)',
    'stringListSubsetMatch(error, "a")',
    'stringList_regexpMember("^b", "a, b")',
    'stringList_regexpMember("^c", "a, b")',
    'stringList_regexpMember("^B", "a, b", ", ", "i")',
    'stringList_regexpMember("(", "a")',
    'stringList_regexpMember("(", "")',
    'stringList_regexpMember("a", "")',
    'stringList_regexpMember("a", undefined)',
    'stringList_regexpMember(undefined, "a")',
    'stringList_regexpMember("b", "a;b", ";")',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = st.one_of(strings, st.sampled_from(['"1, 2, 3"', '"a,b;c"', '"1.5 -2 x"', '";"', '""', '" , "', '"A,b"', '"^a"']), scalars)


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 4)
)
