"""``userHome`` and ``userMap``: checked against ``classad2`` where no user is involved,
and against injected providers where one is."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from htcpool.classad import EvalContext
from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, ours, strings

NAMES = ["userHome", "userMap"]

# The reference reads the real password database; these names exist on no host.
ROWS = [
    'userHome(undefined)',
    'userHome(undefined, "/d")',
    'userHome(1)',
    'userHome(1, "/d")',
    'userHome("nosuchuser", "")',
    'userHome("nosuchuser")',
    'userHome("nosuchuser", "/x")',
    'userMap("x", "y")',
    'userMap("x", "y", "z")',
    'userMap("x", "y", "z", "w")',
    'userMap("x", undefined)',
    'userMap(1, "y")',
    'userMap("x", "y", "z", 1)',
    *(f"{n}()" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]


# Generated names carry a suffix no account has, so the reference never finds a user.
ARGS = st.one_of(strings.map(lambda s: s[:-1] + 'zq_nouser"'), st.sampled_from(["undefined", "error", "1", '""']))

test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 4), max_examples=100
)


class _Maps:
    def map_groups(self, map_set: str, user: str) -> list[str] | None:
        if map_set != "Groups":
            return None
        return {"alice": ["physics", "chem"], "bob": []}.get(user)


_HOSTED = EvalContext(user_home={"alice": "/home/alice"}.get, user_maps=_Maps())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('userHome("alice")', '"/home/alice"'),
        ('userHome("alice", "/tmp")', '"/home/alice"'),
        ('userHome("carol")', "undefined"),
        ('userHome("carol", "/tmp")', '"/tmp"'),
        ('userHome("carol", "")', "undefined"),
        ("userHome(1)", "error"),
        ('userMap("Groups", "alice")', '"physics,chem"'),
        ('userMap("Groups", "alice", "CHEM")', '"chem"'),
        ('userMap("Groups", "alice", "bio")', '"physics"'),
        ('userMap("Groups", "bob")', '""'),
        ('userMap("Groups", "bob", "x")', "undefined"),
        ('userMap("Groups", "bob", "x", "nogroup")', '"nogroup"'),
        ('userMap("Groups", "carol")', "undefined"),
        ('userMap("Other", "alice", "x", "d")', '"d"'),
    ],
)
def test_providers_from_the_context(text: str, expected: str) -> None:
    assert ours(text, _HOSTED) == expected
