"""Numeric functions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, values

NAMES = ['floor', 'ceiling', 'ceil', 'round', 'pow', 'quantize']

ROWS = [
    # a zero from C's ceil keeps its sign: the step's sign then decides the result's
    'quantize(0, -1.0)',
    'quantize(-0.2, 1.0)',
    'quantize(-1.5, 2.5)',
    'floor(1.5)',
    'floor(-1.5)',
    'floor("2.5")',
    'floor(undefined)',
    'floor(true)',
    'floor(1e30)',
    'round(2.5)',
    'round(3.5)',
    'round(-2.5)',
    'round(0.49999999999999994)',
    'ceiling(1.2)',
    'ceil(1.2)',
    'ceiling(-1.2)',
    'floor(relTime(5.5))',
    'floor(absTime(5))',
    'floor({})',
    'floor(error)',
    'floor(7)',
    'floor()',
    'floor(1, 2)',
    'pow(2,10)',
    'pow(2,-1)',
    'pow(2,0.5)',
    'pow(0,0)',
    'pow(0.0,0.0)',
    'pow(-8, 1.0/3)',
    'pow(10, 20)',
    'pow(0, -1)',
    'pow("2", 2)',
    'pow(undefined, 2)',
    'pow(true, 2)',
    'pow(-3, 3)',
    'pow(2)',
    'quantize(3, 8)',
    'quantize(3, 2)',
    'quantize(0, 4)',
    'quantize(1.5, 6.8)',
    'quantize(6.8, 1.2)',
    'quantize(10, 5.1)',
    'quantize(0, {4})',
    'quantize(2, {1, 2, "A"})',
    'quantize(3, {1, 2, 0.5})',
    'quantize(2.7, {1, 2, 0.5})',
    'quantize(3, {1, 2, "A"})',
    'quantize(3, {})',
    'quantize(3.5, 0)',
    'quantize(-3, 2)',
    'quantize(3, undefined)',
    'quantize(undefined, 3)',
    'quantize("7", 3)',
    'quantize(7, "3")',
    'quantize(7, true)',
    'quantize(true, 3)',
    'random("x")',
    'random(undefined)',
    'isInteger(random(10))',
    'isReal(random())',
    'random(1,2)',
    'random(1)',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = values


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 2)
)


def test_random_draws_from_a_generator_seeded_on_first_use() -> None:
    """Each evaluation context's ``random()`` numbers are those of ``random.Random(0)``; the
    generator is seeded only when a number is drawn (contexts are made by the thousand)."""
    import random

    from htcpool.classad import ClassAd, EvalContext, ExprTree
    from htcpool.classad.context import LazyRandom

    context = EvalContext()
    assert isinstance(context.rng, LazyRandom) and not context.rng.seeded
    ad = ClassAd({"A": 1})
    drawn = [ExprTree(text).evaluate(ad, None, context) for text in ("random(1000)",) * 3 + ("random()",)]
    reference = random.Random(0)
    assert drawn == [reference.getrandbits(31) % 1000 for _ in range(3)] + [reference.random()]
    assert context.rng.seeded
