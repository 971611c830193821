"""String functions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, values

NAMES = ['strcat', 'join', 'substr', 'strcmp', 'stricmp', 'toUpper', 'toLower']

ROWS = [
    'strcat(1, 2.5)',
    'strcat()',
    'strcat(undefined, error)',
    'strcat(error, undefined)',
    'strcat("a", {1, "b"}, [a = 1])',
    'strcat(absTime(0))',
    'join(", ", "a", "b", "c")',
    'join(split("a b c"))',
    'join(";", split("a b c"))',
    'join(";", undefined, "a")',
    'join(undefined, "a")',
    'join(";")',
    'join()',
    'join({1, 2})',
    'join(1, 2, 3)',
    'join(1, {2, 3})',
    'join(";", {1, undefined})',
    'join({})',
    'substr("abcdef", 2)',
    'substr("abcdef", -2)',
    'substr("abcdef", 2, 2)',
    'substr("abcdef", 2, -1)',
    'substr("abcdef", 10)',
    'substr("abcdef", -10)',
    'substr("abcdef", -10, 2)',
    'substr("abcdef", 1, 0)',
    'substr("abcdef", 1, 100)',
    'substr("abcdef", undefined)',
    'substr(1, 1)',
    'substr("abc", 1.0)',
    'substr("abc", true)',
    'substr("abc", 4294967297)',
    'substr("äbc", 1)',
    'strcmp("a", "b")',
    'strcmp("b", "a")',
    'strcmp("a", "a")',
    'strcmp("A", "a")',
    'stricmp("A", "a")',
    'strcmp(1, "1")',
    'strcmp(undefined, "a")',
    'strcmp(error, undefined)',
    'strcmp(undefined, error)',
    'stricmp("ab", "AC")',
    'toUpper("abc")',
    'toLower("ABC")',
    'toUpper(undefined)',
    'toUpper(error)',
    'toUpper({1})',
    'toLower(true)',
    'substr("äbc", 1)',
    'size(substr("äbc", 0, 1))',
    'toLower("ÄB")',
    'strcmp("ä", "z")',
    'strcat("a", "ä", 1)',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = values


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 4)
)
