"""The cycle's slots, folded into equivalence classes so each job shape is evaluated once per class.

Evaluating ``Requirements`` for every (job, slot) pair is the cost that dominates a negotiator. Two
slots whose ads hold equal expressions for every attribute that *any* relevant expression can read
(the jobs' ``Requirements``/``Rank``, the slots' own ``Requirements``/``Rank`` followed through
``START`` and friends, the negotiator's rank and preemption expressions, the consumption policy)
evaluate identically against every job, so:

* a **match class** groups slots equal in everything the two ``Requirements`` (and a consumption
  policy) can read, plus their claim; requirements are evaluated once per (autocluster, match class);
* a **full class** refines it by everything the rank and preemption expressions can read; ranks are
  evaluated once per full class when they do not read the job, else once per (autocluster, class).

Per-slot state lives outside the classes, in arrays indexed by input position: available or not,
the current ad of a consumption-policy p-slot whose resources shrink during the cycle, its weight.
A class keeps its slots in input order, so ties are broken by input order. What is read from
each slot ad alone (its name, remote user, consumption resources, the value keys of the match and
rank names) comes from its ``SlotFacts`` (``slotmemo``), kept across cycles while the ad is the same
object; the attributes the cycle set in a decorated copy are read from the copy. A claimed slot
that no job can preempt (``SlotTable.settled_claim``) joins its match class's one settled class,
which is never a candidate and has no ranks. One that the cycle matches as the collector gave it
(no decorated copy: ``cycle._decorations_unread``), most slots of a busy pool, is not even given
a place (an index) in the table: the cycle hands it over apart, and it is only counted in that
class (``FullClass.tallied``), at its turn in input order so that classes are made in the same
order. Nothing reads such a slot's place: it is never taken, matched or preempted, and what the
cycle asks of its class (is a slot left, with which consumption resources) has the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.nodes import Literal, Node
from htcpool.negotiator.exprinfo import (
    Shape,
    expression_shape,
    literal,
    number,
    shape_closure,
    value_key,
)
from htcpool.negotiator.outcomes import PreemptState
from htcpool.negotiator.slotmemo import UNKNOWN, HashedTuple, SlotFacts, literal_only

if TYPE_CHECKING:  # slotstate reads a slot with this module's functions
    from htcpool.negotiator.slotstate import SlotState

RANK_COMPONENTS = ("pre", "post", "startd_rank", "preq", "prank")
NEG_INF = -3.4028234663852886e38  # -FLT_MAX: a rank that could not be evaluated, or no PREEMPTION_RANK


def truth(v: object) -> bool:
    """Whether a value counts as true where HTCondor wants a boolean (non-zero numbers do)."""
    t = type(v)
    return v is True or ((t is int or t is float) and v != 0)


def never_true(node: Node | None) -> bool:
    """Whether PREEMPTION_REQUIREMENTS (``node``) is a literal that is not true (HTCondor's
    default ``False``): then no claimed slot can be preempted by reason of priority."""
    return type(node) is Literal and not truth(node.value)


def remote_user_for_preemption(slot: ClassAd, context: EvalContext) -> str | None:
    """The user a slot's job runs for, as preemption sees it (pending preemptor first)."""
    exprs = slot._exprs
    for key in _USER_KEYS:
        node = exprs.get(key)
        if node is None:
            continue
        v = node.value if type(node) is Literal else slot.evaluate(key, context)
        if type(v) is str and v:
            return v
    return None


_USER_KEYS = ("preemptingaccountinggroup", "preemptinguser", "accountinggroup", "remoteuser")
#: what a slot's current rank and whether its claim is settled are read from: a cycle's copy that
#: sets one of them is read afresh, not from the collector's ad's ``SlotState``
_RANK_NAMES = frozenset({"currentrank", "preemptingrank", "rank"})
#: what a slot's name, remote user and consumption resources are read from (with ``consumption…``)
_IDENTITY_NAMES = frozenset({"name", "partitionableslot", "machineresources", *_USER_KEYS})


def current_rank(slot: ClassAd, context: EvalContext) -> float:
    """What a job must beat to preempt the slot by rank: its ``PreemptingRank`` when a preemption
    is pending, else its ``CurrentRank`` (0 when neither is a number)."""
    current = None
    if "preemptingrank" in slot._exprs:
        current = number(slot.evaluate("PreemptingRank", context))
    if current is None:
        current = number(literal(slot, "CurrentRank", context))
    return current or 0.0


def consumption_resources(slot: ClassAd, context: EvalContext) -> tuple[str, ...] | None:
    """The resources of a p-slot with a consumption policy, or None when it has none."""
    if literal(slot, "PartitionableSlot", context) is not True:
        return None
    words = literal(slot, "MachineResources", context)
    if type(words) is not str:
        return None
    names = tuple(w for w in words.replace(",", " ").split() if w.lower() != "swap")
    if not names or any(f"consumption{n.lower()}" not in slot._exprs for n in names):
        return None
    return names


@dataclass(eq=False)
class FullClass:
    id: int
    match_class: MatchClass
    rep: ClassAd
    slots: list[int]
    claimed: bool
    remote_user: str | None
    current_rank: float
    static: dict[str, float] = field(default_factory=dict)
    dependent: frozenset[str] = frozenset()
    consumption: bool = False
    pos: int = 0  # slots before this index are no longer available (for everyone)
    #: the claimed slots of a match class that no job can preempt (``SlotTable.settled``)
    settled: bool = False
    #: settled slots counted in the class without a place in the table (``SlotTable``'s ``settled``)
    tallied: int = 0

    def any_available(self, available: list[bool]) -> bool:
        """Whether a slot of the class is still available (a tallied one always is: never taken)."""
        return self.tallied > 0 or self.head(available) is not None

    def head(self, available: list[bool]) -> int | None:
        slots, p = self.slots, self.pos
        while p < len(slots) and not available[slots[p]]:
            p += 1
        self.pos = p
        return slots[p] if p < len(slots) else None


@dataclass(eq=False)
class MatchClass:
    id: int
    key: Hashable
    rep: ClassAd
    full: list[FullClass] = field(default_factory=list)
    left: int = 0  # slots of the class still available (none left: no candidate for anyone)
    #: (negated sort key, class) in order, when no rank reads the job and nothing is claimed
    static_order: list[tuple[tuple[float, ...], FullClass]] | None = None
    #: its full class of settled claimed slots (``SlotTable._settled_class``), once there is one
    settled_class: FullClass | None = None
    #: the consumption-policy resources of its first slot (what its Requirements are evaluated with)
    cp: tuple[str, ...] | None = None


class SlotTable:
    """The slots of one cycle: ads, weights, availability and the two levels of classes."""

    def __init__(
        self,
        slots: Sequence[ClassAd],
        *,
        job_refs_req: set[str],
        job_refs_rank: set[str],
        job_universe: set[str],
        policy_nodes: dict[str, Node],
        weigh: Callable[[ClassAd], float],
        context: EvalContext,
        weights: Sequence[float] | None = None,
        candidate: Sequence[bool] | None = None,
        live_names: frozenset[str] = frozenset(),
        shapes: Sequence[Shape] | None = None,
        identity: Callable[[ClassAd], Hashable] | None = None,
        facts: Sequence[SlotFacts] | None = None,
        added: Sequence[tuple[str, ...]] | None = None,
        settle_claims: bool = False,
        states: Sequence[SlotState] | None = None,
        settled: Sequence[tuple[int, SlotFacts, SlotState]] = (),
        settled_shapes: dict[Shape, ClassAd] | None = None,
        names: Callable[[tuple[str, ...]], HashedTuple] = HashedTuple,
    ) -> None:
        self.ads: list[ClassAd] = list(slots)
        self.context = context
        self._read_facts(facts, added, states)
        #: ``expression_shape`` of each ad (ads of one shape have the same closures)
        self.shapes: list[Shape] = list(shapes) if shapes is not None else [expression_shape(a) for a in self.ads]
        #: each slot's SlotWeight (``weigh`` of its current ad; given, or weighed here)
        self.weights: list[float] = list(weights) if weights is not None else [weigh(a) for a in self.ads]
        self.available: list[bool] = [True] * len(self.ads)
        self.changed: list[bool] = [False] * len(self.ads)
        self.weigh = weigh
        self.policy_nodes = policy_nodes
        self.job_universe = job_universe
        #: ephemeral slot attributes kept live (``slotattrs``): what reads them is never cached
        self.live_names = live_names
        self.by_name = {n: i for i, n in enumerate(self.names)}
        #: what else must be equal for two slots to share a class (the users whose usage their live
        #: cross-slot attributes follow), or None
        self.identity = identity
        #: one ad of each expression shape among the tallied settled slots (``_place_all``;
        #: ``settled_shapes``, when the caller worked them out)
        self.tallied_reps: dict[Shape, ClassAd] = settled_shapes if settled_shapes is not None else \
            {f.shape or f.expression_shape(): f.ad for _, f, _ in settled}
        match_names, job_refs, rank_names = self._names_read(job_refs_req, job_refs_rank)
        #: the key of each slot's value keys (``names``: the memo's one object per content)
        self.match_names = names(tuple(sorted(match_names)))
        #: the job attributes the slots' Requirements (and consumption policies) can read
        self.job_refs = frozenset(job_refs)
        self._match_pos = {n: k for k, n in enumerate(self.match_names)}
        #: each slot's match key (``match_key`` of its current ad), or None until asked for
        self.mkeys: list[Hashable | None] = [None] * len(self.ads)
        self.rank_names = names(tuple(sorted(rank_names - match_names)))
        self._rank_pos = {n: k for k, n in enumerate(self.rank_names)}
        self.match_classes: dict[Hashable, MatchClass] = {}
        self.full_classes: dict[Hashable, FullClass] = {}
        #: whether claimed slots whose RANK cannot beat their CurrentRank are settled (``settled_claim``)
        self.settle_claims = settle_claims and not live_names and never_true(policy_nodes.get("preq"))
        if settled and (not self.settle_claims or identity is not None):
            raise ValueError("settled slots are tallied only in a table that settles claims, without identity")
        self.full_of: list[FullClass | None] = []
        self._place_all(candidate, settled)
        self.left = len(self.ads) + len(settled)  # slots still available
        for m in self.match_classes.values():
            if all(not f.claimed and not f.dependent for f in m.full):
                order = [(self._static_key(f), f) for f in m.full]
                order.sort(key=lambda e: (e[0], e[1].slots[0]))
                m.static_order = order

    def _names_read(self, job_refs_req: set[str], job_refs_rank: set[str]) -> tuple[set[str], set[str], set[str]]:
        """The slot attributes the two Requirements (and consumption policies) can read, the job
        attributes they read, and the slot attributes the ranks and policy expressions read."""
        match_names: set[str] = set(job_refs_req) | {"requirements"}
        job_refs: set[str] = set()
        rank_names: set[str] = set(job_refs_rank) | {"rank"}
        # one ad of each (shape, consumption resources): ads of one shape have the same closures.
        # The first slot of each, found without a Python loop over every slot (the reversed pairs
        # leave each key's smallest index); the unions are orderless
        pairs = list(zip(self.shapes, self.cp_resources, strict=True))
        firsts = dict(zip(reversed(pairs), range(len(pairs) - 1, -1, -1), strict=True))
        reps: dict[tuple[Shape, tuple[str, ...] | None], ClassAd] = {k: self.ads[i] for k, i in firsts.items()}
        for shape, ad in self.tallied_reps.items():  # a settled slot has no consumption policy
            reps.setdefault((shape, None), ad)
        for (shape, cp), ad in reps.items():
            req = [n for n in (ad._exprs.get("requirements"),) if n is not None]
            if cp:
                req += [ad._exprs[f"consumption{r.lower()}"] for r in cp]
                match_names |= {r.lower() for r in cp} | {"machineresources"}
            own, other = shape_closure(shape, ad, req)
            match_names |= own
            job_refs |= other
            rank_nodes = [n for n in (ad._exprs.get("rank"),) if n is not None]
            own, _ = shape_closure(shape, ad, rank_nodes + list(self.policy_nodes.values()))
            rank_names |= own
        return match_names, job_refs, rank_names

    def _place_all(self, candidate: Sequence[bool] | None,
                   settled: Sequence[tuple[int, SlotFacts, SlotState]]) -> None:
        """Every slot into its classes, in input order: the table's own slots, and the settled
        claims given apart (each with the number of table slots before it), which are only
        counted in their match class's settled class: no job can take or preempt them, so they
        need no place of their own, only their share in the classes' order and counts."""
        full_of, ads, names = self.full_of, self.ads, self.match_names
        #: (user, id of the value keys) -> the settled class and those keys (kept alive with it):
        #: the memo hands out one value-key tuple per content, so most slots find their class here
        #: without hashing the tuple
        held: dict[tuple[str | None, int], tuple[FullClass, tuple[Hashable, ...]]] = {}
        i = 0
        for before, f, state in settled:
            while i < before:
                full_of.append(self._place(i, ads[i]) if candidate is None or candidate[i] else None)
                i += 1
            # ``_place``'s settled case, for an ad the cycle did not copy: counted in its class
            remote = state.preempt_user
            values = f.value_keys(names)
            found = held.get((remote, id(values)))
            if found is None:
                assert remote is not None
                m = self._match_class((remote, values), f.ad, None)
                found = held[(remote, id(values))] = (self._settled_class(m, f.ad, remote), values)
            cls = found[0]
            cls.tallied += 1
            cls.match_class.left += 1
        for j in range(i, len(ads)):
            full_of.append(self._place(j, ads[j]) if candidate is None or candidate[j] else None)

    def _match_class(self, mkey: Hashable, ad: ClassAd, cp: tuple[str, ...] | None) -> MatchClass:
        """The match class of key ``mkey``, made (with ``ad`` for its representative and ``cp``
        for its consumption resources) when it is the first slot of it."""
        m = self.match_classes.get(mkey)
        if m is None:
            m = self.match_classes[mkey] = MatchClass(len(self.match_classes), mkey, ad, cp=cp)
        return m

    # ------------------------------------------------------------------ facts of the ads
    def _read_facts(self, facts: Sequence[SlotFacts] | None, added: Sequence[tuple[str, ...]] | None,
                    states: Sequence[SlotState] | None) -> None:
        #: each slot's ``slotstate.SlotState`` (read from the collector's ad), when the cycle has them
        self.states = states
        #: the facts of each slot's ad as the collector gave it (``slotmemo``), and the lower-cased
        #: attributes the cycle set in the copy given here (its ephemeral ones; empty: no copy)
        self.facts: list[SlotFacts] = list(facts) if facts is not None else [SlotFacts(a) for a in self.ads]
        self.added: list[tuple[str, ...]] = list(added) if added is not None else [()] * len(self.ads)
        self._touches: dict[tuple[str, ...], bool] = {(): False}
        #: each slot's remote user, as preemption sees it (None for an unclaimed slot)
        self.remote_users: list[str | None] = []
        self.names: list[str] = []
        self.cp_resources: list[tuple[str, ...] | None] = []
        for i, (f, copied) in enumerate(zip(self.facts, self.added, strict=True)):
            if not copied and f.remote_user is not UNKNOWN and f.name is not UNKNOWN and f.cp is not UNKNOWN:
                self.remote_users.append(f.remote_user)  # all three remembered: the usual settled claim
                self.names.append(f.name)
                self.cp_resources.append(f.cp)
            else:
                self.remote_users.append(self._remote_user(i))
                self.names.append(self._name(i))
                self.cp_resources.append(self._consumption(i))

    def _touched(self, i: int) -> bool:
        """Whether the cycle's copy of slot ``i`` sets an attribute its name, remote user or
        consumption policy is read from (then those are read from the copy, not remembered)."""
        added = self.added[i]
        hit = self._touches.get(added)
        if hit is None:
            hit = self._touches[added] = any(
                n in _IDENTITY_NAMES or n.startswith("consumption") for n in added)
        return hit

    def _remote_user(self, i: int) -> str | None:
        f = self.facts[i]
        if self._touched(i):
            return remote_user_for_preemption(self.ads[i], self.context)
        if f.remote_user is UNKNOWN:
            user = remote_user_for_preemption(f.ad, self.context)
            if not literal_only(f.ad, _USER_KEYS):
                return user
            f.remote_user = user
        return f.remote_user

    def _name(self, i: int) -> str:
        f = self.facts[i]
        if self._touched(i):
            return str(literal(self.ads[i], "Name", self.context, ""))
        if f.name is UNKNOWN:
            name = str(literal(f.ad, "Name", self.context, ""))
            if not literal_only(f.ad, ("name",)):
                return name
            f.name = name
        return f.name

    def _consumption(self, i: int) -> tuple[str, ...] | None:
        f = self.facts[i]
        if self._touched(i):
            return consumption_resources(self.ads[i], self.context)
        if f.cp is UNKNOWN:
            cp = consumption_resources(f.ad, self.context)
            if not literal_only(f.ad, ("partitionableslot", "machineresources")):
                return cp
            f.cp = cp
        return f.cp

    def _values(self, i: int, names: tuple[str, ...], pos: dict[str, int]) -> tuple[Hashable, ...]:
        """``value_key`` of each of ``names`` in slot ``i``'s ad: remembered for the collector's
        ad, with the attributes the cycle set in its copy read from the copy."""
        keys = self.facts[i].value_keys(names)
        added = self.added[i]
        if added:
            hits = [(p, n) for n in added if (p := pos.get(n)) is not None]
            if hits:
                exprs = self.ads[i]._exprs
                patched = list(keys)
                for p, n in hits:
                    patched[p] = value_key(exprs.get(n))
                keys = tuple(patched)
        return keys

    # ------------------------------------------------------------------ keys
    def match_key(self, ad: ClassAd) -> Hashable:
        """The key of the match class of ``ad``."""
        return self._key(ad, remote_user_for_preemption(ad, self.context))

    def _key(self, ad: ClassAd, claim: str | None) -> Hashable:
        exprs = ad._exprs
        values = tuple(value_key(exprs.get(n)) for n in self.match_names)
        if self.identity is not None:
            return (claim, values, self.identity(ad))
        return (claim, values)

    def slot_key(self, i: int) -> Hashable:
        """The match key of slot ``i``'s current ad, computed once per change of the ad."""
        k = self.mkeys[i]
        if k is None:
            k = self.mkeys[i] = self.match_key(self.ads[i])
        return k

    def replace_ad(self, i: int, ad: ClassAd, changed: Sequence[str], weight: float) -> None:
        """Slot ``i`` now has ``ad`` (a consumption-policy p-slot after a deduction), which differs
        from its previous ad only in the attributes ``changed``, and weighs ``weight``."""
        old = self.slot_key(i)
        self.ads[i] = ad
        self.weights[i] = weight
        self.changed[i] = True
        assert isinstance(old, tuple)
        values = list(old[1])
        exprs = ad._exprs
        for name in changed:
            low = name.lower()
            pos = self._match_pos.get(low)
            if pos is not None:
                values[pos] = value_key(exprs.get(low))
        self.mkeys[i] = (old[0], tuple(values), *old[2:])

    def _place(self, i: int, ad: ClassAd) -> FullClass:
        remote = self.remote_users[i]
        added = self.added[i]
        # the collector's ad as it is (the usual case): its remembered value keys, no copy to read
        values = self._values(i, self.match_names, self._match_pos) if added else \
            self.facts[i].value_keys(self.match_names)
        mkey: Hashable = (remote, values, self.identity(ad)) if self.identity is not None else (remote, values)
        self.mkeys[i] = mkey
        m = self._match_class(mkey, ad, self.cp_resources[i])
        states = self.states
        state = states[i] if states is not None and (not added or _RANK_NAMES.isdisjoint(added)) else None
        current = current_rank(ad, self.context) if state is None else state.current_rank
        if remote is not None and self.settle_claims and self.cp_resources[i] is None \
                and (self.settled_claim(ad, current) if state is None else state.settled):
            held = self._settled_class(m, ad, remote)
            held.slots.append(i)
            m.left += 1
            return held
        fkey = (mkey, current, self._values(i, self.rank_names, self._rank_pos))
        f = self.full_classes.get(fkey)
        if f is None:
            f = FullClass(
                len(self.full_classes), m, ad, [], remote is not None, remote, current,
                consumption=self.cp_resources[i] is not None,
            )
            self._analyse(f, self.shapes[i])
            self.full_classes[fkey] = f
            m.full.append(f)
        f.slots.append(i)
        m.left += 1
        return f

    @staticmethod
    def settled_claim(ad: ClassAd, current: float) -> bool:
        """Whether claimed slot ``ad`` (whose CurrentRank, or PreemptingRank, is ``current``) can
        be preempted by no job: its RANK is absent or a literal not above ``current`` (no rank
        preemption: the HTCondor manual's "Negotiation" needs RANK strictly above it), and the
        table's PREEMPTION_REQUIREMENTS is never true (no priority preemption)."""
        node = ad._exprs.get("rank")
        if node is None:
            return current >= 0.0
        if type(node) is not Literal:
            return False
        return (number(node.value) or 0.0) <= current

    def _settled_class(self, m: MatchClass, ad: ClassAd, remote: str) -> FullClass:
        """The one full class of match class ``m`` that holds its settled claimed slots: never a
        candidate (``sort_key`` is None), refused by PREEMPTION_REQUIREMENTS for every job, so
        neither its ranks nor its slots' rank values are worked out."""
        f = m.settled_class
        if f is None:
            f = m.settled_class = FullClass(len(self.full_classes), m, ad, [], True, remote, 0.0,
                                            static={"preq": 0.0}, settled=True)
            self.full_classes[("settled", m.key)] = f
            m.full.append(f)
        return f

    def close(self) -> None:
        """The cycle is over: unlink each match class from its full classes (each points back), so
        the table is freed as soon as the cycle lets go of it, not by Python's cycle collector."""
        for m in self.match_classes.values():
            m.full = []
            m.settled_class = None
            m.static_order = None

    def take(self, i: int) -> None:
        """Slot ``i`` is no longer available for the rest of the cycle."""
        if self.available[i]:
            self.available[i] = False
            self.left -= 1
            f = self.full_of[i]
            if f is not None:
                f.match_class.left -= 1

    def _analyse(self, f: FullClass, shape: Shape) -> None:
        """Which rank components read the job; evaluate the others once for the class (whose
        representative's ``expression_shape`` is ``shape``)."""
        dependent = set()
        for comp in RANK_COMPONENTS:
            if comp in ("startd_rank", "preq", "prank") and not f.claimed:
                continue
            node = self._component_node(f.rep, comp)
            if node is None:
                f.static[comp] = 0.0
                continue
            own, other = shape_closure(shape, f.rep, [node])
            if other & self.job_universe or own & self.live_names:
                dependent.add(comp)
            else:
                f.static[comp] = self._eval_component(f.rep, comp, None)
        f.dependent = frozenset(dependent)

    def _component_node(self, ad: ClassAd, comp: str) -> Node | None:
        if comp == "startd_rank":
            return ad._exprs.get("rank")
        return self.policy_nodes.get(comp)

    def _eval_component(self, ad: ClassAd, comp: str, job: ClassAd | None) -> float:
        node = self._component_node(ad, comp)
        if node is None:
            return 0.0
        v = ExprTree._wrap(node).evaluate(ad, job, self.context)
        if comp == "preq":
            return 1.0 if truth(v) else 0.0
        n = number(v)
        if n is None:
            return 0.0 if comp == "startd_rank" else NEG_INF
        return n

    def component(self, f: FullClass, comp: str, job: ClassAd) -> float:
        if comp in f.static:
            return f.static[comp]
        return self._eval_component(f.rep, comp, job)

    def _static_key(self, f: FullClass) -> tuple[float, ...]:
        return (-f.static.get("pre", 0.0), 0.0, -f.static.get("post", 0.0), -float(PreemptState.NONE), -NEG_INF)

    # ------------------------------------------------------------------ ordering one class for one job
    def sort_key(self, f: FullClass, job: ClassAd, job_rank: float) -> tuple[float, ...] | None:
        """The negated (pre-job rank, job rank, post-job rank, reason, PREEMPTION_RANK), or None
        when the class is no candidate for this job (claimed and neither Rank nor Priority)."""
        if f.settled:
            return None
        pre = self.component(f, "pre", job)
        post = self.component(f, "post", job)
        if not f.claimed:
            return (-pre, -job_rank, -post, -float(PreemptState.NONE), -NEG_INF)
        srank = self.component(f, "startd_rank", job)
        if srank > f.current_rank:
            state = PreemptState.RANK
        elif srank >= f.current_rank and self.component(f, "preq", job):
            state = PreemptState.PRIO
        else:
            return None
        prank = self.component(f, "prank", job)
        return (-pre, -job_rank, -post, -float(state), -prank)
