"""The knob adapter: ``policy_from_config`` over a fake configuration holding param_info.in defaults."""

from __future__ import annotations

from typing import Any

from htcpool.negotiator import NegotiatorPolicy, policy_from_config
from htcpool.negotiator.policy import autocluster_policy_from_config

# Defaults as param_info.in lists them (PRIORITY_HALFLIFE=86400, DEFAULT_PRIO_FACTOR=1000,
# NICE_USER_PRIO_FACTOR=1e10, REMOTE_PRIO_FACTOR=1e7, NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION=true,
# GROUP_QUOTA_MAX_ALLOCATION_ROUNDS=3, SLOT_WEIGHT=Cpus, PREEMPTION_REQUIREMENTS=False …).
PARAM_INFO = {
    "PRIORITY_HALFLIFE": "86400",
    "DEFAULT_PRIO_FACTOR": "1000",
    "NICE_USER_PRIO_FACTOR": "1e10",
    "NICE_USER_ACCOUNTING_GROUP_NAME": "nice-user",
    "REMOTE_PRIO_FACTOR": "1e7",
    "ACCOUNTANT_LOCAL_DOMAIN": "",
    "NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES": "false",
    "NEGOTIATOR_USE_SLOT_WEIGHTS": "true",
    "SLOT_WEIGHT": "Cpus",
    "PREEMPTION_REQUIREMENTS": "False",
    "PREEMPTION_RANK": "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)",
    "NEGOTIATOR_PRE_JOB_RANK": "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory",
    "NEGOTIATOR_POST_JOB_RANK": "(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops) - SlotID - 1.0e10*(Offline=?=True))",
    "NEGOTIATOR_CONSIDER_PREEMPTION": "true",
    "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION": "false",
    "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION": "true",
    "GROUP_SORT_EXPR": 'ifThenElse(AccountingGroup=?="<none>",3.4e+38,ifThenElse(GroupQuota>0,GroupResourcesInUse/GroupQuota,3.3e+38))',
    "GROUP_ACCEPT_SURPLUS": "false",
    "GROUP_AUTOREGROUP": "false",
    "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS": "3",
    "GROUP_QUOTA_ROUND_ROBIN_RATE": "1.0e100",
    "GROUP_NAMES": "",
    "NEGOTIATOR_USE_WEIGHTED_DEMAND": "true",
    "NEGOTIATOR_IGNORE_USER_PRIORITIES": "false",
    "NEGOTIATION_CYCLE_STATS_LENGTH": "3",
}


class FakeConfig:
    def __init__(self, **overrides: str) -> None:
        self.values = {**PARAM_INFO, **overrides}

    def get_str(self, name: str, *, subsystem: str | None = None) -> Any:
        return self.values.get(name)

    def get_bool(self, name: str, *, subsystem: str | None = None) -> Any:
        v = self.values.get(name)
        return None if v is None else v.lower() in ("true", "1", "yes")

    def get_int(self, name: str, *, subsystem: str | None = None) -> Any:
        v = self.values.get(name)
        return None if v is None else int(v)

    def get_float(self, name: str, *, subsystem: str | None = None) -> Any:
        v = self.values.get(name)
        return None if v is None else float(v)


def test_defaults_match_the_plain_policy() -> None:
    assert policy_from_config(FakeConfig()) == NegotiatorPolicy()


def test_groups_and_overrides() -> None:
    cfg = FakeConfig(
        GROUP_NAMES="group_physics, group_physics.hep group_chemistry",
        GROUP_QUOTA_group_physics="20",
        **{"GROUP_QUOTA_DYNAMIC_group_physics.hep": "0.75", "GROUP_ACCEPT_SURPLUS_group_physics.hep": "true"},
        GROUP_PRIO_FACTOR_group_chemistry="50",
        NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION="false",
        PREEMPTION_REQUIREMENTS="RemoteUserPrio > SubmitterUserPrio * 1.2",
    )
    pol = policy_from_config(cfg)
    g = {s.name: s for s in pol.groups.groups}
    assert g["group_physics"].static_quota == 20 and g["group_physics.hep"].dynamic_quota == 0.75
    assert g["group_physics.hep"].accept_surplus and not g["group_chemistry"].accept_surplus
    assert g["group_chemistry"].static_quota is None and g["group_chemistry"].dynamic_quota is None
    assert pol.accountant.group_prio_factors == {"group_chemistry": 50.0}
    assert not pol.groups.allow_quota_oversubscription
    assert pol.preemption_requirements.startswith("RemoteUserPrio")


def test_bad_quota_is_a_problem_not_an_error() -> None:
    """An unusable group quota is reported (naming the knob) and the policy is still built."""
    pol = policy_from_config(FakeConfig(GROUP_NAMES="g, h", GROUP_QUOTA_DYNAMIC_g="1.5", GROUP_QUOTA_h="lots"))
    g = {s.name: s for s in pol.groups.groups}
    assert g["g"].dynamic_quota == 1.0 and g["h"].static_quota is None
    assert any(p.startswith("GROUP_QUOTA_DYNAMIC_g = 1.5") and "outside 0 to 1" in p for p in pol.groups.problems)
    assert any(p.startswith("GROUP_QUOTA_h does not evaluate to a number") for p in pol.groups.problems)


def test_autocluster_knobs() -> None:
    pol = autocluster_policy_from_config(FakeConfig(SIGNIFICANT_ATTRIBUTES="Owner, RequestGpus",
                                                    NEGOTIATE_ALL_JOBS_IN_CLUSTER="true"))
    assert pol.significant_attributes == ("Owner", "RequestGpus") and pol.negotiate_all_jobs_in_cluster


def test_policy_from_a_real_config() -> None:
    """htcpool.config's Config, with HTCondor's own parameter table, gives the same defaults."""
    from htcpool.config import Config

    assert policy_from_config(Config.from_text("", subsystem="NEGOTIATOR")) == NegotiatorPolicy()
    cfg = Config.from_text(
        "GROUP_NAMES = group_physics, group_chemistry\n"
        "GROUP_QUOTA_group_physics = 20\nGROUP_QUOTA_DYNAMIC_group_chemistry = 0.33\n"
        "GROUP_ACCEPT_SURPLUS = True\nPRIORITY_HALFLIFE = 3600\n",
        subsystem="NEGOTIATOR",
    )
    pol = policy_from_config(cfg)
    assert pol.accountant.priority_halflife == 3600
    assert [(g.name, g.static_quota, g.dynamic_quota, g.accept_surplus) for g in pol.groups.groups] == [
        ("group_physics", 20.0, None, True), ("group_chemistry", None, 0.33, True)]



def test_slot_submitter_and_job_constraints() -> None:
    """``obtainAdsFromCollector`` and ``negotiate``: NEGOTIATOR_SLOT_CONSTRAINT limits the slots
    fetched, NEGOTIATOR_SUBMITTER_CONSTRAINT the submitters, and NEGOTIATOR_JOB_CONSTRAINT the jobs
    a schedd sends (its attributes join the significant ones, so autoclusters split on them)."""
    from htcpool.negotiator import Accountant, negotiate
    from tests.negotiator.helpers import START, job, slot, submitters

    slots = [slot("a@m", OpSys="LINUX"), slot("b@m", OpSys="WINDOWS"), slot("c@m", OpSys="LINUX")]
    jobs = {"u@d": [job(1, p, JobPrio=p % 2) for p in range(4)], "v@d": [job(2, p) for p in range(4)]}

    def run(**knobs: str) -> list[tuple[str, str, tuple[int, int]]]:
        pol = NegotiatorPolicy(ignore_user_priorities=True, **knobs)  # type: ignore[arg-type]
        acct = Accountant()
        acct.update_priorities(START)
        out = negotiate(START, slots, submitters(slots, jobs, pol), acct, pol)
        return sorted((m.submitter, m.slot, m.job) for m in out.result.matches)

    assert len(run()) == 3
    assert {m[1] for m in run(slot_constraint='OpSys == "LINUX"')} == {"a@m", "c@m"}
    assert {m[0] for m in run(submitter_constraint='Name != "u@d" && IdleJobs > 0')} == {"v@d"}
    got = run(job_constraint="JobPrio > 0", submitter_constraint='Name == "u@d"')
    assert [m[2] for m in got] == [(1, 1), (1, 3)]  # only u's JobPrio = 1 jobs are sent


def test_constraint_knobs_are_read_from_the_configuration() -> None:
    """The three constraint knobs come from the configuration (empty by default)."""
    pol = policy_from_config(FakeConfig(NEGOTIATOR_SLOT_CONSTRAINT="Cpus > 1", NEGOTIATOR_JOB_CONSTRAINT="JobPrio > 0"))
    assert pol.slot_constraint == "Cpus > 1" and pol.job_constraint == "JobPrio > 0"
    assert pol.submitter_constraint == ""
