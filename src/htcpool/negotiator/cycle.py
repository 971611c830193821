"""One negotiation cycle, as a pure function of its inputs: ``negotiate(now, slots, submitters, …)``.

The steps, in order (the HTCondor manual's "Negotiation" in "User Priorities and Negotiation";
HTCondor 25 ``matchmaker.cpp``, ``negotiationTime``):

1. all slots, whatever their state (unnamed ads dropped), that satisfy NEGOTIATOR_SLOT_CONSTRAINT;
   all submitters with jobs that satisfy NEGOTIATOR_SUBMITTER_CONSTRAINT, each with the requests
   its schedd would send under NEGOTIATOR_JOB_CONSTRAINT (``obtainAdsFromCollector``,
   ``negotiate``);
2. priorities: expired ceiling/floor/factor leases restored, ``update_priorities(now)``, then
   usage recounted from the claimed slots;
3. the pool's size (``poolsize``: NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT, GhostMultiplier); slots
   trimmed: claimed ones when preemption is not considered, those with retirement time left unless
   ``NEGOTIATOR_CONSIDER_EARLY_PREEMPTION``, and claimed slots not running a job (the manual's
   "Negotiation", rule 2), and consumption-policy p-slots with no claim id to offer
   (``NumClaims`` 0); with ``ALLOW_PSLOT_PREEMPTION`` dynamic slots are preempted only
   through their p-slot;
4. claimed slots get the ephemeral ``RemoteUserPrio``, ``RemoteUserResourcesInUse``,
   ``RemoteGroup…`` attributes, and with NEGOTIATOR_CROSS_SLOT_PRIOS every slot the
   ``slot<N>_…`` ones of its siblings (``slotattrs``); each request gets ``SubmitterUserPrio``, ``SubmitterGroup…``,
   ``SubmitterNegotiatingGroup``, ``SubmitterAutoregroup`` (see ``request_ad``). The
   ``…ResourcesInUse`` ones are live, as in HTCondor (``addRemoteUserPrios``): when any slot ad or
   policy expression reads them, a request's candidate list is built afresh for each run of its
   autocluster in a session with the usage of that moment (HTCondor's match-list cache lives as long),
   and the request ad carries the submitter's usage at each job;
5. with USE_GLOBAL_JOB_PRIOS, each submitter becomes one entry per job priority (``globalprios``);
6. without groups, one pie (``pie.py``) over all submitters, preceded by a floor round for those
   below their floor; with groups, the allocation rounds of ``grouprounds.py``.

Every match is charged to the accountant at once, so later shares see it. The result lists the
matches in the order they were made; nothing here sends anything anywhere. A slot, submitter or
request whose constraint cannot be evaluated at all (a ``ClassAdError``) is left out, and a job
whose matching cannot be evaluated is rejected (``session``); both are named in the result's
``failures`` and the cycle goes on.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.negotiator.accountant import Accountant, SlotWeigher
from htcpool.negotiator.exprinfo import (
    closure,
    literal,
    whole_closure,
    with_values,
)
from htcpool.negotiator.globalprios import fan_out
from htcpool.negotiator.grouprounds import negotiate_groups
from htcpool.negotiator.groups import GroupTree
from htcpool.negotiator.limits import ConcurrencyLimits
from htcpool.negotiator.matchlist import Matchmaker
from htcpool.negotiator.outcomes import CycleResult
from htcpool.negotiator.pie import SubmitterState, negotiate_with_group
from htcpool.negotiator.poolsize import PoolSize, pool_size
from htcpool.negotiator.remainders import RoundRobinTimes
from htcpool.negotiator.requests import ResourceRequest
from htcpool.negotiator.settings import NegotiatorPolicy
from htcpool.negotiator.slotattrs import (
    DECORATION_NAMES,
    LIVE_REQUEST_ATTRS,
    LIVE_SLOT_ATTRS,
    SlotDecorator,
)
from htcpool.negotiator.slotclasses import (
    FullClass,
    SlotTable,
    never_true,
)
from htcpool.negotiator.slotmemo import SlotFacts, SlotMemo
from htcpool.negotiator.slotstate import SlotState, charged_customer, slot_states
from htcpool.negotiator.stats import CycleStats


@dataclass(frozen=True)
class SubmitterAd:
    """What the negotiator knows of one submitter at one schedd: its ad and its request list."""

    name: str  # the accounting name: user@domain or group.user@domain
    schedd: str = ""
    requests: Sequence[ResourceRequest] = ()
    running_jobs: int = 0
    weighted_running_jobs: float | None = None
    weighted_idle_jobs: float | None = None
    skip_matchmaking: bool = False  # SkipMatchmaking


def submitter_classad(s: SubmitterAd) -> ClassAd:
    """The attributes of a submitter ad that NEGOTIATOR_SUBMITTER_CONSTRAINT can read."""
    ad = ClassAd()
    ad["Name"] = s.name
    ad["ScheddName"] = s.schedd
    ad["RunningJobs"] = s.running_jobs
    ad["IdleJobs"] = sum(len(r.jobs) for r in s.requests)
    if s.weighted_running_jobs is not None:
        ad["WeightedRunningJobs"] = s.weighted_running_jobs
    if s.weighted_idle_jobs is not None:
        ad["WeightedIdleJobs"] = s.weighted_idle_jobs
    return ad


class JobReads(NamedTuple):
    """What the cycle's requests read of a slot, and the names they define."""

    requirements: set[str]
    rank: set[str]
    universe: set[str]


class Trimmed(NamedTuple):
    """The slots a cycle may match (``NegotiationCycle._trim``), in parallel lists."""

    ads: list[ClassAd]  # each one's ad, decorated when the cycle decorates it
    weights: list[float]
    candidate: list[bool]  # a candidate of its own (a dynamic slot under ALLOW_PSLOT_PREEMPTION is not)
    bases: list[ClassAd]  # its ad as the collector gave it
    facts: list[SlotFacts]  # the facts of that ad (``slotmemo``)
    states: list[SlotState]  # and its state (``slotstate``)
    #: the settled claims matched as the collector gave them, apart: each with the number of
    #: slots of the lists above before it, its facts and its state (``SlotTable``'s ``settled``)
    settled: list[tuple[int, SlotFacts, SlotState]]


@dataclass
class CycleOutcome:
    result: CycleResult
    stats: CycleStats
    groups: GroupTree | None = None
    shares: dict[str, float] = field(default_factory=dict)
    #: remainder recovery's round-robin times: pass to the next cycle's ``negotiate``
    round_robin: RoundRobinTimes = field(default_factory=RoundRobinTimes)
    #: the slot ads the matches name (each matched slot, the dynamic slots it preempts) by the name
    #: the cycle read, as the collector gave them: what ``exchange.match_messages`` is made of
    slot_ads: dict[str, ClassAd] = field(default_factory=dict)


#: ``SlotState.named`` of a state, as a C-level getter
_NAMED = operator.attrgetter("named")


def _zero() -> float:
    return 0.0


def _first_job(request: ResourceRequest) -> str:
    return "%d.%d" % request.jobs[0] if request.jobs else "?"


class NegotiationCycle:
    """The state of one cycle; ``negotiate`` builds one and runs it."""

    def __init__(self, now: float, accountant: Accountant, policy: NegotiatorPolicy,
                 groups: GroupTree | None, timer: Callable[[], float],
                 round_robin: RoundRobinTimes | None = None, memo: SlotMemo | None = None) -> None:
        self.now = now
        self.memo = memo or SlotMemo()
        self.round_robin = round_robin or RoundRobinTimes()
        self.accountant = accountant
        self.policy = policy
        self.groups = groups
        self.timer = timer
        self.context = EvalContext(clock=fixed_clock(now))
        self.stats = CycleStats(time=now)
        self.result = CycleResult()
        self.negotiated: set[str] = set()
        self.pool_size = PoolSize(0, 0.0, 0, 1.0)
        self.pool_weight = 0.0  # the pie: the pool's weighted size
        self.group_total = 0.0  # what group quotas share
        self.min_slot_weight = 1.0
        self.submitter_sensitive = False
        self.group_quota_table: dict[str, float] = {}
        self.live_sensitive = False  # some expression reads a …ResourcesInUse attribute
        self.usage_epoch = 0  # matches charged so far: the live attributes' version
        self.decorator = SlotDecorator(accountant, groups, self.group_quota_table, self.context,
                                       policy.cross_slot_prios, policy.startd_resource_prefix)
        self.started = timer()  # the timer's reading at the start (the time limits count from it)
        self.submitter_time: dict[str, float] = {}  # TotalTimeInCycle, per submitter name
        self.schedd_time: dict[str, float] = {}
        self.limits = ConcurrencyLimits(policy.concurrency_limits, policy.concurrency_limit_defaults,
                                        policy.concurrency_limit_default)

    # ------------------------------------------------------------------ preparation
    def prepare(self, slots: Sequence[ClassAd], submitters: Sequence[SubmitterAd]) -> list[SubmitterState]:
        t0 = self.timer()
        pol, acct = self.policy, self.accountant
        slots, slot_facts, slot_states = self._named_slots(slots)
        if pol.slot_constraint:
            keep = ExprTree(pol.slot_constraint)
            named = [(s, f, st) for s, f, st in zip(slots, slot_facts, slot_states, strict=True) if self._satisfies(
                "NEGOTIATOR_SLOT_CONSTRAINT", keep, s, f"slot {literal(s, 'Name', self.context)}")]
            slots = [s for s, _, _ in named]
            slot_facts = [f for _, f, _ in named]
            slot_states = [st for _, _, st in named]
        subs = [
            s for s in submitters
            if not s.skip_matchmaking and s.running_jobs + sum(len(r.jobs) for r in s.requests) > 0
        ]
        if pol.submitter_constraint:
            keep = ExprTree(pol.submitter_constraint)
            subs = [s for s in subs if self._satisfies("NEGOTIATOR_SUBMITTER_CONSTRAINT", keep,
                                                       submitter_classad(s), f"submitter {s.name}")]
        if pol.job_constraint:  # the schedd sends only jobs that satisfy NegotiatorJobConstraint
            keep = ExprTree(pol.job_constraint)
            subs = [
                replace(s, requests=[r for r in s.requests if self._satisfies(
                    "NEGOTIATOR_JOB_CONSTRAINT", keep, r.ad, f"request of job {_first_job(r)} of {s.name}")])
                for s in subs
            ]
        self.stats.total_slots = len(slots)
        self.stats.num_schedulers = len({s.schedd for s in subs})
        t1 = self.timer()
        self.stats.phase1_duration = t1 - t0
        if self.groups is not None:
            acct.assigned_group = self.groups.assigned_group
        acct.expire_leases(self.now)
        acct.update_priorities(self.now)
        weigh = SlotWeigher(pol.accountant, self.context)
        weights = self._weights(slots, slot_facts, weigh)
        # the accountant weighs with its own policy: the cycle's weights serve when they agree
        discount = acct.policy.discount_suspended_resources
        acct.check_matches(slots, self.now, weights if pol.accountant == acct.policy else None,
                           [charged_customer(st, discount) for st in slot_states])
        self.limits.count_slots([s for s, st in zip(slots, slot_states, strict=True) if st.limits], self.context)
        size = pool_size(slots, weights, use_slot_weights=pol.accountant.use_slot_weights,
                         context=self.context, constraint=pol.slot_poolsize_constraint,
                         multipliers=[st.multiplier for st in slot_states],
                         effective=[st.effective for st in slot_states])
        self.pool_size = size
        self.pool_weight = size.weighted
        self.group_total = size.quota_total(pol.accountant.use_slot_weights)
        self.min_slot_weight = size.min_slot_weight
        if self.groups is not None:
            self.groups.assign_quotas(self.group_total)
            self.group_quota_table.update({n.name: n.quota for n in self.groups.nodes()})
        job_reads = self._job_reads(subs)
        plain = self._decorations_unread(slot_facts, job_reads)
        trimmed = self._trim(slots, slot_facts, slot_states, weights, weigh, plain)
        self.stats.trimmed_slots = len(trimmed.ads) + len(trimmed.settled)
        group_mode = self.groups is not None and self.groups.has_groups
        self.stats.candidate_slots = size.slots if group_mode else self.stats.trimmed_slots
        self._build_matchmaker(trimmed, job_reads, weigh)
        states = [
            SubmitterState(s.name, s.schedd, list(s.requests), i, s.running_jobs, [0] * len(s.requests),
                           s.weighted_running_jobs, s.weighted_idle_jobs, sum(len(r.jobs) for r in s.requests))
            for i, s in enumerate(subs)
        ]
        if pol.use_global_job_prios:
            states = fan_out(states, pol.max_global_job_prios, self.context)
        self.stats.phase2_duration = self.timer() - t1
        return states

    def _named_slots(self, slots: Sequence[ClassAd]) -> tuple[list[ClassAd], list[SlotFacts], list[SlotState]]:
        """The slots whose Name is a string, with their facts and states (step 1)."""
        facts = self.memo.facts_of(slots)
        states = slot_states(facts, self.context)
        if all(map(_NAMED, states)):  # the usual case: no list to filter
            return list(slots), facts, states
        keep = [i for i, st in enumerate(states) if st.named]
        return [slots[i] for i in keep], [facts[i] for i in keep], [states[i] for i in keep]

    def _weights(self, slots: Sequence[ClassAd], facts: Sequence[SlotFacts], weigh: SlotWeigher) -> list[float]:
        """Each slot's weight: kept in its facts (``slotmemo``) when it follows from its literals."""
        key = weigh.key
        weights = []
        for s, f in zip(slots, facts, strict=True):
            kept = f.weight
            if kept is not None and kept[0] == key:
                weights.append(kept[1])
                continue
            w = weigh(s)
            if weigh.literal_only(s):
                f.weight = (key, w)
            weights.append(w)
        return weights

    def _satisfies(self, knob: str, constraint: ExprTree, ad: ClassAd, what: str) -> bool:
        """Whether ``ad`` satisfies the constraint ``knob``; one that cannot be evaluated at all
        leaves ``what`` out of the cycle, named in the result's failures."""
        try:
            return constraint.evaluate(ad, None, self.context) is True
        except ClassAdError as e:
            self.result.failures.append(f"{what}: {knob} could not be evaluated: {e}")
            return False

    def _job_reads(self, subs: Sequence[SubmitterAd]) -> JobReads:
        """What the requests' ``Requirements`` and ``Rank`` read of a slot, and every name a
        request defines (with the ephemeral ``Submitter…`` ones)."""
        job_req: set[str] = set()
        job_rank: set[str] = set()
        universe: set[str] = set()
        seen: set[object] = set()
        for s in subs:
            for r in s.requests:
                if r.signature in seen:
                    continue
                seen.add(r.signature)
                universe.update(r.ad._exprs)
                req, rank = r.ad._exprs.get("requirements"), r.ad._exprs.get("rank")
                if req is not None:
                    job_req |= closure(r.ad, [req])[1]
                if rank is not None:
                    job_rank |= closure(r.ad, [rank])[1]
        universe |= {
            "submitteruserprio", "submittorprio", "submitteruserresourcesinuse", "submittergroup",
            "submittergroupresourcesinuse", "submittergroupquota", "submitternegotiatinggroup",
            "submitterautoregroup",
        }
        return JobReads(job_req, job_rank, universe)

    def _decorations_unread(self, facts: Sequence[SlotFacts], job_reads: JobReads) -> bool:
        """Whether a settled claimed slot (one no job can preempt: ``SlotTable.settled_claim``) needs
        no decorated copy: the table settles claims (PREEMPTION_REQUIREMENTS a literal that is not
        true, nothing reads a live usage, no p-slot preemption) and no expression that can be
        evaluated with a settled slot reads what step 4 would put into its copy
        (``slotattrs.DECORATION_NAMES``). Those are every slot expression (each ad's
        ``whole_closure``, by its shape), NEGOTIATOR_PRE/POST_JOB_RANK, ``SLOT_WEIGHT`` and what
        the requests read of a slot; PREEMPTION_RANK and PREEMPTION_REQUIREMENTS are evaluated
        only with a claimed slot that is a candidate, which a settled one never is. A settled
        slot is then matched as the collector gave it: the copy would change no evaluation,
        class or candidate, and most slots of a busy pool are settled claims. Never with
        NEGOTIATOR_CROSS_SLOT_PRIOS (every slot is decorated then, and the copies decide which
        slots share a class)."""
        pol = self.policy
        if not pol.consider_preemption or pol.cross_slot_prios or pol.allow_pslot_preemption \
                or not never_true(ExprTree(pol.preemption_requirements).node):
            return False
        read: set[str] = set(job_reads.requirements) | job_reads.rank
        own, other = closure(ClassAd(), [ExprTree(e).node for e in (pol.pre_job_rank, pol.post_job_rank,
                                                                    pol.accountant.slot_weight)])
        read |= own | other
        # one ad per shape (ads of one shape have one closure); a kept shape is read off the facts
        # (shape numbers start at 1: an unset one is None)
        for shape, f in {f.shape or f.expression_shape(): f for f in facts}.items():
            slot_own, slot_other = whole_closure(shape, f.ad)
            read |= slot_own | slot_other
        own, other = closure(ClassAd(), [ExprTree(e).node for e in (pol.preemption_requirements, pol.preemption_rank)])
        live = LIVE_SLOT_ATTRS | LIVE_REQUEST_ATTRS
        return read.isdisjoint(DECORATION_NAMES) and read.isdisjoint(live) and live.isdisjoint(own | other)

    def _trim(self, slots: list[ClassAd], facts: list[SlotFacts], states: list[SlotState], weights: list[float],
              weigh: SlotWeigher, plain: bool = False) -> Trimmed:
        """The slots the cycle may match (step 3), decorated (step 4; with ``plain``, from
        ``_decorations_unread``, a settled claim is not, unless a preemption is pending on it, and
        goes to ``Trimmed.settled``: the slot table only counts it, see ``slotclasses``; the
        table settles claims whenever ``plain`` holds, as ``_decorations_unread`` checks the
        same conditions)."""
        pol = self.policy
        out = Trimmed([], [], [], [], [], [], [])
        kept, kept_weights, candidate, bases, kept_facts, kept_states, settled = out
        preemption, early, pslot_preemption = (pol.consider_preemption, pol.consider_early_preemption,
                                               pol.allow_pslot_preemption)
        cross = pol.cross_slot_prios
        recorded: set[str] = set()  # the users a settled claim gave a record already (once is enough)
        record = self.accountant.record
        for s, f, st, w in zip(slots, facts, states, weights, strict=True):
            if plain and st.counted and (early or not st.retiring):
                # the usual slot of a busy pool, in short: what the tests below decide for it
                # (``plain`` holds only when preemption is considered)
                user = st.preempt_user  # never None for a counted slot
                if user is not None and user not in recorded:
                    recorded.add(user)
                    record(user)  # as decorating would: a new user gets a record
                settled.append((len(kept), f, st))  # counted in its class, given no place
                continue
            pslot = st.pslot
            claimed = st.claimed
            if claimed and not pslot:
                if not preemption:
                    continue
                if not early and st.retiring:
                    continue
                if st.state == "Claimed" and st.activity == "Idle":
                    continue  # claimed but not running a job (the manual's "Negotiation", rule 2)
            if pslot and st.no_claims and not pslot_preemption:
                continue  # a consumption-policy p-slot with no claim id left to offer
            decorate = preemption and (claimed or cross)
            if decorate and plain and claimed and not pslot and not st.pending and st.settled:
                decorate = False
                user = st.preempt_user
                if user is not None:
                    if user not in recorded:
                        recorded.add(user)
                        self.accountant.record(user)  # as decorating would: a new user gets a record
                    settled.append((len(kept), f, st))  # counted in its class, given no place
                    continue
            ad = self.decorator.decorate(s, claimed) if decorate else s
            kept.append(ad)
            bases.append(s)
            kept_facts.append(f)
            kept_states.append(st)
            kept_weights.append(w if ad is s else weigh(ad))
            candidate.append(not (pslot_preemption and st.dslot))
        return out

    def _build_matchmaker(self, trimmed: Trimmed, job_reads: JobReads, weigh: Callable[[ClassAd], float]) -> None:
        pol = self.policy
        nodes = {
            "pre": ExprTree(pol.pre_job_rank).node,
            "post": ExprTree(pol.post_job_rank).node,
        }
        if pol.consider_preemption:
            nodes["preq"] = ExprTree(pol.preemption_requirements).node
            nodes["prank"] = ExprTree(pol.preemption_rank).node
        job_req, job_rank, universe = job_reads
        slot_side: set[str] = set()
        slot_own: set[str] = set()
        shapes: set[object] = set()
        slots, weights, candidate, bases, facts, states, settled = trimmed
        added = [() if ad is b else self.decorator.added(ad) for ad, b in zip(slots, bases, strict=True)]
        shape_of = [f.decorated_shape(ad, a) if a else (f.shape or f.expression_shape())
                    for ad, f, a in zip(slots, facts, added, strict=True)]
        settled_shapes = {f.shape or f.expression_shape(): f.ad for _, f, _ in settled}
        for ad, shape in (*zip(slots, shape_of, strict=True), *((a, sh) for sh, a in settled_shapes.items())):
            if shape not in shapes:
                shapes.add(shape)
                own, other = whole_closure(shape, ad)
                slot_side |= other
                slot_own |= own
        slot_side |= closure(ClassAd(), list(nodes.values()))[1]
        self.submitter_sensitive = any(n.startswith(("submitter", "submittor")) for n in slot_side)
        live_slot = frozenset(self.decorator.live_names)
        read = slot_side | slot_own
        self.live_sensitive = bool(read & (live_slot | LIVE_REQUEST_ATTRS))
        self.table = SlotTable(
            slots, job_refs_req=job_req, job_refs_rank=job_rank, job_universe=universe,
            policy_nodes=nodes, weigh=weigh, weights=weights, context=self.context, candidate=candidate,
            live_names=live_slot if self.live_sensitive else frozenset(),
            shapes=shape_of, facts=facts, added=added, states=states,
            settle_claims=not pol.allow_pslot_preemption, settled=settled, settled_shapes=settled_shapes,
            names=self.memo.names,
            identity=self.decorator.identity if read & (live_slot - LIVE_SLOT_ATTRS) else None,
        )
        self.matchmaker = Matchmaker(
            self.table, self.context,
            preemption_requirements_stable=pol.preemption_requirements_stable,
            preemption_rank_stable=pol.preemption_rank_stable,
            allow_pslot_preemption=pol.allow_pslot_preemption and pol.consider_preemption,
            ignore_job_ranks=pol.ignore_job_ranks,
            refresh_class=self.refresh_class if self.live_sensitive else None,
        )

    # ------------------------------------------------------------------ live ephemeral attributes
    def refresh_class(self, f: FullClass) -> None:
        """A class's live ephemeral attributes, in the ads that represent it, set to now's usage."""
        self.decorator.refresh(f.rep)
        if f.match_class.rep is not f.rep:
            self.decorator.refresh(f.match_class.rep)

    def session_token(self, submitter: str, negotiating_group: str) -> Hashable:
        """The key under which a run of requests shares cached evaluations (see the docstring)."""
        token: Hashable = (submitter, negotiating_group) if self.submitter_sensitive else None
        if self.live_sensitive:
            token = (token, self.usage_epoch)
        return token

    def refresh_request(self, ad: ClassAd, submitter: str) -> None:
        """The request ad's live usage attributes, set before each job is matched."""
        acct = self.accountant
        ad["SubmitterUserResourcesInUse"] = acct.weighted_usage(submitter)
        if "submittergroupresourcesinuse" in ad._exprs and self.groups is not None:
            ad["SubmitterGroupResourcesInUse"] = acct.weighted_usage(self.groups.assigned_group(submitter))

    def request_ad(self, submitter: str, job: ClassAd, negotiating_group: str, autoregroup: bool) -> ClassAd:
        """The request's job ad with the ephemeral Submitter* attributes (the HTCondor manual's
        "Priorities in Negotiation and Preemption")."""
        acct = self.accountant
        eup = acct.effective_priority(submitter)
        values: list[tuple[str, object]] = [
            ("SubmitterUserPrio", eup),
            ("SubmittorPrio", eup),
            ("SubmitterUserResourcesInUse", acct.weighted_usage(submitter)),
            ("SubmitterNegotiatingGroup", negotiating_group),
            ("SubmitterAutoregroup", autoregroup),
        ]
        if self.groups is not None and self.groups.has_groups:
            group = self.groups.assigned_group(submitter)
            values += [
                ("SubmitterGroup", group),
                ("SubmitterGroupResourcesInUse", acct.weighted_usage(group)),
                ("SubmitterGroupQuota", self.group_quota_table.get(group, 0.0)),
            ]
        return with_values(job, values)

    # ------------------------------------------------------------------ running
    def matched_ads(self) -> dict[str, ClassAd]:
        """``CycleOutcome.slot_ads``: looked up in the table by name (of two ads with one name,
        the later is the one the cycle matched), not found by walking every slot."""
        found: dict[str, ClassAd] = {}
        table = self.table
        for match in self.result.matches:
            for name in (match.slot, *match.preempted_dslots):
                i = table.by_name.get(name)
                if i is not None:
                    found[name] = table.facts[i].ad
        return found

    def close(self) -> None:
        """Break the cycle's reference loops (the matchmaker's walks and live refresh call back
        into it and into this cycle, match and full classes point at each other): the objects a
        cycle makes, many thousands, are then freed by reference counting when the cycle lets go
        of them instead of waiting for Python's cycle collector (tests/negotiator/test_garbage.py)."""
        self.matchmaker.forget_walks()
        self.matchmaker.refresh_class = None  # a method of this cycle, which holds the matchmaker
        self.table.close()

    def run(self, states: list[SubmitterState]) -> None:
        t0 = self.timer()
        if self.groups is not None and self.groups.has_groups:
            negotiate_groups(self, states)
        else:
            below = [
                s for s in states
                if self.accountant.record(s.name).floor > 0
                and self.accountant.weighted_usage(s.name) < self.accountant.record(s.name).floor
            ]
            if below:
                negotiate_with_group(self, below, math.inf, None, floor_round=True)
            negotiate_with_group(self, states, math.inf, None)
        # phase 3 (sorting submitters) happens inside the spins: matching is the rest
        self.stats.phase4_duration = max(0.0, self.timer() - t0 - self.stats.phase3_duration)
        self.stats.slot_share_iter = self.stats.pie_spins
        self.accountant.commit()


def negotiate(
    now: float,
    slots: Sequence[ClassAd],
    submitters: Sequence[SubmitterAd],
    accountant: Accountant,
    policy: NegotiatorPolicy | None = None,
    *,
    groups: GroupTree | None = None,
    timer: Callable[[], float] = _zero,
    round_robin: RoundRobinTimes | None = None,
    memo: SlotMemo | None = None,
) -> CycleOutcome:
    """Run one negotiation cycle at time ``now``; the accountant is charged for every match.
    ``round_robin`` is the previous outcome's ``round_robin`` (remainder recovery's state);
    ``memo`` keeps what was worked out from slot ads that come back unchanged (``slotmemo``)."""
    policy = policy or NegotiatorPolicy()
    if groups is None and policy.groups.groups:
        groups = GroupTree(policy.groups)
    start = timer()
    cyc = NegotiationCycle(now, accountant, policy, groups, timer, round_robin, memo)
    states = cyc.prepare(slots, submitters)
    cyc.run(states)
    slot_ads = cyc.matched_ads()
    cyc.close()
    duration = timer() - start
    cyc.stats.duration = duration
    cyc.stats.end = now + duration
    cyc.stats.phase2_duration = max(0.0, cyc.stats.phase2_duration)
    shares = {name: s.share for name, s in cyc.result.shares.items()}
    return CycleOutcome(cyc.result, cyc.stats, groups, shares, cyc.round_robin, slot_ads)
