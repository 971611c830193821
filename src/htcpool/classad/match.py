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

from htcpool.classad.adscan import parse_new_ad
from htcpool.classad.classad import ClassAd
from htcpool.classad.context import EvalContext
from htcpool.classad.errors import ClassAdEvaluationError
from htcpool.classad.nodes import Node
from htcpool.classad.operators import bool_equiv
from htcpool.classad.parser import parse_expression
from htcpool.classad.scope import EvalFailure, EvalState, eval_in, settle

_TOP = parse_new_ad(
    "[symmetricMatch = RIGHT.requirements && LEFT.requirements;"
    "leftMatchesRight = RIGHT.requirements;"
    "rightMatchesLeft = LEFT.requirements;"
    "leftRankValue = LEFT.rank;"
    "rightRankValue = RIGHT.rank]"
)
_LEFT_CTX = parse_new_ad("[other=.RIGHT;target=.RIGHT;my=.LEFT;ad=.LEFT]")
_RIGHT_CTX = parse_new_ad("[other=.LEFT;target=.LEFT;my=.RIGHT;ad=.RIGHT]")


def _match_ad() -> tuple[ClassAd, ClassAd, ClassAd]:
    top = ClassAd._from_tables(dict(_TOP.exprs), dict(_TOP.names))
    left_ctx = ClassAd._view(_LEFT_CTX, top)
    right_ctx = ClassAd._view(_RIGHT_CTX, top)
    top._exprs["lctx"] = left_ctx
    top._names["lctx"] = "lCtx"
    top._exprs["rctx"] = right_ctx
    top._names["rctx"] = "rCtx"
    return top, left_ctx, right_ctx


def evaluate_in_match(node: Node, my: ClassAd, target: ClassAd, ctx: EvalContext) -> Any:
    """Evaluate ``node`` with ``my`` as the left ad and ``target`` as the right ad."""
    top, left_ctx, right_ctx = _match_ad()
    saved = (my._parent, target._parent, my._alternate, target._alternate)
    top._exprs["left"] = my
    top._names["left"] = "LEFT"
    top._exprs["right"] = target
    top._names["right"] = "RIGHT"
    my._parent = left_ctx
    target._parent = right_ctx
    if not ctx.strict:
        my._alternate = target
        target._alternate = my
    s = EvalState(my, ctx)
    try:
        s.left = my
        s.right = target
        return eval_in(s, node, my)
    except EvalFailure as e:
        raise ClassAdEvaluationError(f"failed to evaluate expression: {e}") from None
    finally:
        my._parent, target._parent, my._alternate, target._alternate = saved
        # the scopes point at the match ad that holds them: unlinked, all three are freed at once
        # instead of waiting for Python's cycle collector (a busy pool evaluates matches all the time)
        left_ctx._parent = right_ctx._parent = None
        if ctx.pool is not None:
            settle(s)


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
