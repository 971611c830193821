"""The priority index names the submitters with idle jobs from its counts (no walk over the jobs):
after any run of additions, key changes, moves between submitters and removals, the names are
those of its live entries, in its order (shortest first, then by name)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from htcpool.schedd.priority import PriorityIndex

steps = st.lists(st.tuples(st.booleans(), st.sampled_from(["alice", "bob", "carol@x", "b"]),
                           st.integers(0, 5), st.integers(0, 2)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(steps=steps)
def test_submitters_are_those_of_the_live_entries(steps: list[tuple[bool, str, int, int]]) -> None:
    index = PriorityIndex()
    for add, submitter, proc, prio in steps:
        if add:
            index.add(submitter, (0, 0, -prio, 0, 0, 1, proc))
        else:
            index.discard((1, proc))
    live = {submitter for submitter, _ in index.current.values()}
    assert index.submitters() == sorted(live, key=lambda s: (len(s), s))
