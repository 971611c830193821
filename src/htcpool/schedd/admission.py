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
are one shared expression per cluster, ``ProcId`` one per job.

When no step of proc 0 read ``ProcId`` (nor anything it cannot name, such as
``random()``) and no transform set it, a later proc whose submitted ad is proc 0's after screening but
for its ``ProcId`` (the very expression objects, named and ordered alike:
``CopyOf``) is proc 0's outcome: its ad is a copy of proc 0's table with its own
``ProcId``, and it is neither screened nor checked again. That is a cluster of
condor_submit's copies, HTCondor's proc ads that hold only what differs from the
cluster ad; ``Admitted.copies`` marks these procs for the queue, which counts
and indexes them as proc 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import is_

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
    #: per proc: True when it is proc 0's copy but for ``ProcId`` (``CopyOf``), so that its
    #: status, owner, universe, group and cron attributes are proc 0's very expressions
    copies: list[bool] = field(default_factory=list)


class CopyOf:
    """Tells, in one pass in C, that an ad has ``base``'s very expression objects, named and
    ordered alike, whatever its ``ProcId`` (which the schedd sets). ``base`` is read once, when
    this is made; False means: not known to be a copy, never that it differs."""

    __slots__ = ("_keys", "_names", "_nodes", "_proc_at", "_table")

    def __init__(self, base: ClassAd) -> None:
        self._keys = list(base._exprs)
        self._nodes = list(base._exprs.values())
        self._names = dict(base._names)
        self._table = base._names  # the decoder's copies share it (``codec``): one identity test
        self._proc_at = self._keys.index("procid") if "procid" in base._exprs else -1

    def __call__(self, ad: ClassAd) -> bool:
        exprs = ad._exprs
        nodes = list(exprs.values())
        if len(nodes) != len(self._nodes):
            return False
        if self._proc_at >= 0:
            nodes[self._proc_at] = self._nodes[self._proc_at]
        names = ad._names
        return (all(map(is_, nodes, self._nodes)) and list(exprs) == self._keys
                and (names is self._table or names == self._names))


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
        self.footprint = Footprint((), opaque=True)  # what proc 0's run read
        self.effect: Effect = []
        self.errors: list[str] = []

    def run(self, ad: ClassAd, context: EvalContext, admitted: Admitted) -> None:
        if self.base is None:
            before = ad.copy()
            reads = Reads()
            self.errors = self.transform.apply(ad, context, reads=reads).errors
            footprint = self.footprint = Footprint.close(reads.names, [before._exprs], reads.opaque,
                                                         reads.same_names)
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


def _proc_free(footprint: Footprint) -> bool:
    """Whether an answer within ``footprint`` is the same for every ``ProcId``."""
    return not footprint.opaque and "procid" not in footprint.names


class _Cluster:
    """What ``admit`` learns from proc 0 and applies to the procs after it."""

    def __init__(self, cluster: int, requirements: list[SubmitRequirement], schedd_ad: ClassAd,
                 context: EvalContext, accounting_domain: str, steps: list[_TransformStep],
                 admitted: Admitted) -> None:
        self.cluster, self.requirements, self.schedd_ad = cluster, requirements, schedd_ad
        self.context, self.domain, self.steps, self.admitted = context, accounting_domain, steps, admitted
        self.checked: Callable[[ClassAd], bool] = _never
        self.ordered: Callable[[ClassAd], bool] = _never
        self.submitter = ""
        self.prefix: Prefix = (0, 0, 0, 0, 0)
        self.copy_of: CopyOf | None = None  # set when proc 0's outcome holds for its copies
        self.base: ClassAd | None = None  # proc 0's admitted ad

    def _warn(self, ad: ClassAd) -> None:
        warnings = self.admitted.warnings
        for w in check(self.requirements, self.schedd_ad, ad, self.context):
            if w not in warnings:
                warnings.append(w)

    def first(self, ad: ClassAd, source: ClassAd) -> tuple[str, Prefix]:
        """Proc 0 (``source``: its submitted ad, screened): checked in full, remembering what
        each step read."""
        self._warn(ad)
        req_names, opaque = _requirement_reads(self.requirements)
        checked = Footprint.close(req_names, [self.schedd_ad._exprs, ad._exprs], opaque)
        ordered = Footprint.close((*PRIO_ATTRS, *SUBMITTER_ATTRS), [ad._exprs])
        self.checked, self.ordered = checked.against(ad), ordered.against(ad)
        self.submitter = submitter_of(ad, self.domain, self.context)
        self.prefix = priority_prefix(ad, self.context)
        self.base = ad
        own = ad._exprs.get("procid")  # a transform that set ProcId (or dropped it) sets it for all
        if (type(own) is Literal and type(own.value) is int and own.value == 0
                and all(_proc_free(f) for f in (checked, ordered, *(step.footprint for step in self.steps)))):
            self.copy_of = CopyOf(source)
            ad._shared = True  # its name table is its copies' too: copied before its first change
        return self.submitter, self.prefix

    def later(self, ad: ClassAd) -> tuple[str, Prefix]:
        """A proc after the first: each answer shared with proc 0 where its footprint allows."""
        admitted = self.admitted
        if self.checked(ad):
            admitted.shared += 1
        else:
            self._warn(ad)
        if self.ordered(ad):
            admitted.shared += 1
            return self.submitter, self.prefix
        return submitter_of(ad, self.domain, self.context), priority_prefix(ad, self.context)

    def copy(self, proc: int) -> None:
        """Queue proc ``proc``, a copy of proc 0 but for its ``ProcId`` (``CopyOf``)."""
        base, admitted = self.base, self.admitted
        assert base is not None
        exprs = base._exprs.copy()
        exprs["procid"] = Literal(proc)
        ad = ClassAd._from_tables(exprs, base._names)
        ad._shared = True  # proc 0's name table, copied before the first change (as ``base``'s)
        admitted.ads.append(ad)
        admitted.submitters.append(self.submitter)
        admitted.keys.append((*self.prefix, self.cluster, proc))
        admitted.copies.append(True)
        admitted.shared += len(self.steps) + 2


def admit(jobs: list[ClassAd], cluster: int, owner: str, now: float, *,
          transforms: list[Transform], requirements: list[SubmitRequirement],
          schedd_ad: ClassAd, context: EvalContext, accounting_domain: str = "",
          protection: Protection | None = None, extra: tuple[tuple[str, Node], ...] = ()) -> Admitted:
    """The cluster's job ads, screened, transformed and checked; raises SubmitRejected.
    ``extra``: more attributes the schedd sets on every job (name, expression), after its own."""
    fixed = [("clusterid", "ClusterId", Literal(cluster)), ("owner", "Owner", Literal(owner)),
             ("qdate", "QDate", Literal(int(now))),
             ("enteredcurrentstatus", "EnteredCurrentStatus", Literal(int(now))),
             *((name.lower(), name, node) for name, node in extra)]
    steps = [_TransformStep(t) for t in transforms]
    admitted = Admitted()
    state = _Cluster(cluster, requirements, schedd_ad, context, accounting_domain, steps, admitted)
    fixed_exprs = {low: node for low, _, node in fixed}
    screen = Screen(owner, protection or Protection(), context, admitted.warnings)
    for proc, source in enumerate(jobs):
        if state.copy_of is not None and state.copy_of(source):
            state.copy(proc)
            continue
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
        submitter, prefix = state.later(ad) if proc else state.first(ad, source)
        admitted.ads.append(ad)
        admitted.submitters.append(submitter)
        admitted.keys.append((*prefix, cluster, proc))
        admitted.copies.append(False)
    admitted.transform_errors = list(dict.fromkeys(admitted.transform_errors))  # once, not once per proc
    return admitted
