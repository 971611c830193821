"""Concurrency limits, rejection reasons, NEGOTIATOR_IGNORE_JOB_RANKS and NEGOTIATOR_DEPTH_FIRST.

As HTCondor 25's negotiator does them (``Accountant.cpp``: limit counts rebuilt from the slots,
``LoadLimits``; ``matchmaker.cpp``: the rejection reason strings and NEGOTIATOR_DEPTH_FIRST in
``negotiate``, checking a job's ``ConcurrencyLimits``, PREEMPTION_REQUIREMENTS and
NEGOTIATOR_IGNORE_JOB_RANKS in ``matchmakingAlgorithm``).
"""

from __future__ import annotations

from htcpool.negotiator import Accountant, NegotiatorPolicy, negotiate, policy_from_config
from htcpool.negotiator.limits import ConcurrencyLimits, parse_limits
from tests.negotiator.helpers import START, claimed, count_by, job, many_jobs, slot, submitters


def _run(slots, jobs, pol=None):  # type: ignore[no-untyped-def]
    pol = pol or NegotiatorPolicy()
    return negotiate(START, slots, submitters(slots, jobs, pol), Accountant(), pol)


def test_parse_limits_names_and_counts() -> None:
    """A comma/space list of case-insensitive names, each optionally ``name:count``."""
    assert parse_limits("MATLAB, license.Foo:2  db:0.5") == [("matlab", 1.0), ("license.foo", 2.0), ("db", 0.5)]
    assert parse_limits("x:0 y:junk") == [("x", 1.0), ("y", 1.0)]


def test_limit_maximum_lookup_order() -> None:
    """The cap: ``<NAME>_LIMIT``, else ``CONCURRENCY_LIMIT_DEFAULT_<prefix>`` for a dotted name,
    else CONCURRENCY_LIMIT_DEFAULT."""
    lim = ConcurrencyLimits({"license.special": 7, "matlab": 2}, {"license": 3}, 5)
    assert [lim.maximum(n) for n in ("MATLAB", "license.special", "license.other", "other", "x.y")] == [
        2, 7, 3, 5, 5]


def test_running_jobs_count_against_a_limit() -> None:
    """``LoadLimits`` and ``matchmakingAlgorithm``: the running job a slot reports counts; a job
    whose limit is exhausted is rejected with "concurrency limit <name> reached", and matches made
    earlier in the cycle count."""
    slots = [claimed("busy@m", "bob@d", ConcurrencyLimits="MATLAB")] + [slot(f"s{i}@m") for i in range(4)]
    pol = NegotiatorPolicy(concurrency_limits={"matlab": 3})
    out = _run(slots, {"alice@d": many_jobs(5, ConcurrencyLimits="Matlab")}, pol)
    assert len(out.result.matches) == 2  # 1 running + 2 matched = 3
    assert {m.concurrency_limits for m in out.result.matches} == {"matlab"}
    assert [r.reason for r in out.result.rejections] == ["concurrency limit matlab reached"]
    out = _run(slots, {"alice@d": many_jobs(5, ConcurrencyLimits="matlab:2")}, pol)
    assert len(out.result.matches) == 1  # 1 + 2 = 3; another 2 would pass the cap
    free = [s for s in slots if s["State"] == "Unclaimed"]
    assert len(_run(free, {"alice@d": many_jobs(5, ConcurrencyLimits="matlab")}, pol).result.matches) == 3


def test_default_limits_and_dotted_names() -> None:
    """Dotted names fall back to CONCURRENCY_LIMIT_DEFAULT_<prefix>, others to
    CONCURRENCY_LIMIT_DEFAULT."""
    slots = [slot(f"s{i}@m") for i in range(10)]
    jobs = {
        "a@d": many_jobs(3, 1, ConcurrencyLimits="license.x"),
        "b@d": many_jobs(3, 2, ConcurrencyLimits="license.y"),
        "c@d": many_jobs(3, 3, ConcurrencyLimits="db"),
        "d@d": many_jobs(3, 4),
    }
    out = _run(slots, jobs, NegotiatorPolicy(ignore_user_priorities=True, concurrency_limit_default=2,
                                             concurrency_limit_defaults={"license": 1}))
    assert count_by(out.result.matches) == {"a@d": 1, "b@d": 1, "c@d": 2, "d@d": 3}


def test_matched_and_preempting_limits_count() -> None:
    """``LoadLimits``: ``PreemptingConcurrencyLimits`` and, for a Matched slot,
    ``MatchedConcurrencyLimits`` count as well."""
    slots = [
        slot("m@m", State="Matched", MatchedConcurrencyLimits="lic"),
        claimed("p@m", "bob@d", PreemptingConcurrencyLimits="lic", RetirementTimeRemaining=60),
        slot("a@m"), slot("b@m"),
    ]
    pol = NegotiatorPolicy(concurrency_limits={"lic": 3})
    out = _run(slots, {"alice@d": many_jobs(3, ConcurrencyLimits="lic")}, pol)
    assert len(out.result.matches) == 1


def test_expression_limits_are_evaluated_per_slot() -> None:
    """A ``ConcurrencyLimits`` expression is evaluated against each candidate slot."""
    slots = [slot("a1@m", Site="a"), slot("a2@m", Site="a"), slot("b1@m", Site="b")]
    pol = NegotiatorPolicy(concurrency_limits={"site_a": 1, "site_b": 0})
    out = _run(slots, {"alice@d": many_jobs(3, ConcurrencyLimits='=strcat("site_", TARGET.Site)')}, pol)
    assert [(m.slot, m.concurrency_limits) for m in out.result.matches] == [("a1@m", "site_a")]
    assert out.result.rejections[0].reason == "concurrency limit site_a reached"


def test_limits_from_config() -> None:
    """Defaults (``param_info.in``): CONCURRENCY_LIMIT_DEFAULT (2308032), ``<NAME>_LIMIT`` and
    ``CONCURRENCY_LIMIT_DEFAULT_<prefix>`` read through the policy adapter."""
    from htcpool.config import Config

    pol = policy_from_config(Config.from_text("", subsystem="NEGOTIATOR"))
    assert pol.concurrency_limit_default == 2308032 and pol.concurrency_limits == {}
    cfg = Config.from_text(
        "MATLAB_LIMIT = 2\nLICENSE.SPECIAL_LIMIT = 4\nCONCURRENCY_LIMIT_DEFAULT_LICENSE = 1\n"
        "CONCURRENCY_LIMIT_DEFAULT = 5\nNEGOTIATOR_IGNORE_JOB_RANKS = True\nNEGOTIATOR_DEPTH_FIRST = True\n",
        subsystem="NEGOTIATOR",
    )
    pol = policy_from_config(cfg, limit_names=["db"])
    assert pol.concurrency_limits == {"matlab": 2, "license.special": 4}
    assert pol.concurrency_limit_defaults == {"license": 1}
    assert pol.concurrency_limit_default == 5
    assert pol.ignore_job_ranks and pol.depth_first


def test_preemption_requirements_false_is_the_reason() -> None:
    """``negotiate``'s rejection reasons: when every claimed candidate of another user is refused by
    PREEMPTION_REQUIREMENTS, the rejection reads "PREEMPTION_REQUIREMENTS == False"; a slot of the
    submitter's own is no candidate at all ("no match found")."""
    out = _run([claimed("s@m", "bob@d")], {"alice@d": [job(1)]})
    assert [r.reason for r in out.result.rejections] == ["PREEMPTION_REQUIREMENTS == False"]
    out = _run([claimed("s@m", "alice@d")], {"alice@d": [job(1)]})
    assert [r.reason for r in out.result.rejections] == ["no match found"]


def test_ignore_job_ranks() -> None:
    """``calculateRanks``: with NEGOTIATOR_IGNORE_JOB_RANKS the job's Rank is a constant."""
    slots = [slot("a@m"), slot("b@m")]
    jobs = {"alice@d": [job(1, Rank='=TARGET.Name == "b@m"')]}
    base = NegotiatorPolicy(pre_job_rank="0", post_job_rank="0")
    assert [m.slot for m in _run(slots, jobs, base).result.matches] == ["b@m"]
    ignore = NegotiatorPolicy(pre_job_rank="0", post_job_rank="0", ignore_job_ranks=True)
    assert [m.slot for m in _run(slots, jobs, ignore).result.matches] == ["a@m"]


def test_depth_first_skips_the_jobs_the_schedd_packs() -> None:
    """``negotiate``: with NEGOTIATOR_DEPTH_FIRST a match advances the request by
    min(Cpus / RequestCpus, Memory / RequestMemory) jobs."""
    slots = [slot("p@m", Cpus=4, Memory=4096, PartitionableSlot=True), slot("s@m")]
    jobs = {"alice@d": many_jobs(6, RequestMemory=1024)}
    out = _run(slots, jobs, NegotiatorPolicy(pre_job_rank="Cpus", ignore_user_priorities=True))
    assert [(m.slot, m.packed_jobs) for m in out.result.matches] == [("p@m", ()), ("s@m", ())]
    out = _run(slots, jobs, NegotiatorPolicy(pre_job_rank="Cpus", depth_first=True, ignore_user_priorities=True))
    assert [(m.slot, m.job, m.packed_jobs) for m in out.result.matches] == [
        ("p@m", (1, 0), ((1, 1), (1, 2), (1, 3))), ("s@m", (1, 4), ())]
    assert [r.job for r in out.result.rejections] == [(1, 5)]
