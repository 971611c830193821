"""The two reference tests every built-in family file shares.

Each ``test_builtins_<family>.py`` keeps its data (``ROWS``, ``NAMES``, ``ARGS``) and
binds the pair this builds under the usual names, so test ids stay
``test_row_matches_reference[<row>]`` and ``test_generated_calls_match_reference``::

    test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
        ROWS, calls(NAMES, ARGS, 3)
    )
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import seed as pin_seed
from hypothesis import strategies as st

from tests.classad.test_builtins_reference import same

# The seed every family's generated calls were drawn with while each file held its own
# copy of the test: ``derandomize`` seeds from a digest of the test's source, which those
# copies shared. Pinning it keeps the same 250 (or ``max_examples``) calls per family,
# whatever this module's source looks like.
SEED = 0xF3D12834014026316F7356F98272D9BC6A1C4491CBFA8F4764097BE178763B491E18B036C90E1ACC29BA9C051BB8E863

Tolerated = Callable[[str, str, str], bool]
"""``(text, mine, theirs) -> True`` for a known, documented difference of a generated call."""


def _mismatch(text: str, mine: str, theirs: str) -> str:
    return f"{text}\n  ours:     {mine}\n  classad2: {theirs}"


def reference_tests(
    rows: Sequence[str],
    generated: st.SearchStrategy[str],
    *,
    max_examples: int = 250,
    tolerated: Tolerated | None = None,
    seed: int = SEED,
) -> tuple[Callable[[str], None], Callable[..., None]]:
    """A parametrized test of every row and a hypothesis test of generated calls.

    Both compare ours with ``classad2`` through ``same``; ``tolerated`` (generated
    calls only) names the differences a family accepts, and nothing else is let through.
    This module is not a test file, so pytest does not rewrite its asserts: the
    messages carry the expression and both values instead.
    """

    @pytest.mark.parametrize("text", rows)
    def test_row_matches_reference(text: str) -> None:
        mine, theirs = same(text)
        assert mine == theirs, _mismatch(text, mine, theirs)

    @pin_seed(seed)
    @settings(derandomize=True, max_examples=max_examples, deadline=None)
    @given(generated)
    def test_generated_calls_match_reference(text: str) -> None:
        mine, theirs = same(text)
        if tolerated is not None and tolerated(text, mine, theirs):
            return
        assert mine == theirs, _mismatch(text, mine, theirs)

    return test_row_matches_reference, test_generated_calls_match_reference
