"""Group quota configuration the negotiator cannot use: a group in GROUP_NAMES with no quota, a quota
that does not evaluate, a missing parent, a macro that refers back to itself. Each is a sentence that
names its knob (with file and line where the configuration has them), and the groups that can be
used still negotiate."""

from __future__ import annotations

from htcpool.config import Config
from htcpool.negotiator import (
    Accountant,
    GroupPolicy,
    GroupSettings,
    GroupTree,
    NegotiatorPolicy,
    negotiate,
    policy_from_config,
)
from tests.negotiator.helpers import START, count_by, many_jobs, slot, submitters

CONFIG = """GROUP_NAMES = group_chemistry, group_broken, group_noquota, group_orphan.child, group_loop, \\
    group_dyn, GROUP_CHEMISTRY, a..b
GROUP_QUOTA_group_chemistry = 3
GROUP_QUOTA_group_broken = lots
GROUP_QUOTA_group_orphan.child = 2
GROUP_QUOTA_group_loop = $(GROUP_QUOTA_DYNAMIC_group_loop)
GROUP_QUOTA_DYNAMIC_group_loop = $(GROUP_QUOTA_group_loop)
GROUP_QUOTA_DYNAMIC_group_dyn = 1.5
GROUP_ACCEPT_SURPLUS_group_dyn = maybe
GROUP_SORT_EXPR = GroupQuota +
"""


def _policy() -> NegotiatorPolicy:
    return policy_from_config(Config.from_text(CONFIG, source="/etc/condor/condor_config", subsystem="NEGOTIATOR"))


def test_each_problem_names_its_knob_file_and_line() -> None:
    problems = GroupTree(_policy().groups).problems
    text = "\n".join(problems)
    expected = [
        'GROUP_QUOTA_group_broken does not evaluate to a number ("/etc/condor/condor_config", line 4',
        "GROUP_NAMES lists group_noquota, but neither GROUP_QUOTA_group_noquota nor "
        "GROUP_QUOTA_DYNAMIC_group_noquota gives it a quota; its quota is 0",
        "GROUP_QUOTA_group_loop does not evaluate to a number",
        "refers back to itself",
        'GROUP_QUOTA_DYNAMIC_group_dyn = 1.5 ("/etc/condor/condor_config", line 8) is outside 0 to 1; 1 is used',
        "GROUP_ACCEPT_SURPLUS_group_dyn is not a boolean",
        'GROUP_SORT_EXPR = GroupQuota + ("/etc/condor/condor_config", line 10) does not parse',
        "GROUP_NAMES: group 'group_orphan.child' has no parent: 'group_orphan' is not in GROUP_NAMES",
        "GROUP_NAMES: group 'GROUP_CHEMISTRY' duplicates 'group_chemistry'",
        "GROUP_NAMES: group 'a..b' has an empty part",
    ]
    for sentence in expected:
        assert sentence in text, f"missing {sentence!r} in:\n{text}"
    assert len(problems) == len(expected), text  # one sentence per problem, no echoes


def test_negotiation_goes_on_for_the_usable_groups() -> None:
    """Chemistry gets its quota of 3; a group with an unusable quota has quota 0 (HTCondor's rule for
    a group without a quota) and nothing to take it from; the orphan's submitters fall back to the
    root group, which the chemistry's quota leaves 2 slots."""
    pol = _policy()
    slots = [slot(f"s{i}@m") for i in range(5)]
    jobs = {"group_chemistry.curie@d": many_jobs(10, 1), "group_broken.bob@d": many_jobs(10, 2),
            "group_orphan.child.ann@d": many_jobs(10, 3)}
    acct = Accountant()
    acct.update_priorities(START)
    out = negotiate(START, slots, submitters(slots, jobs, pol), acct, pol)
    assert out.groups is not None and out.groups.assigned_group("group_orphan.child.ann@d") == "<none>"
    assert count_by(out.result.matches) == {"group_chemistry.curie@d": 3, "group_orphan.child.ann@d": 2}


def test_a_tree_built_from_settings_reports_its_shape_problems() -> None:
    tree = GroupTree(GroupPolicy((GroupSettings("<none>", 1), GroupSettings("x.y", 1), GroupSettings("x", 4))))
    assert [p.split(";")[0] for p in tree.problems] == [
        "GROUP_NAMES: group '<none>' uses the name reserved for the root group <none>"]
    assert tree.get("x.y") is not None  # parents are placed first, whatever the order in GROUP_NAMES
