"""Regular expression functions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, lists, scalars, strings

NAMES = ['regexp', 'regexpMember', 'regexps', 'replace', 'replaceall']

ROWS = [
    'regexp("a.c", "abc")',
    'regexp("A.C", "abc")',
    'regexp("A.C", "abc", "i")',
    'regexp("^b", "a\\nb")',
    'regexp("^b", "a\\nb", "m")',
    'regexp("a.b", "a\\nb")',
    'regexp("a.b", "a\\nb", "s")',
    'regexp("a b", "ab", "x")',
    'regexp("(", "a")',
    'regexp(undefined, "a")',
    'regexp("a", undefined)',
    'regexp(error, undefined)',
    'regexp(undefined, error)',
    'regexp("a", "a", undefined)',
    'regexp("a", "a", 1)',
    'regexp(1, "a")',
    'regexp("a", 1)',
    'regexp("a", "a", "q")',
    'regexp("^.$", "ä")',
    'regexp("^..$", "ä")',
    'regexp("(?<n>a)", "a")',
    'regexp("a\\\\z", "a\\n")',
    'regexp("a\\\\Z", "a\\n")',
    'regexp("a$", "a\\n")',
    'regexp("\\\\d+", "x12")',
    'regexpMember("a", {"b", "a"})',
    'regexpMember("a", {"b", undefined})',
    'regexpMember("a", {undefined, "a"})',
    'regexpMember("a", {1, "a"})',
    'regexpMember("a", {"a", 1})',
    'regexpMember("a", {})',
    'regexpMember("(", {"a"})',
    'regexpMember("(", {})',
    'regexpMember("a", "a")',
    'regexpMember("a", undefined)',
    'regexpMember(undefined, {"a"})',
    'regexpMember("A", {"a"}, "i")',
    'regexps("a(b)c", "xabcx", "[\\\\1]")',
    'regexps("a(b)c", "xabcx", "[\\\\1]", "f")',
    'regexps("a(b)c", "xyz", "[\\\\1]")',
    'regexps("a(b)c", "xyz", "[\\\\1]", "f")',
    'regexps("a(b)c", "abc", "[\\\\2]")',
    'regexps("a(b)?c", "ac", "[\\\\1]")',
    'regexps("a(b)?(c)", "ac", "[\\\\1]")',
    'regexps("a", "aaa", "b", "g")',
    'regexps("a", "aaa", "b", "gf")',
    'regexps("x*", "abc", "-", "gf")',
    'regexps("x*", "abc", "-", "g")',
    'replace("a", "banana", "o")',
    'replaceall("a", "banana", "o")',
    'replaceall("", "abc", "-")',
    'replaceall("b*", "abbc", "-")',
    'replace("(a)(n)", "banana", "\\\\2\\\\1")',
    'replaceall("(a)(n)", "banana", "\\\\2\\\\1\\\\x")',
    'replace("a", "banana", "o", "g")',
    'replaceall("A", "banana", "o", "i")',
    'replace(undefined, "a", "b")',
    'replace("a", "a", undefined)',
    'replace("a", "a", 1)',
    'replace("(", "a", "b")',
    'regexps("a", "a", "b", undefined)',
    'regexps("a", "a", "b", 2)',
    'replaceall("^", "a\\nb", ">", "m")',
    'replaceall("$", "a\\nb", "<", "m")',
    'replaceall("\\\\b", "ab cd", "|")',
    'replaceall("o", "foo", "0")',
    'regexps("(\\\\w+)@(\\\\w+)", "me@host", "\\\\2:\\\\1")',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = st.one_of(strings, strings, st.sampled_from(['"a+"', '"(a)(b)?"', '"^x|y$"', '"\\\\d"', '"[ab]"', '"\\\\1"', '"i"', '"g"', '"fg"', '"ims"', '"(a"']), lists, scalars)


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 4)
)
