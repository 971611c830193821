"""Version comparison: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, values

NAMES = ['versioncmp', 'versionGT', 'versionGE', 'versionLT', 'versionLE', 'versionEQ', 'version_in_range']

ROWS = [
    'versioncmp("7.9", "7.10")',
    'versioncmp("000", "00")',
    'versioncmp("01", "010")',
    'versioncmp("09", "0")',
    'versioncmp("9", "10")',
    'versioncmp("a", "b")',
    'versioncmp("abc", "abc")',
    'versioncmp(undefined, "1")',
    'versioncmp(1, 2)',
    'versioncmp(error, "1")',
    'versionGT("7.10", "7.9")',
    'versionGE("7.9", "7.9")',
    'versionLT("1.0", "1.0.1")',
    'versionLE("1.0", "1.0")',
    'versionEQ("1.0", "1.00")',
    'versionEQ("1.0", "1.0")',
    'version_in_range("8.5", "8.0", "9.0")',
    'version_in_range("8.5", "8.6", "9.0")',
    'version_in_range(undefined, "8.6", "9.0")',
    'version_in_range("1", undefined, "9.0")',
    'version_in_range(error, "8.6", "9.0")',
    'versioncmp("1.a", "1.10")',
    'versioncmp("", "1")',
    'versioncmp("x9", "x10")',
    'versioncmp("0a", "00")',
    'versioncmp("1.2.3", "1.2.10")',
    'versionLT("8.9.0", "10.0.0")',
    'version_in_range("10.0.1", "9", "10.1")',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = st.one_of(values, st.text(st.sampled_from(list("0123456789.ab-")), max_size=8).map(lambda s: '"' + s + '"'))


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 3)
)
