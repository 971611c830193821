"""Evaluation of one ad against another, as HTCondor's matchmaking does it.

HTCondor evaluates a pair of ads inside a *match ad*: a top-level ad holding
the two ads as ``LEFT`` and ``RIGHT``, each with a context ad for a parent
(``[other = .RIGHT; target = .RIGHT; my = .LEFT; ad = .LEFT]`` for the left
one, mirrored for the right). So ``TARGET.x`` finds the other ad through the
context, ``MY.x`` and unscoped names find the ad itself, and names found
nowhere fall back to the other ad (the old-ClassAd "alternate scope"), unless
the context is strict. This module builds exactly that structure around the
two ads for the duration of one evaluation and takes it down afterwards.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.classad import ClassAd
from htcpool.classad.context import EvalContext
from htcpool.classad.errors import ClassAdEvaluationError
from htcpool.classad.nodes import EvalFailure, EvalState, Node, eval_in
from htcpool.classad.operators import bool_equiv
from htcpool.classad.parser import parse_expression, parse_new_ad


def _context_ad(this: str, other: str) -> ClassAd:
    node = parse_new_ad(f"[other=.{other};target=.{other};my=.{this};ad=.{this}]")
    return ClassAd._from_tables(dict(node.exprs), dict(node.names))


def _match_ad() -> tuple[ClassAd, ClassAd, ClassAd]:
    top_node = parse_new_ad(
        "[symmetricMatch = RIGHT.requirements && LEFT.requirements;"
        "leftMatchesRight = RIGHT.requirements;"
        "rightMatchesLeft = LEFT.requirements;"
        "leftRankValue = LEFT.rank;"
        "rightRankValue = RIGHT.rank]"
    )
    top = ClassAd._from_tables(dict(top_node.exprs), dict(top_node.names))
    left_ctx = _context_ad("LEFT", "RIGHT")
    right_ctx = _context_ad("RIGHT", "LEFT")
    top.insert_node("lCtx", left_ctx)
    top.insert_node("rCtx", right_ctx)
    left_ctx._parent = top
    right_ctx._parent = top
    return top, left_ctx, right_ctx


def evaluate_in_match(node: Node, my: ClassAd, target: ClassAd, ctx: EvalContext) -> Any:
    """Evaluate ``node`` with ``my`` as the left ad and ``target`` as the right ad."""
    top, left_ctx, right_ctx = _match_ad()
    saved = (my._parent, target._parent, my._alternate, target._alternate)
    top.insert_node("LEFT", my)
    top.insert_node("RIGHT", target)
    my._parent = left_ctx
    target._parent = right_ctx
    if not ctx.strict:
        my._alternate = target
        target._alternate = my
    try:
        s = EvalState(my, ctx)
        return eval_in(s, node, my)
    except EvalFailure as e:
        raise ClassAdEvaluationError(f"failed to evaluate expression: {e}") from None
    finally:
        my._parent, target._parent, my._alternate, target._alternate = saved


_REQUIREMENTS = parse_expression("requirements")


def requirements_hold(ad: ClassAd, other: ClassAd, ctx: EvalContext) -> bool:
    """Whether ``ad``'s Requirements are true with ``other`` as its target."""
    node = ad._exprs.get("requirements")
    if node is None:
        return False
    v = evaluate_in_match(node, ad, other, ctx)
    return bool_equiv(v) is True


def rank(ad: ClassAd, other: ClassAd, ctx: EvalContext) -> float:
    """``ad``'s Rank of ``other``, as a number (0.0 when it is not numeric)."""
    node = ad._exprs.get("rank")
    if node is None:
        return 0.0
    v = evaluate_in_match(node, ad, other, ctx)
    t = type(v)
    if t is int or t is float or t is bool:
        return float(v)
    return 0.0
