"""Properties of the cycle over random pools (hypothesis), after the HTCondor manual's
"Negotiation", "Effective User Priority (EUP)" and "Accounting Groups with Hierarchical Group
Quotas"."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from htcpool.negotiator import (
    Accountant,
    GroupPolicy,
    GroupSettings,
    NegotiatorPolicy,
    SubmitterAd,
    negotiate,
)
from tests.negotiator.helpers import START, count_by, job, slot, submitters

pools = st.lists(
    st.tuples(st.sampled_from([1, 2, 4]), st.sampled_from([1024, 4096]), st.booleans()), min_size=1, max_size=25
)
workloads = st.lists(
    st.lists(st.tuples(st.sampled_from([1, 2]), st.sampled_from([512, 2048]), st.integers(-2, 2)),
             min_size=0, max_size=15),
    min_size=1, max_size=4,
)


def _build(pool: list[tuple[int, int, bool]], work: list[list[tuple[int, int, int]]],
           policy: NegotiatorPolicy, names: list[str]) -> tuple[list, list[SubmitterAd]]:
    slots = [
        slot(f"s{i}@m", Cpus=c, Memory=m) if not busy else
        slot(f"s{i}@m", Cpus=c, Memory=m, State="Claimed", Activity="Busy", RemoteUser="other@d", CurrentRank=0)
        for i, (c, m, busy) in enumerate(pool)
    ]
    jobs = {
        names[u]: [job(100 * u + k, 0, RequestCpus=c, RequestMemory=mem, JobPrio=p) for k, (c, mem, p) in enumerate(js)]
        for u, js in enumerate(work)
    }
    return slots, submitters(slots, jobs, policy)


@settings(max_examples=60, deadline=None)
@given(pools, workloads, st.booleans(), st.booleans())
def test_no_slot_is_matched_twice_and_jobs_fit(pool, work, preempt, global_prios) -> None:  # type: ignore[no-untyped-def]
    """Negotiation: a matched machine "is removed from the list of resources to match"; no job is
    placed twice, also when USE_GLOBAL_JOB_PRIOS splits submitters into entries."""
    pol = NegotiatorPolicy(preemption_requirements="True" if preempt else "False",
                           use_global_job_prios=global_prios)
    names = [f"u{i}@d" for i in range(len(work))]
    slots, subs = _build(pool, work, pol, names)
    out = negotiate(START, slots, subs, Accountant(), pol)
    taken = [m.slot for m in out.result.matches]
    assert len(taken) == len(set(taken))
    jobs_placed = [(m.submitter, m.job) for m in out.result.matches]
    assert len(jobs_placed) == len(set(jobs_placed))
    by_name = {s["Name"]: s for s in slots}
    for m in out.result.matches:
        assert by_name[m.slot]["Memory"] >= 512


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(0, 20), st.integers(0, 20), st.lists(st.integers(0, 60), min_size=2, max_size=2))
def test_quotas_never_exceeded_without_surplus(nslots, qa, qb, demand) -> None:  # type: ignore[no-untyped-def]
    """Group quotas: without surplus a group never runs more than its quota."""
    groups = GroupPolicy((GroupSettings("ga", qa), GroupSettings("gb", qb)), allow_quota_oversubscription=False)
    pol = NegotiatorPolicy(groups=groups)
    slots = [slot(f"s{i}@m") for i in range(nslots)]
    jobs = {"ga.x@d": [job(1, p) for p in range(demand[0])], "gb.y@d": [job(2, p) for p in range(demand[1])]}
    out = negotiate(START, slots, submitters(slots, jobs, pol), Accountant(), pol)
    assert out.groups is not None
    got = count_by(out.result.matches)
    for name, group in (("ga.x@d", "ga"), ("gb.y@d", "gb")):
        node = out.groups.get(group)
        assert node is not None
        assert got.get(name, 0) <= node.quota + 1e-9


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0, 10.0]), min_size=2, max_size=4))
def test_shares_converge_to_inverse_eup_ratio(factors) -> None:  # type: ignore[no-untyped-def]
    """EUP: resources are given in the inverse ratio of the EUPs (a pool of 600 slots)."""
    acct = Accountant()
    acct.update_priorities(START)
    names = [f"u{i}@d" for i in range(len(factors))]
    for n, f in zip(names, factors, strict=True):
        acct.set_priority_factor(n, f)
    slots = [slot(f"s{i}@m") for i in range(600)]
    subs = submitters(slots, {n: [job(i + 1, p) for p in range(700)] for i, n in enumerate(names)})
    out = negotiate(START, slots, subs, acct)
    got = count_by(out.result.matches)
    inv = {n: 1 / (0.5 * f) for n, f in zip(names, factors, strict=True)}
    total = sum(inv.values())
    for n in names:
        assert abs(got.get(n, 0) - 600 * inv[n] / total) <= len(names) + 1
