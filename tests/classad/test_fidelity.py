"""Issue 13 item 8: built-in edge inputs and the old form, pinned to HTCondor's answers,
and the places where htcpool differs from HTCondor on purpose.

Each row holds an input and the answer HTCondor's own library (classad2) gave for it,
so the rows run without the reference installed; with it, a second test checks that
the table still says what classad2 says. The deliberate differences are tests of
htcpool's behaviour, each with a check (reference installed) that HTCondor still
answers otherwise, so a change on either side shows up. docs/classad.md lists them.
"""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAdParseError, ParserType, parseAds
from tests.classad.reference import old_ads_outcome, requires_reference
from tests.classad.test_builtins_reference import ours, reference

# (call, classad2's value) for inputs where htcpool used to answer otherwise
BUILTINS = [
    # V1 environments: a leading punctuation character names the separator, newlines
    # separate too, white space before an entry is dropped
    ('envV1ToV2(" ")', '""'),
    ('envV1ToV2("@;a=1")', '";a=1"'),
    ('envV1ToV2("|a=1|b=2")', '"a=1 b=2"'),
    ('envV1ToV2(" x=1 ; y=2")', '"x=1\' \' y=2"'),
    ('envV1ToV2("a=1\\nb=2")', '"a=1 b=2"'),
    ('envV1ToV2("a=x\\ny")', "error"),
    ('envV1ToV2(" =1")', "error"),
    # substr: an offset before the start is the start, before the length is worked out
    ('substr("abc", -5, -1)', '"ab"'),
    ('substr("i", 2147483648, -1)', '""'),
    ('substr("abc", -4, -3)', '""'),
    # string lists: the type of the second list is checked first; both UNDEFINED is UNDEFINED
    ('stringListSubsetMatch(" ", 1)', "error"),
    ('stringListISubsetMatch(",", error)', "error"),
    ("stringListMember(undefined, undefined)", "undefined"),
    ('stringListIMember(undefined, "a")', "false"),
    # versions compare bytes as C's signed char
    ('versioncmp(100, "漢字")', "75"),
    ('versionLT("漢字", "a")', "true"),
    ('version_in_range("é", "a", "z")', "false"),
    # min/max of one value return it as it is
    ("min({false})", "false"),
    ("max({undefined, true})", "true"),
    ("min({true, false})", "0"),
    # a relative time is a number through C's (int) of its seconds
    ("real(relTime(1.7))", "1.000000000000000E+00"),
    ("ceil(relTime(1.5))", "1"),
    ("int(relTime(3e9))", "-2147483648"),
    # year 0, which Python's datetime cannot hold
    ('absTime("0000-06-01T00:00:00")', 'absTime("0-06-01T00:00:00-00:00")'),
    # splitUserName and splitSlotName on edge input (these always agreed; kept as a guard)
    ('splitUserName("a@b@c")', '{ "a","b@c" }'),
    ('splitUserName("")', '{ "","" }'),
    ("splitUserName(1)", "error"),
    ('splitUserName("a", "b")', "error"),
    ('splitSlotName("slot1_2@h")', '{ "slot1_2","h" }'),
    ('splitUserName("ä@€")', '{ "\\303\\244","\\342\\202\\254" }'),
]

# (old-form text, classad2's parseAds: each ad and its printOld, then parseOne)
OLD_FORM = [
    ("a = 1;\n", ("[ a = 1 ]", "a = 1\n", "[ a = 1 ]")),
    ("a = 1 ;;\nb = [x = 1;];\n", ("[ a = 1; b = [ x = 1 ] ]", "a = 1\nb = [ x = 1 ]\n", "[ a = 1; b = [ x = 1 ] ]")),
    ("a = 1\n\nb = 2;\n", ("[ a = 1 ]", "a = 1\n", "[ b = 2 ]", "b = 2\n", "[ a = 1; b = 2 ]")),
    ('a = "x\x85y"\n', ('[ a = "x\\302\\205y" ]', 'a = "x\x85y"\n', '[ a = "x\\302\\205y" ]')),
    ("a = {[b = 1;], {}};\n# c\n", ("[ a = { [ b = 1 ],{  } } ]", "a = { [ b = 1 ],{  } }\n", "[ a = { [ b = 1 ],{  } } ]")),
    # a backslash before the quote that ends the line is an ordinary character
    ('a = "C:\\dir\\"\n', ('[ a = "C:\\\\dir\\\\" ]', 'a = "C:\\dir\\"\n', '[ a = "C:\\\\dir\\\\" ]')),
]


@pytest.mark.parametrize(("text", "expected"), BUILTINS)
def test_builtin_edge_input(text: str, expected: str) -> None:
    assert ours(text) == expected


@requires_reference
@pytest.mark.parametrize(("text", "expected"), BUILTINS)
def test_builtin_table_matches_reference(text: str, expected: str) -> None:
    assert reference(text) == expected


@pytest.mark.parametrize(("text", "expected"), OLD_FORM)
def test_old_form(text: str, expected: tuple[str, ...]) -> None:
    assert old_ads_outcome("ours", text) == expected


@requires_reference
@pytest.mark.parametrize(("text", "expected"), OLD_FORM)
def test_old_form_table_matches_reference(text: str, expected: tuple[str, ...]) -> None:
    assert old_ads_outcome("ref", text) == expected


# ---------------------------------------------------------------- deliberate differences
# HTCondor ends an old-form ad silently at a line it cannot read (dropping the rest) and
# ignores text after a complete expression; htcpool refuses both, naming the line.
REFUSED_OLD_FORM = [
    ("a = 1\nh\nb = 2\n", "2:1", ("[ a = 1 ]", "a = 1\n", "[ a = 1 ]")),
    ("a = 1 2\n", "1:7", ("[ a = 1 ]", "a = 1\n", "[ a = 1 ]")),
    ('a = ("x\\")\n', "1:6", ("[  ]",)),  # the quote escaped: the string never ends
]


@pytest.mark.parametrize(("text", "where", "theirs"), REFUSED_OLD_FORM)
def test_unreadable_old_form_line_is_refused(text: str, where: str, theirs: tuple[str, ...]) -> None:
    with pytest.raises(ClassAdParseError) as e:
        list(parseAds(text, parser=ParserType.Old))
    assert str(e.value).startswith(where)


@requires_reference
@pytest.mark.parametrize(("text", "where", "theirs"), REFUSED_OLD_FORM)
def test_htcondor_reads_unreadable_old_form_line_silently(text: str, where: str, theirs: tuple[str, ...]) -> None:
    assert old_ads_outcome("ref", text) == theirs


# HTCondor refuses an old-form text that starts with a block of comments only.
READ_ANYWAY = [
    ("# c\n\na = 1\n", ("[ a = 1 ]", "a = 1\n", "[ a = 1 ]")),
]


@pytest.mark.parametrize(("text", "expected"), READ_ANYWAY)
def test_old_form_htcondor_refuses_is_read(text: str, expected: tuple[str, ...]) -> None:
    assert old_ads_outcome("ours", text) == expected


@requires_reference
@pytest.mark.parametrize(("text", "expected"), READ_ANYWAY)
def test_htcondor_refuses_these_old_forms(text: str, expected: tuple[str, ...]) -> None:
    assert old_ads_outcome("ref", text) != expected


def test_split_time_past_year_2_to_31_is_proleptic_gregorian() -> None:
    """HTCondor's C library gives unrelated (and run-to-run different) fields here."""
    assert ours("splitTime(9223372036854775807).Year") == "292277026596"
    assert ours("splitTime(-9223372036854775807).Year") == "-292277022657"
