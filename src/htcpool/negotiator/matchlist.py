"""Matching one job: candidates, their order, and the best slot that the submitter's limits permit.

For a request (an autocluster, seen through one representative job ad), the candidate slots are the
full classes of every match class whose two ``Requirements`` hold, each class in the order of the
sort of the HTCondor manual's "Negotiation": ``NEGOTIATOR_PRE_JOB_RANK``, job ``RANK``,
``NEGOTIATOR_POST_JOB_RANK``, reason (No Preemption, then Rank, then Priority), ``PREEMPTION_RANK``;
higher is better, and ties go to the slot that came first in the input (HTCondor's unstable sort is
not copied).

A claimed slot is a candidate by reason of Rank when its ``RANK`` of the job beats ``CurrentRank``
(``PreemptingRank`` when a preemption is pending), or by reason of Priority when the running job's
user is another submitter, ``PREEMPTION_REQUIREMENTS`` holds and the slot's ``RANK`` is not worse.

The sorted lists are computed once per (autocluster, ephemeral-attribute token) and shared; each
(submitter, autocluster) walks them with its own cursors, merged through a heap of the lists' heads
(``walks``), so a job costs O(log classes) once the lists exist. Slots taken by other jobs are
skipped lazily.

Such a list is HTCondor's match-list cache (``matchmaker.cpp``). With PREEMPTION_REQUIREMENTS_STABLE
and PREEMPTION_RANK_STABLE both true (the default) it is always valid. With one of them false, the
head candidate is re-checked before each job, with the live values of the ephemeral attributes: a
priority candidate whose ``PREEMPTION_REQUIREMENTS`` no longer holds (when that knob is false), or a
preempting candidate whose ``PREEMPTION_RANK`` changed (when that one is false), invalidates the
list, and the job is matched by a fresh scan under a new token. With both false every job gets a
fresh scan.

A p-slot with a consumption policy (``MachineResources`` and ``Consumption<R>``) stays in the cycle
after a match with its resources reduced; it keeps its class (and its rank from the start of the
cycle) but is re-checked against each job with its current resources. Each match also takes one of
the claim ids it offers (``NumClaims``, when advertised): with none left it leaves the cycle.
``ALLOW_PSLOT_PREEMPTION`` adds the dynamic slots of a p-slot to it, lowest ``CurrentRank`` first,
until the job fits; it is tried for a job that no slot can take otherwise (``pslots.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.match import requirements_hold
from htcpool.classad.nodes import Literal
from htcpool.negotiator.exprinfo import closure, literal, number, value_key
from htcpool.negotiator.outcomes import PreemptState
from htcpool.negotiator.pslots import Candidate, MatchEval, NegKey, Permit, pslot_preemption
from htcpool.negotiator.slotattrs import LIVE_REQUEST_ATTRS
from htcpool.negotiator.slotclasses import FullClass, MatchClass, SlotTable, truth
from htcpool.negotiator.walks import Cursor, Walk

__all__ = ["Candidate", "MatchEval", "Matchmaker", "Permit"]

_NOTHING_CONSUMED = MatchEval()


class Matchmaker:
    """Finds the best slot for a job among a cycle's ``SlotTable``."""

    def __init__(
        self,
        table: SlotTable,
        context: EvalContext,
        *,
        preemption_requirements_stable: bool = True,
        preemption_rank_stable: bool = True,
        allow_pslot_preemption: bool = False,
        ignore_job_ranks: bool = False,
        refresh_class: Callable[[FullClass], None] | None = None,
    ) -> None:
        self.table = table
        self.context = context
        self.request: ClassAd | None = None  # the job ``best`` was last asked about (p-slot costs)
        self.preq_stable = preemption_requirements_stable
        self.prank_stable = preemption_rank_stable
        self.allow_pslot_preemption = allow_pslot_preemption
        self.ignore_job_ranks = ignore_job_ranks  # NEGOTIATOR_IGNORE_JOB_RANKS: job Rank is constant
        #: whether the last ``best`` set a candidate aside for the submitter's limits
        self.limit_rejected = False
        #: claimed classes whose PREEMPTION_REQUIREMENTS failed, per (autocluster, token)
        self._policy_rejected: dict[tuple[Hashable, Hashable], list[FullClass]] = {}
        #: match classes of settled claimed slots only, per (autocluster, token), with the job their
        #: lists were built for: their Requirements matter only for a rejection's reason, so they
        #: are evaluated then (``_refused_by_policy``), with the same job and cache key
        self._settled: dict[tuple[Hashable, Hashable], tuple[ClassAd, list[MatchClass]]] = {}
        #: sets a claimed class's live attributes before its expressions are evaluated (or None)
        self.refresh_class = refresh_class
        #: requirements results: token → (job projection, match key) → result
        self._req: dict[Hashable, dict[Hashable, MatchEval | None]] = {}
        #: per autocluster, the job attributes the two Requirements can read, and whether one is live
        self._job_names: dict[Hashable, tuple[tuple[str, ...], bool]] = {}
        self._last_projection: tuple[ClassAd | None, Hashable] = (None, None)
        self._fresh: dict[tuple[str, Hashable, bool], Hashable] = {}  # last fresh-scan token
        self.fresh_scans = 0
        self._lists: dict[tuple[Hashable, Hashable, bool], list[list[tuple[NegKey, FullClass]]]] = {}
        self._walks: dict[tuple[str, Hashable, Hashable, bool], Walk] = {}
        self._job_rank_dependent: dict[Hashable, bool] = {}
        self.slot_universe: set[str] = set()
        seen: set[Hashable] = set()
        for ad, shape in (*zip(table.ads, table.shapes, strict=True),
                          *((a, sh) for sh, a in table.tallied_reps.items())):
            if shape not in seen:  # ads of one shape define the same names
                seen.add(shape)
                self.slot_universe.update(ad._exprs)
        self.evaluations = 0
        #: whether any slot could be preempted by RANK: a claimed class, or p-slot preemption on.
        #: Without one, a startd-rank-only request has no candidate and needs no scan.
        self.rank_possible = allow_pslot_preemption or any(f.claimed for f in table.full_classes.values())

    # ------------------------------------------------------------------ requirements
    def projection(self, sig: Hashable, job: ClassAd) -> Hashable:
        """What of ``job`` its and the slots' Requirements can read: the names (its Requirements,
        what that reads of the job, followed through the job's own attributes, and what the
        slots read of a job) and their values. Requests of different autoclusters with equal
        projections get equal results against a slot class, so they share them."""
        entry = self._job_names.get(sig)
        if entry is None:
            exprs = job._exprs
            refs = self.table.job_refs
            nodes = [exprs[n] for n in ("requirements", *sorted(refs)) if n in exprs]
            own, _ = closure(job, nodes)
            names = tuple(sorted(own | refs | {"requirements"}))
            entry = self._job_names[sig] = (names, bool(LIVE_REQUEST_ATTRS.intersection(names)))
        names, live = entry
        last_job, last = self._last_projection
        if last_job is job and not live and isinstance(last, tuple) and last[0] is names:
            return last
        exprs = job._exprs
        proj = (names, tuple(value_key(exprs.get(n)) for n in names))
        if not live:
            self._last_projection = (job, proj)
        return proj

    def requirements(self, sig: Hashable, token: Hashable, job: ClassAd, slot: ClassAd,
                     mkey: Hashable, cp: tuple[str, ...] | None) -> MatchEval | None:
        cache = self._req.get(token)
        if cache is None:
            cache = self._req[token] = {}
        key = (self.projection(sig, job), mkey)
        if key in cache:
            return cache[key]
        result = self._evaluate(job, slot, cp)
        cache[key] = result
        return result

    def _evaluate(self, job: ClassAd, slot: ClassAd, cp: tuple[str, ...] | None) -> MatchEval | None:
        self.evaluations += 1
        ctx = self.context
        if not cp:
            if requirements_hold(job, slot, ctx) and requirements_hold(slot, job, ctx):
                return MatchEval()
            return None
        amounts: list[tuple[str, float]] = []
        for r in cp:
            v = number(slot.evaluate(f"Consumption{r}", ctx, job))
            amounts.append((r, 0.0 if v is None else v))
        for r, amount in amounts:
            have = number(literal(slot, r, ctx, 0)) or 0.0
            if amount < 0 or amount > have:
                return None
        if not any(a > 0 for _, a in amounts):
            return None
        trial = job.copy()
        for r, amount in amounts:
            trial[f"Request{r}"] = amount
        if requirements_hold(trial, slot, ctx) and requirements_hold(slot, trial, ctx):
            return MatchEval(tuple(amounts))
        return None

    def _current(self, i: int, sig: Hashable, token: Hashable, job: ClassAd) -> MatchEval | None:
        t = self.table
        ad = t.ads[i]
        return self.requirements(sig, token, job, ad, t.slot_key(i), t.cp_resources[i])

    # ------------------------------------------------------------------ candidate lists
    def job_rank_dependent(self, sig: Hashable, job: ClassAd) -> bool:
        dep = self._job_rank_dependent.get(sig)
        if self.ignore_job_ranks:
            dep = False
        if dep is None:
            node = job._exprs.get("rank")
            dep = False
            if node is not None:
                _, other = closure(job, [node])
                dep = bool(other & self.slot_universe)
            self._job_rank_dependent[sig] = dep
        return dep

    def _build_lists(self, sig: Hashable, token: Hashable, job: ClassAd) -> list[list[tuple[NegKey, FullClass]]]:
        t = self.table
        dep = self.job_rank_dependent(sig, job)
        rank_expr = ExprTree._wrap(job._exprs["rank"]) if dep else None
        out: list[list[tuple[NegKey, FullClass]]] = []
        policy_rejected: list[FullClass] = []
        self._policy_rejected[(sig, token)] = policy_rejected
        settled: list[MatchClass] = []
        self._settled[(sig, token)] = (job, settled)
        for m in t.match_classes.values():
            if not m.left:
                continue  # every slot taken: never a candidate again in this cycle
            if self.refresh_class is not None:
                for f in m.full:
                    self.refresh_class(f)
            first = m.full[0]
            if first.settled and len(m.full) == 1:
                settled.append(m)  # never a candidate: see ``_refused_by_policy``
                continue
            if self.requirements(sig, token, job, m.rep, m.key, m.cp) is None:
                continue
            if m.static_order is not None and not dep:
                out.append(m.static_order)
                continue
            entries: list[tuple[NegKey, FullClass]] = []
            for f in m.full:
                jr = 0.0
                if rank_expr is not None:
                    jr = number(rank_expr.evaluate(job, f.rep, self.context)) or 0.0
                k = t.sort_key(f, job, jr)
                if k is not None:
                    entries.append((k, f))
                elif f.claimed and "preq" in t.policy_nodes and not t.component(f, "preq", job):
                    policy_rejected.append(f)
            entries.sort(key=lambda e: (e[0], e[1].slots[0]))
            if entries:
                out.append(entries)
        return out

    def _walk(self, submitter: str, sig: Hashable, token: Hashable, job: ClassAd, rank_only: bool) -> Walk:
        wkey = (submitter, sig, token, rank_only)
        walk = self._walks.get(wkey)
        if walk is not None:
            return walk
        lkey = (sig, token, False)
        lists = self._lists.get(lkey)
        if lists is None:
            lists = self._build_lists(sig, token, job)
            self._lists[lkey] = lists
        rank_state = -float(PreemptState.RANK)
        prio_state = -float(PreemptState.PRIO)
        cursors = []
        for entries in lists:
            if rank_only:
                entries = [e for e in entries if e[0][3] == rank_state]
            elif any(e[0][3] == prio_state and e[1].remote_user == submitter for e in entries):
                entries = [e for e in entries if not (e[0][3] == prio_state and e[1].remote_user == submitter)]
            if entries:
                cursors.append(Cursor(entries, self._verifier(sig, token, job)))
        walk = Walk(cursors, self.table)
        self._walks[wkey] = walk
        return walk

    def _verifier(self, sig: Hashable, token: Hashable, job: ClassAd) -> Callable[[int], bool]:
        def verify(i: int) -> bool:
            return self._current(i, sig, token, job) is not None

        return verify

    def forget_walks(self) -> None:
        """Drop the per-submitter walks (at a new spin); the shared lists are kept."""
        self._walks.clear()

    # ------------------------------------------------------------------ the best candidate
    def best(self, submitter: str, sig: Hashable, token: Hashable, job: ClassAd, rank_only: bool,
             permit: Permit, cost: Callable[[Candidate], float],
             admit: Callable[[int], str | None] | None = None) -> tuple[Candidate | None, str, Hashable]:
        """The best candidate the limits permit, or None and the rejection reason; and the token
        to use for the next job of the run (a new one after a fresh scan). ``admit(slot)`` names
        the concurrency limit that bars a candidate (a job whose limits read the slot), or None.

        The reason is HTCondor's, first that applies: ``concurrency limit <name> reached``,
        ``PREEMPTION_REQUIREMENTS == False`` (an available claimed slot of another user matched
        but the policy refused its preemption), ``submitter limit exceeded``, ``no match found``."""
        t = self.table
        self.request = job
        if not self.preq_stable and not self.prank_stable:
            token = self._fresh_token(submitter, sig, token, rank_only)
        walk = self._walk(submitter, sig, token, job, rank_only)
        if self.preq_stable != self.prank_stable:
            head = walk.peek(self.table)
            if head is not None and not self._still_valid(head[0], head[1], job):
                token = self._fresh_token(submitter, sig, token, rank_only)
                walk = self._walk(submitter, sig, token, job, rank_only)
        heap = walk.heap
        set_aside: list[tuple[NegKey, int, int, Cursor]] = []
        self.limit_rejected = False
        barred: str | None = None
        found: Candidate | None = None
        while heap:
            key, idx, seq, cur = heap[0]
            h = cur.head(t)
            if h is None:
                heapq.heappop(heap)
                continue
            if h[1] != idx or h[0] != key:
                heapq.heapreplace(heap, (h[0], h[1], seq, cur))
                continue
            if admit is not None:
                barred_by = admit(idx)
                if barred_by is not None:
                    barred = barred or barred_by
                    set_aside.append(heapq.heappop(heap))
                    continue
            state = PreemptState(int(-key[3]))
            ev = self._current(idx, sig, token, job) if t.changed[idx] else None
            cand = Candidate(idx, state, key, ev or self._class_eval(idx, sig, token, job))
            if permit(state, cost(cand)):
                found = cand
                break
            self.limit_rejected = True
            set_aside.append(heapq.heappop(heap))
        for e in set_aside:
            heapq.heappush(heap, e)
        if found is None and self.allow_pslot_preemption and not self.limit_rejected and barred is None:
            found = pslot_preemption(t, self.context, submitter, job, rank_only, permit, cost)
        if found is not None:
            return found, "", token
        if barred is not None:
            reason = f"concurrency limit {barred} reached"
        elif not rank_only and self._refused_by_policy(submitter, sig, token):
            reason = "PREEMPTION_REQUIREMENTS == False"
        elif self.limit_rejected:
            reason = "submitter limit exceeded"
        else:
            reason = "no match found"
        return None, reason, token

    def _refused_by_policy(self, submitter: str, sig: Hashable, token: Hashable) -> bool:
        """Whether an available slot of another user was refused by PREEMPTION_REQUIREMENTS."""
        t = self.table
        available = t.available
        if any(
            f.remote_user != submitter and f.any_available(available)
            for f in self._policy_rejected.get((sig, token), ())
        ):
            return True
        job, settled = self._settled.get((sig, token), (None, []))
        for m in settled:
            f = m.full[0]
            if f.remote_user == submitter or not f.any_available(available):
                continue
            assert job is not None
            if self.requirements(sig, token, job, m.rep, m.key, m.cp) is not None:
                return True
        return False

    # ------------------------------------------------------------------ the non-stable cache checks
    def _still_valid(self, key: NegKey, idx: int, job: ClassAd) -> bool:
        """HTCondor's ``cache_still_valid`` for the head candidate, with live values."""
        t = self.table
        state = PreemptState(int(-key[3]))
        if state is PreemptState.NONE:
            return True
        f = t.full_of[idx]
        assert f is not None
        if self.refresh_class is not None:
            self.refresh_class(f)
        if not self.preq_stable and state is PreemptState.PRIO:
            node = t.policy_nodes.get("preq")
            if node is None or not truth(ExprTree._wrap(node).evaluate(f.rep, job, self.context)):
                return False
        if not self.prank_stable:
            return t._eval_component(f.rep, "prank", job) == -key[4]
        return True

    def _fresh_token(self, submitter: str, sig: Hashable, token: Hashable, rank_only: bool) -> Hashable:
        """A token no cache holds, so the next walk is a fresh scan; the previous fresh scan's
        caches for this (submitter, autocluster) are dropped."""
        self.fresh_scans += 1
        slot = (submitter, sig, rank_only)
        old = self._fresh.get(slot)
        if old is not None:
            self._req.pop(old, None)
            self._lists.pop((sig, old, False), None)
            self._policy_rejected.pop((sig, old), None)
            self._settled.pop((sig, old), None)
            self._walks.pop((submitter, sig, old, rank_only), None)
        base = token[1] if isinstance(token, tuple) and token[:1] == ("fresh",) else token
        new = ("fresh", base, self.fresh_scans)
        self._fresh[slot] = new
        return new

    def _class_eval(self, idx: int, sig: Hashable, token: Hashable, job: ClassAd) -> MatchEval:
        t = self.table
        if t.cp_resources[idx] is None:
            return _NOTHING_CONSUMED  # no consumption policy: the evaluation carries nothing
        f = t.full_of[idx]
        assert f is not None
        m = f.match_class
        ev = self.requirements(sig, token, job, m.rep, m.key, t.cp_resources[idx])
        return ev if ev is not None else MatchEval()

    # ------------------------------------------------------------------ taking a slot
    def cost(self, cand: Candidate) -> float:
        """Usage charged for the match: the weight, or the weight a consumption policy removes."""
        if cand.charge is not None:
            return cand.charge
        t = self.table
        if not cand.evaluation.consumed and not cand.dslots and self.request is not None \
                and literal(t.ads[cand.index], "PartitionableSlot", self.context) is True:
            cand.charge = self._dslot_weight(cand.index, self.request)
        elif not cand.evaluation.consumed or cand.dslots:
            cand.charge = t.weights[cand.index]
        else:
            cand.after = self._deducted(cand.index, cand.evaluation)
            cand.after_weight = t.weigh(cand.after)
            cand.charge = t.weights[cand.index] - cand.after_weight
        return cand.charge

    def _dslot_weight(self, i: int, job: ClassAd) -> float:
        """The weight of the dynamic slot a partitionable slot (without a consumption policy) would
        carve for ``job``: the slot ad with each requested resource in place of what it has. HTCondor
        charges a p-slot match this way (a personal pool's 4-core p-slot serves a group whose quota is
        2, one core per match)."""
        old = self.table.ads[i]
        ctx = self.context
        exprs = dict(old._exprs)
        names = dict(old._names)
        for resource in ("Cpus", "Memory", "Disk", "GPUs"):
            low = resource.lower()
            if low not in names:
                continue
            wanted = number(job.evaluate(f"Request{resource}", ctx)) if f"Request{resource}" in job else None
            have = number(literal(old, resource, ctx, 0)) or 0.0
            if wanted is None or wanted < 0:
                wanted = 1.0 if resource == "Cpus" else 0.0
            value = min(have, wanted)
            exprs[low] = Literal(int(value) if float(value).is_integer() else value)
        return min(self.table.weights[i], self.table.weigh(ClassAd._from_tables(exprs, names)))

    def _deducted(self, i: int, ev: MatchEval) -> ClassAd:
        old = self.table.ads[i]
        exprs = dict(old._exprs)
        names = old._names
        for r, amount in ev.consumed:
            have = number(literal(old, r, self.context, 0)) or 0.0
            left = have - amount
            low = r.lower()
            if low not in names:
                names = dict(names) if names is old._names else names
                names[low] = r
            exprs[low] = Literal(int(left) if float(left).is_integer() else left)
        claims = number(literal(old, "NumClaims", self.context)) if "numclaims" in exprs else None
        if claims is not None:
            exprs["numclaims"] = Literal(int(claims) - 1)  # each match takes one of its claim ids
        ad = ClassAd._from_tables(exprs, names)
        ad._shared = names is old._names  # the name table is the old ad's: copied before any change
        return ad

    def take(self, cand: Candidate) -> None:
        t = self.table
        i = cand.index
        if cand.evaluation.consumed and not cand.dslots:
            if cand.after is None:
                self.cost(cand)
            ad = cand.after
            assert ad is not None
            t.replace_ad(i, ad, [r for r, _ in cand.evaluation.consumed], cand.after_weight)
            if (number(literal(ad, "Cpus", self.context, 1)) or 0.0) <= 0 \
                    or (number(literal(ad, "NumClaims", self.context, 1)) or 0.0) <= 0:
                t.take(i)
        else:
            t.take(i)
        for j in cand.dslots:
            t.take(j)
