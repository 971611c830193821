"""From a schedd's idle jobs to the resource requests a negotiator sees.

HTCondor's schedd walks its idle jobs in job-priority order (``PreJobPrio1``, ``PreJobPrio2``,
``JobPrio``, ``PostJobPrio1``, ``PostJobPrio2``, each descending, then ``ClusterId`` and ``ProcId``
ascending; the HTCondor manual's "Job Priority" in "Job Scheduling", and "Negotiation") and sends
each run of consecutive jobs of one *autocluster* as one request ad with a job count. An autocluster
is the set of jobs equal in every *significant attribute*: those that slot ads and the negotiator's
policy expressions can read (``significant_attributes``), plus what the job's own ``Requirements``
and ``Rank`` read. With ``NEGOTIATE_ALL_JOBS_IN_CLUSTER`` every job is its own autocluster, so
nothing is skipped.

A request that finds no slot marks its autocluster rejected for the rest of that submitter's
session, so identical job shapes are tried once (the manual's "cluster skipping"), while the
next, different, lower-priority jobs are still tried.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.classad.nodes import ListExpr, Literal
from htcpool.negotiator.exprinfo import closure, literal, number, value_key
from htcpool.negotiator.settings import AutoclusterPolicy, NegotiatorPolicy
from htcpool.negotiator.slotmemo import SlotMemo

#: attributes never significant (``MM :: compute_significant_attrs``)
NEVER_SIGNIFICANT = frozenset(
    name.lower()
    for name in (
        "CurrentTime LastHeardFrom RemoteUser RemoteOwner RemoteUserFloor RemoteUserPrio "
        "RemoteUserResourcesInUse RemoteGroupResourcesInUse SubmitterUserResourcesInUse "
        "SubmitterGroupResourcesInUse SubmittorPrio SubmitterUserPrio TotalJobRunTime "
        "MachineLastMatchTime JobCurrentStartDate JobState Mips KFlops SlotID DSlotID "
        "PartitionableSlot DynamicSlot Offline PelicanPluginVersion "
        "CpusUsage DiskUsage GPUsUsage MemoryUsage ResidentSetSize target my"
    ).split()
)
_REMOVE_REGEX = re.compile(r"^Slot[0-9]*_", re.IGNORECASE)
#: what the schedd always puts in an autocluster's signature
ALWAYS_SIGNIFICANT = (
    "requirements",
    "rank",
    "requestcpus",
    "requestmemory",
    "requestdisk",
    "requestgpus",
    "concurrencylimits",
)
PRIORITY_ATTRS = ("PreJobPrio1", "PreJobPrio2", "JobPrio", "PostJobPrio1", "PostJobPrio2")


@dataclass(frozen=True, slots=True)
class ResourceRequest:
    """A run of idle jobs of one autocluster, in priority order: what one request ad stands for."""

    ad: ClassAd  # the first job's ad
    autocluster: int
    signature: Hashable
    jobs: tuple[tuple[int, int], ...]  # (ClusterId, ProcId)
    #: each job's JobPrio (empty: the request ad's for every job); USE_GLOBAL_JOB_PRIOS reads it
    job_prios: tuple[int, ...] = ()


def significant_attributes(slots: Iterable[ClassAd], policy: NegotiatorPolicy,
                           memo: SlotMemo | None = None) -> tuple[str, ...]:
    """Job attributes that slot ads or the policy expressions may read (lower-cased, sorted);
    ``memo`` keeps each slot ad's expression shape from one cycle to the next (``slotmemo``), so
    only the first ad of each shape is followed."""
    names: set[str] = set()
    seen_shapes: set[int] = set()
    memo = memo or SlotMemo()
    for facts in memo.facts_of(list(slots)):
        # ads of one expression shape hold the same expression nodes under the same names, so
        # they read the same job attributes; the shape is a small number the cycle needs anyway
        shape = facts.shape or facts.expression_shape()
        if shape in seen_shapes:
            continue
        seen_shapes.add(shape)
        slot = facts.ad
        nodes = [n for n in slot._exprs.values() if type(n) is not Literal and type(n) is not ListExpr]
        _, other = closure(slot, nodes)
        names |= other
    policy_nodes = [
        ExprTree(text).node
        for text in (
            policy.preemption_requirements,
            policy.preemption_rank,
            policy.pre_job_rank,
            policy.post_job_rank,
            policy.job_constraint or "true",
        )
    ]
    _, other = closure(ClassAd(), policy_nodes)
    names |= other
    return tuple(
        sorted(n for n in names if n not in NEVER_SIGNIFICANT and not _REMOVE_REGEX.match(n))
    )


def job_priority_key(job: ClassAd, context: EvalContext) -> tuple[float, ...]:
    """Sort key of the schedd's queue order: better priorities first, then older jobs
    (priority expressions evaluated in ``context``; one that cannot be evaluated counts as 0,
    as one that is not a number does)."""
    try:
        key = [-(number(literal(job, a, context, 0)) or 0.0) for a in PRIORITY_ATTRS]
        key.append(number(literal(job, "ClusterId", context, 0)) or 0.0)
        key.append(number(literal(job, "ProcId", context, 0)) or 0.0)
    except ClassAdError:
        key = [-_number(job, a, context) for a in PRIORITY_ATTRS]
        key.append(_number(job, "ClusterId", context))
        key.append(_number(job, "ProcId", context))
    return tuple(key)


def _number(job: ClassAd, name: str, context: EvalContext) -> float:
    try:
        return number(literal(job, name, context, 0)) or 0.0
    except ClassAdError:
        return 0.0


class AutoclusterTable:
    """Signature → AutoClusterId, shared by every submitter whose requests should share caches."""

    def __init__(self, significant: Sequence[str], policy: AutoclusterPolicy | None = None) -> None:
        self.policy = policy or AutoclusterPolicy()
        if self.policy.significant_attributes is not None:
            base = [a.lower() for a in self.policy.significant_attributes]
        else:
            base = [a.lower() for a in significant]
        base += [a.lower() for a in self.policy.add_significant_attributes]
        self.attributes = tuple(dict.fromkeys([*ALWAYS_SIGNIFICANT, *base]))
        self.ids: dict[Hashable, int] = {}
        self._own_refs: dict[tuple[object, object], tuple[str, ...]] = {}

    def signature(self, job: ClassAd) -> Hashable:
        exprs = job._exprs
        req, rank = exprs.get("requirements"), exprs.get("rank")
        pair = (value_key(req), value_key(rank))
        own = self._own_refs.get(pair)
        if own is None:
            names, _ = closure(job, [n for n in (req, rank) if n is not None])
            own = tuple(sorted(n for n in names if n not in self.attributes))
            self._own_refs[pair] = own
        return tuple(value_key(exprs.get(a)) for a in self.attributes) + tuple(
            value_key(exprs.get(a)) for a in own
        )

    def autocluster(self, job: ClassAd) -> tuple[int, Hashable]:
        if self.policy.negotiate_all_jobs_in_cluster:
            sig: Hashable = ("job", id(job))
        else:
            sig = self.signature(job)
        ac = self.ids.get(sig)
        if ac is None:
            ac = len(self.ids)
            self.ids[sig] = ac
        return ac, sig


def resource_requests(jobs: Iterable[ClassAd], table: AutoclusterTable, now: float) -> list[ResourceRequest]:
    """Idle jobs of one submitter → request runs, in the schedd's priority order at ``now``."""
    jobs = list(jobs)
    context = EvalContext(clock=fixed_clock(now))
    keys = [job_priority_key(job, context) for job in jobs]
    ordered = [(keys[i], jobs[i]) for i in sorted(range(len(jobs)), key=keys.__getitem__)]
    out: list[ResourceRequest] = []
    run: list[tuple[int, int]] = []
    prios: list[int] = []
    first: ClassAd | None = None
    cur: tuple[int, Hashable] | None = None
    for key, job in ordered:
        ac = table.autocluster(job)
        jid = (int(literal(job, "ClusterId", context, 0)), int(literal(job, "ProcId", context, 0)))
        prio = int(-key[2])  # JobPrio
        if cur is not None and ac[0] == cur[0]:
            run.append(jid)
            prios.append(prio)
            continue
        if cur is not None and first is not None:
            out.append(ResourceRequest(first, cur[0], cur[1], tuple(run), tuple(prios)))
        first, cur, run, prios = job, ac, [jid], [prio]
    if cur is not None and first is not None:
        out.append(ResourceRequest(first, cur[0], cur[1], tuple(run), tuple(prios)))
    return out
