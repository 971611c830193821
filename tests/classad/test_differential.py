"""Differential tests: htcpool against HTCondor's own ClassAd library (classad2).

Random expressions and ads (see ``strategies.py``) go through both libraries and every
observable result must agree: whether the text parses, the canonical and pretty
printing, the value (``repr`` of ``simplify()``, or a failure) with no ad, with an ad
and with a MY/TARGET pair; for ads also ``printOld``/``printJson``; for pairs of ads
``matches``/``symmetricMatch``; for the old form, ``parseAds``/``parseOne``. Every
built-in (see ``strategies.all_functions``) is called with wrong arities and edge
arguments, nested in random expressions.

The CI run uses a fixed seed (``derandomize=True``). ``HTCPOOL_DIFF_EXAMPLES=N`` sets
the number of examples per test; ``-m slow`` runs the long randomized variant.
Every disagreement found here is kept as a named case in ``test_regressions.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.classad import strategies as S
from tests.classad.reference import (
    NOT_UTF8,
    ad_outcome,
    examples,
    expr_outcome,
    match_outcome,
    old_ads_outcome,
    requires_reference,
)

pytestmark = requires_reference

FUNCTIONS = S.available_functions()
EXPR = S.expressions(FUNCTIONS)
AD = S.ads(FUNCTIONS)
MATCH_AD = S.match_ads(FUNCTIONS)
BUILTIN_EXPR = S.expressions(S.all_functions(), max_leaves=6, edge_arguments=True)
OLD_ADS = S.old_ads(FUNCTIONS)

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def ci(n: int) -> settings:
    """A fixed-seed run of ``n`` examples (``HTCPOOL_DIFF_EXAMPLES`` overrides ``n``)."""
    return settings(
        derandomize=True, deadline=None, database=None, max_examples=examples(n), suppress_health_check=_HEALTH
    )


def _same_expr(text: str, scope: str | None = None, target: str | None = None) -> None:
    assert expr_outcome("ours", text, scope, target) == expr_outcome("ref", text, scope, target)


@ci(2000)
@given(EXPR)
def test_expressions_without_an_ad(text: str) -> None:
    _same_expr(text)


@ci(1500)
@given(EXPR, AD)
def test_expressions_in_an_ad(text: str, ad: str) -> None:
    _same_expr(text, ad)


@ci(1000)
@given(EXPR, AD, AD)
def test_expressions_with_my_and_target(text: str, my: str, target: str) -> None:
    _same_expr(text, my, target)


@ci(1500)
@given(AD)
def test_ads_print_alike(ad: str) -> None:
    expected = ad_outcome("ref", ad)
    assume(expected != (NOT_UTF8,))
    assert ad_outcome("ours", ad) == expected


@ci(1000)
@given(BUILTIN_EXPR)
def test_every_builtin_with_edge_arguments(text: str) -> None:
    """Every built-in, with wrong arities and edge arguments, nested in any expression."""
    _same_expr(text)


@ci(150)
@given(BUILTIN_EXPR, AD)
def test_every_builtin_in_an_ad(text: str, ad: str) -> None:
    _same_expr(text, ad)


@ci(200)
@given(OLD_ADS, st.sampled_from(["Old", "Auto"]))
def test_old_form_ads(text: str, parser: str) -> None:
    """The old form, one ``Name = expr`` a line, several ads separated by blank lines."""
    expected = old_ads_outcome("ref", text, parser)
    assume(expected != (NOT_UTF8,))
    assert old_ads_outcome("ours", text, parser) == expected


@ci(1000)
@given(MATCH_AD, MATCH_AD)
def test_matchmaking(left: str, right: str) -> None:
    expected = match_outcome("ref", left, right)
    assume(expected != (NOT_UTF8,))
    assert match_outcome("ours", left, right) == expected


@ci(1000)
@given(st.lists(st.sampled_from(S.BINARY + S.UNARY + ["(", ")", "[", "]", "{", "}", ",", ";", ".", "?", ":", "=", "x", "1", '"s"', "1.5", "true"]), max_size=12))
def test_token_soup(tokens: list[str]) -> None:
    """Arbitrary token sequences: mostly malformed, and both libraries must refuse alike."""
    text = " ".join(tokens)
    if "]" in text or "//" in text or "/*" in text:
        return  # the reference's [expression = TEXT] wrapping cannot parse these faithfully
    _same_expr(text)


@pytest.mark.slow
@settings(deadline=None, database=None, max_examples=examples(20000), suppress_health_check=list(HealthCheck))
@given(EXPR, AD, AD)
def test_long_random_run(text: str, my: str, target: str) -> None:
    _same_expr(text)
    _same_expr(text, my)
    _same_expr(text, my, target)
