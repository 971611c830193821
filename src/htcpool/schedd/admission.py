"""Admitting a new cluster: queue attributes, job transforms, submit requirements, order keys.

``admit`` turns the ads a submitter sent into the ads the queue keeps. Each submitted
ad is first screened for the attributes the schedd owns (``protected``: a ``JobStatus``
other than Idle or Held refuses the cluster; claim and shadow attributes are dropped and an
``Owner`` naming someone else is replaced, with a warning; the status is checked again after
the transforms, which may set it). Each job gets ``ClusterId``, ``ProcId``, ``Owner``, ``QDate`` and
``EnteredCurrentStatus``; then the transforms run in order, then the submit
requirements (``SubmitRejected`` at the first failure, so nothing of the
cluster is queued), then the submitter name and priority key are worked out.

Proc 0 is always done in full, recording what each step read. A later proc
reuses proc 0's outcome of a step when the step's ``Footprint`` (the
attributes it read, closed under their expressions; ``htcpool.schedd.shapes``)
is the same in both ads at that point: a transform's changes are replayed,
the requirements' warnings already stand, the priority key's job part is
copied. Otherwise that step runs for that proc. The attributes the queue sets
are one shared expression per cluster, ``ProcId`` one per job, so a cluster of
copies that differ in ``ProcId`` only costs a table copy and a few identity
checks per job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.nodes import Literal, Node
from htcpool.schedd.priority import (
    PRIO_ATTRS,
    SUBMITTER_ATTRS,
    Key,
    Prefix,
    priority_prefix,
    submitter_of,
)
from htcpool.schedd.protected import Protection, Screen, screen_status
from htcpool.schedd.shapes import Footprint, reads_of
from htcpool.schedd.submit_requirements import SubmitRequirement, check
from htcpool.schedd.transforms import Reads, Transform

Effect = list[tuple[str, str | None, Node | None]]


@dataclass
class Admitted:
    """The ads of a cluster ready for the queue, with what was learnt on the way."""

    ads: list[ClassAd] = field(default_factory=list)
    submitters: list[str] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    transform_errors: list[str] = field(default_factory=list)
    shared: int = 0  # steps taken from proc 0 instead of computed


def _never(ad: ClassAd) -> bool:
    return False


def _effect(before: ClassAd, after: ClassAd) -> Effect:
    """The attribute changes that turn ``before`` into ``after`` (None: deleted)."""
    out: Effect = []
    for low in before._exprs.keys() | after._exprs.keys():
        node = after._exprs.get(low)
        if node is not before._exprs.get(low) or after._names.get(low) != before._names.get(low):
            out.append((low, after._names.get(low), node))
    return out


class _TransformStep:
    def __init__(self, transform: Transform) -> None:
        self.transform = transform
        self.base: ClassAd | None = None
        self.same: Callable[[ClassAd], bool] = _never
        self.effect: Effect = []
        self.errors: list[str] = []

    def run(self, ad: ClassAd, context: EvalContext, admitted: Admitted) -> None:
        if self.base is None:
            before = ad.copy()
            reads = Reads()
            self.errors = self.transform.apply(ad, context, reads=reads).errors
            footprint = Footprint.close(reads.names, [before._exprs], reads.opaque, reads.same_names)
            self.same = footprint.against(before)
            self.base = before
            self.effect = _effect(before, ad)
            admitted.transform_errors.extend(self.errors)
        elif self.same(ad):
            exprs, names = ad._exprs, ad._names
            for low, name, node in self.effect:
                if node is None:
                    del exprs[low], names[low]
                else:
                    exprs[low] = node
                    names[low] = name  # type: ignore[assignment]
            admitted.transform_errors.extend(self.errors)
            admitted.shared += 1
        else:
            admitted.transform_errors.extend(self.transform.apply(ad, context).errors)


def _requirement_reads(requirements: list[SubmitRequirement]) -> tuple[set[str], bool]:
    names: set[str] = set()
    opaque = False
    for req in requirements:
        for node in (req.expr, req.reason):
            if node is not None:
                more, dynamic = reads_of(node)
                names |= more
                opaque = opaque or dynamic
    return names, opaque


def admit(jobs: list[ClassAd], cluster: int, owner: str, now: float, *,
          transforms: list[Transform], requirements: list[SubmitRequirement],
          schedd_ad: ClassAd, context: EvalContext, accounting_domain: str = "",
          protection: Protection | None = None) -> Admitted:
    """The cluster's job ads, screened, transformed and checked; raises SubmitRejected."""
    fixed = [("clusterid", "ClusterId", Literal(cluster)), ("owner", "Owner", Literal(owner)),
             ("qdate", "QDate", Literal(int(now))),
             ("enteredcurrentstatus", "EnteredCurrentStatus", Literal(int(now)))]
    steps = [_TransformStep(t) for t in transforms]
    admitted = Admitted()
    first: ClassAd | None = None
    checked: Callable[[ClassAd], bool] = _never
    ordered: Callable[[ClassAd], bool] = _never
    base_submitter = ""
    base_prefix: Prefix = (0, 0, 0, 0, 0)
    fixed_exprs = {low: node for low, _, node in fixed}
    screen = Screen(owner, protection or Protection(), context, admitted.warnings)
    for proc, source in enumerate(jobs):
        status = screen(source)
        exprs = source._exprs | fixed_exprs  # the same order as setting them one by one
        exprs["procid"] = Literal(proc)
        names = dict(source._names)
        if len(names) != len(exprs):  # the source lacks some of them: named as the schedd names them
            for low, name, _ in (*fixed, ("procid", "ProcId", None)):
                if low not in names:
                    names[low] = name
        ad = ClassAd._from_tables(exprs, names)
        for step in steps:
            step.run(ad, context, admitted)
        if steps and ad._exprs.get("jobstatus") is not status:  # a transform set it: the same rule holds
            screen_status(ad, context)
        if first is None:
            for w in check(requirements, schedd_ad, ad, context):
                if w not in admitted.warnings:
                    admitted.warnings.append(w)
            req_names, opaque = _requirement_reads(requirements)
            checked = Footprint.close(req_names, [schedd_ad._exprs, ad._exprs], opaque).against(ad)
            ordered = Footprint.close((*PRIO_ATTRS, *SUBMITTER_ATTRS), [ad._exprs]).against(ad)
            base_submitter = submitter = submitter_of(ad, accounting_domain, context)
            base_prefix = prefix = priority_prefix(ad, context)
            first = ad
        else:
            if checked(ad):
                admitted.shared += 1
            else:
                for w in check(requirements, schedd_ad, ad, context):
                    if w not in admitted.warnings:
                        admitted.warnings.append(w)
            if ordered(ad):
                submitter, prefix = base_submitter, base_prefix
                admitted.shared += 1
            else:
                submitter = submitter_of(ad, accounting_domain, context)
                prefix = priority_prefix(ad, context)
        admitted.ads.append(ad)
        admitted.submitters.append(submitter)
        admitted.keys.append((*prefix, cluster, proc))
    admitted.transform_errors = list(dict.fromkeys(admitted.transform_errors))  # once, not once per proc
    return admitted
