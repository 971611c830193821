"""Candidates, and ``ALLOW_PSLOT_PREEMPTION``: freeing a p-slot's dynamic slots for a big job.

``pslot_preemption`` tries every available p-slot with dynamic slots (HTCondor 25
``pslotMultiMatch``): the d-slots' resources are added to the p-slot, lowest ``CurrentRank`` first,
while their rank is not above the p-slot's ``RANK`` of the job, until the job fits. A d-slot with
retirement time left or already preempting is never taken; one whose rank equals the new rank is
taken only by priority (another user's, ``PREEMPTION_REQUIREMENTS`` true). The best candidate over
all p-slots wins, by the usual candidate order. It is tried only for a job that no slot can take
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.match import requirements_hold
from htcpool.negotiator.exprinfo import literal, number
from htcpool.negotiator.outcomes import PreemptState
from htcpool.negotiator.slotclasses import NEG_INF, SlotTable, truth

NegKey = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class MatchEval:
    """The outcome of a successful requirements test: the consumption-policy amounts, if any."""

    consumed: tuple[tuple[str, float], ...] = ()


@dataclass(slots=True)
class Candidate:
    index: int
    state: PreemptState
    key: NegKey
    evaluation: MatchEval
    dslots: tuple[int, ...] = ()
    after: ClassAd | None = None  # a consumption-policy p-slot after the deduction
    after_weight: float = 0.0  # the weight of ``after``
    charge: float | None = None


Permit = Callable[[PreemptState, float], bool]


def pslot_preemption(t: SlotTable, ctx: EvalContext, submitter: str, job: ClassAd, rank_only: bool,
                     permit: Permit, cost: Callable[[Candidate], float]) -> Candidate | None:
    """Try every p-slot with dynamic slots: add d-slots, lowest CurrentRank first, until it fits."""
    best: Candidate | None = None
    for i, ad in enumerate(t.ads):
        if not t.available[i] or literal(ad, "PartitionableSlot", ctx) is not True:
            continue
        cand = _pslot_try(t, ctx, i, ad, submitter, job, rank_only)
        if cand is None or not permit(cand.state, cost(cand)):
            continue
        if best is None or cand.key < best.key:
            best = cand
    return best

def _pslot_try(t: SlotTable, ctx: EvalContext, i: int, pslot: ClassAd, submitter: str, job: ClassAd,
               rank_only: bool) -> Candidate | None:
    child_names = pslot.eval("ChildName", ctx) if "ChildName" in pslot else []
    if not isinstance(child_names, list) or not child_names:
        return None
    new_rank = number(ExprTree._wrap(pslot._exprs["rank"]).evaluate(pslot, job, ctx)) if "rank" in pslot._exprs else 0.0
    new_rank = new_rank or 0.0
    dslots: list[tuple[float, int, int]] = []
    for n, name in enumerate(child_names):
        j = t.by_name.get(str(name))
        if j is None or not t.available[j]:
            continue
        d = t.ads[j]
        if (number(literal(d, "RetirementTimeRemaining", ctx, 0)) or 0) > 0 \
                or literal(d, "State", ctx) == "Preempting":
            continue
        rank = number(d.evaluate("CurrentRank", ctx)) or 0.0
        dslots.append((rank, n, j))
    dslots.sort()
    trial = pslot.copy()
    state = PreemptState.NONE
    taken: list[int] = []
    for rank, _, j in dslots:
        if rank > new_rank:
            break
        d = t.ads[j]
        if rank == new_rank:
            if rank_only:
                continue
            remote = literal(d, "AccountingGroup", ctx) or literal(d, "RemoteUser", ctx)
            if remote == submitter:
                continue
            preq = t.policy_nodes.get("preq")
            if preq is None or not truth(ExprTree._wrap(preq).evaluate(d, job, ctx)):
                continue
            state = PreemptState.PRIO
        elif state is not PreemptState.PRIO:
            state = PreemptState.RANK
        for r in ("Cpus", "Memory", "Disk"):
            have = number(literal(trial, r, ctx, 0)) or 0.0
            trial[r] = int(have) + (number(literal(d, r, ctx, 0)) or 0.0)
        taken.append(j)
        if requirements_hold(job, trial, ctx) and requirements_hold(trial, job, ctx):
            pre = _rank(ctx, t.policy_nodes.get("pre"), trial, job)
            post = _rank(ctx, t.policy_nodes.get("post"), trial, job)
            jr = number(job.evaluate("Rank", ctx, trial)) or 0.0
            prank = _rank(ctx, t.policy_nodes.get("prank"), trial, job)
            key = (-pre, -jr, -post, -float(state), -prank, float(i))
            return Candidate(i, state, key, MatchEval(), tuple(taken))
    return None

def _rank(ctx: EvalContext, node: object, slot: ClassAd, job: ClassAd) -> float:
    if node is None:
        return NEG_INF
    v = number(ExprTree._wrap(node).evaluate(slot, job, ctx))  # type: ignore[arg-type]
    return NEG_INF if v is None else v
