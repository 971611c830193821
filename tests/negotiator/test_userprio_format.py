"""condor_userprio's tables (``user_prio.cpp``), compared byte for byte with HTCondor 25's output in
../shared/golden/tools (a 4-core pool, groups group_physics and group_chemistry with quotas 2
and 2 accepting surplus, einstein running 3 one-core jobs in group_physics for 54 s)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from htcpool.negotiator import Accountant, GroupPolicy, GroupSettings, GroupTree, accounting_ads
from htcpool.negotiator.userprio_format import format_userprio, number, time_since
from tests.negotiator.helpers import claimed

GOLDEN = Path(__file__).resolve().parents[2].parent / "shared" / "golden" / "tools"
T0 = dt.datetime(2026, 11, 22, 0, 47, 10, tzinfo=dt.UTC).timestamp()
EINSTEIN = "group_physics.einstein@localhost"


def _golden_pool() -> tuple[list[dict], float]:
    groups = GroupPolicy((GroupSettings("group_physics", 2, accept_surplus=True),
                          GroupSettings("group_chemistry", 2, accept_surplus=True)))
    tree = GroupTree(groups)
    acct = Accountant(assigned_group=tree.assigned_group)
    acct.update_priorities(T0)
    running = [claimed(f"slot1_{i}@node1", EINSTEIN, AccountingGroup=EINSTEIN) for i in range(1, 4)]
    acct.check_matches(running, T0)  # the cycle at 00:47:10 finds the jobs running
    acct.update_priorities(T0 + 30)  # usage begins 00:47:40
    acct.check_matches(running, T0 + 30)
    acct.update_priorities(T0 + 54)  # last update and usage 00:48:04
    acct.record("group_chemistry.curie@localhost")  # submitted, never ran
    tree.assign_quotas(4)
    tree.get("group_physics").demand = 3  # type: ignore[union-attr]  # 3 running, none idle
    ads = accounting_ads(acct, tree, T0 + 54)
    return ads, T0 + 80  # the tool ran 26 s after the last update


@pytest.mark.parametrize("name,view", [("condor_userprio", "most"), ("condor_userprio_most", "most"),
                                       ("condor_userprio_all", "all"), ("condor_userprio_quotas", "quotas")])
def test_matches_htcondor_byte_for_byte(name: str, view: str) -> None:
    if not GOLDEN.is_dir():
        pytest.skip(f"no golden outputs at {GOLDEN}")
    ads, now = _golden_pool()
    expected = (GOLDEN / f"{name}.txt").read_text()
    assert format_userprio(ads, now=now, view=view) == expected


def test_inactive_records_are_hidden_unless_all_users() -> None:
    """Only names used in the last 24 h are listed; -allusers lists every record."""
    ads, now = _golden_pool()
    text = format_userprio(ads, now=now)
    assert "curie" not in text and "group_chemistry" not in text
    everyone = format_userprio(ads, now=now, active_window=None)
    assert "  curie@localhost" in everyone and "Number of users: 2" in everyone
    assert "group_chemistry" in everyone


def test_cells() -> None:
    """%W.Df, too wide → %.(W-6)g; time since as D+HH:MM, <now> when not positive."""
    assert number(1000.0, 9, 2) == "  1000.00"
    assert number(1e10, 9, 2) == "    1e+10"
    assert time_since(86340) == "0+23:59" and time_since(90061) == "1+01:01" and time_since(0) == "<now>"
