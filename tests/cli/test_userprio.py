"""condor_userprio's command line (``htcpool userprio``): its options read as HTCondor 25 reads them,
its tables compared byte for byte with ../shared/golden/tools, and each display and edit option's
outcome on the golden pool (einstein running 3 jobs in group_physics, curie idle in
group_chemistry, both groups with quota 2 accepting surplus)."""

from __future__ import annotations

import datetime as dt

import pytest

from htcpool.classad import ClassAd
from htcpool.cli.common import ToolError
from htcpool.cli.options import render
from htcpool.cli.userprio import change_command, parse, reslist, select
from htcpool.negotiator import Accountant, accounting_ads, apply_userprio
from htcpool.negotiator.userprio_format import UserprioView, format_reslist, format_userprio
from htcpool.protocol import UserprioOp
from tests.negotiator.test_userprio_format import GOLDEN, _golden_pool


def _table(argv: list[str], ads: list[dict] | None = None, now: float | None = None) -> str:
    """What ``htcpool userprio ARGV`` prints for the golden pool (or ``ads``)."""
    golden_ads, golden_now = _golden_pool()
    ads = golden_ads if ads is None else ads
    now = golden_now if now is None else now
    args, _ = parse(argv)
    view = UserprioView(args.details, args.dash_quota, args.hierarchical, args.dash_hier, args.group_order,
                        args.group_rollup, args.min_last)
    return format_userprio(select(ads, args, now), now=now, view=view, last_update=now)


@pytest.mark.parametrize("argv,name", [([], "condor_userprio"), (["-most"], "condor_userprio_most"),
                                       (["-all"], "condor_userprio_all"), (["-quotas"], "condor_userprio_quotas"),
                                       (["-q"], "condor_userprio_quotas"), (["--all"], "condor_userprio_all")])
def test_the_command_line_prints_htcondors_tables(argv: list[str], name: str) -> None:
    if not GOLDEN.is_dir():
        pytest.skip(f"no golden outputs at {GOLDEN}")
    assert _table(argv) == (GOLDEN / f"{name}.txt").read_text()


def test_a_pool_with_no_records_prints_the_headings_and_footer_only() -> None:
    now = dt.datetime(2026, 11, 22, 0, 48, tzinfo=dt.UTC).timestamp()
    text = _table([], accounting_ads(Accountant(), None, now), now)
    lines = text.splitlines()
    assert lines[0] == "Last Priority Update: 11/22 00:48"
    assert lines[1].split() == ["Effective", "Priority", "Wghted", "Total", "Usage", "Time", "Since", "Submitter",
                                "Submitter"]
    assert lines[3] == lines[4] and set(lines[3]) == {"-", " "}  # the two rules, no row between them
    assert lines[5].startswith("Number of users: 0") and len(lines) == 6


def test_every_record_under_allusers_with_no_cell_cut() -> None:
    text = _table(["-allusers"])
    lines = text.splitlines()
    assert len({len(line) for line in lines[1:]}) == 1  # every row is the table's full width
    none_row = next(line for line in lines if line.startswith("<none>"))
    since = lines[2].index("Last Usage")
    assert none_row[since - 1:since + 10].strip() == ""  # never used: no time since, not a cut number
    assert "  curie@localhost" in text and "Number of users: 2" in text


def test_named_submitters_are_shown_active_or_not() -> None:
    assert "curie" in _table(["group_chemistry.curie@localhost"])
    text = _table(["group_chemistry.curie"])  # the part before the @
    assert "curie@localhost" in text and "einstein" not in text and "Number of users: 1" in text
    assert "einstein" not in _table(["-constraint", 'Name == "group_chemistry.curie@localhost"', "-allusers"])


def test_usage_and_priority_views() -> None:
    usage = _table(["-usage"]).splitlines()
    assert usage[1].split() == ["Group", "Wghted", "Total", "Usage", "Usage", "Last"]
    assert "11/22/2026 00:47 11/22/2026 00:48" in usage[4]
    prio = _table(["-prio"]).splitlines()  # -priority may be shortened to four letters
    assert prio[2].split() == ["User", "Name", "Priority", "Priority", "Factor"]
    assert prio[4].split() == ["group_physics.einstein@localhost", "501.08", "0.50", "1000.00"]  # flat, no groups


def test_flat_grouporder_and_grouprollup_layouts() -> None:
    flat = _table(["-flat", "-allusers"]).splitlines()
    names = [line.split()[0] for line in flat[4:-2]]
    assert names == ["<none>", "group_chemistry", "group_chemistry.curie@localhost", "group_physics",
                     "group_physics.einstein@localhost"]
    order = [line.split()[0] for line in _table(["-grouporder", "-allusers"]).splitlines()[4:-2]]
    assert order == ["<none>", "group_chemistry", "group_physics", "group_chemistry.curie@localhost",
                     "group_physics.einstein@localhost"]
    rollup = _table(["-grouprollup", "-allusers", "-most", "-groupid"]).splitlines()
    assert rollup[1].split()[:2] == ["Group", "Group"] and rollup[2].split()[:4] == ["User", "Name", "Id", "Quota"]
    rows = {line.split()[0]: line.split() for line in rollup[4:-2]}
    # <none> (group id blank) sums every user's use; group_physics its own user's; curie's group none
    assert rows["<none>"][1:6] == ["0.00", "yes", "1000.00", "3", "0.04"]
    assert rows["group_physics"][1:7] == ["2", "2.00", "ByQuota", "1000.00", "3", "0.04"]
    assert rows["group_chemistry"][1:6] == ["1", "2.00", "ByQuota", "1000.00", "0"]
    assert _table(["-groupid"]).splitlines()[1].split() == ["Group", "Group"]  # -groupid alone: that column only


def test_activefrom_is_a_date() -> None:
    args, _ = parse(["-activefrom", "11", "21", "26"])
    assert dt.datetime.fromtimestamp(args.min_last or 0).strftime("%Y-%m-%d %H:%M") == "2026-11-21 00:00"
    with pytest.raises(ToolError):
        parse(["-activefrom", "11"])


def test_long_and_autoformat_print_the_ads_kept() -> None:
    ads, now = _golden_pool()
    args, out = parse(["-long", "-constraint", "IsAccountingGroup"])
    text = render([ClassAd(a) for a in select(ads, args, now)], out, now=now) or ""
    assert 'Name = "group_physics"' in text and "einstein" not in text and text.endswith("\n\n")
    args, out = parse(["group_physics.einstein@localhost", "-af", "Name", "PriorityFactor"])
    assert render([ClassAd(a) for a in select(ads, args, now)], out, now=now) == \
        "group_physics.einstein@localhost 1000.0\n"


@pytest.mark.parametrize("argv,op,value,report", [
    (["-setceiling", "a@d", "50"], UserprioOp.SETCEILING, 50, "The ceiling of a@d was set to 50"),
    (["-setceil", "a@d", "-1"], UserprioOp.SETCEILING, -1, "The ceiling of a@d was set to -1"),
    (["-setfloor", "a@d", "5"], UserprioOp.SETFLOOR, 5, "The floor of a@d was set to 5"),
    (["-setbegin", "a@d", "1700000000"], UserprioOp.SETBEGIN, 1700000000,
     "The Begin Usage Time of a@d was set to 1700000000"),
    (["-setlast", "a@d", "1700000100"], UserprioOp.SETLAST, 1700000100,
     "The Last Usage Time of a@d was set to 1700000100"),
    (["-setprio", "a@d", "100"], UserprioOp.SETPRIO, 100, "The priority of a@d was set to 100.000000"),
    (["-setfactor", "a@d", "2", "-duration", "60"], UserprioOp.SETFACTOR, 2,
     "Set priority-factor lease on a@d to 2.000000 for 60 seconds"),
    (["-del", "a@d"], UserprioOp.DELETE, 0, "The accountant record named a@d was deleted"),
    (["-resetall"], UserprioOp.RESETALL, 0, "The accumulated usage was reset for all users"),
])
def test_edit_options_and_their_reports(argv: list[str], op: UserprioOp, value: float, report: str) -> None:
    command, text = change_command(parse(argv)[0])
    assert (command.op, command.value, text) == (op, value, report)


@pytest.mark.parametrize("argv,message", [
    (["-setfloor", "alice", "5"], "full name of the submittor"), (["-setfloor", "a@d", "-2"], "floor must be"),
    (["-setceiling", "a@d", "-5"], "ceiling must be"), (["-setfactor", "a@d", "0.5"], "Priority factors"),
    (["-setbegin", "a@d", "-1"], "Time must be"), (["-setprio", "a@d"], "needs 2 values"),
])
def test_bad_edits_are_refused_with_htcondors_words(argv: list[str], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        change_command(parse(argv)[0])


def test_setbegin_and_setlast_change_the_record() -> None:
    acct = Accountant()
    for argv in (["-setbegin", "a@d", "1700000000"], ["-setlast", "a@d", "1700000100"]):
        apply_userprio(acct, change_command(parse(argv)[0])[0], 1700000200.0)
    rec = acct.records["a@d"]
    assert (rec.begin_usage_time, rec.last_usage_time) == (1700000000, 1700000100)


def test_getreslist_lists_the_submitters_claimed_slots() -> None:
    slots = [ClassAd({"Name": "slot1_1@node1", "State": "Claimed", "AccountingGroup": "g.a@d",
                      "EnteredCurrentState": 1795308453}),
             ClassAd({"Name": "slot1_2@node1", "State": "Claimed", "RemoteUser": "b@d", "EnteredCurrentState": 1}),
             ClassAd({"Name": "slot1@node1", "State": "Unclaimed"})]
    text = format_reslist(reslist(slots, "g.a@d"), now=1795308453 + 3723)
    assert text.splitlines() == [
        "Resource Name                    Start Time   Match Time",
        "-------------                    ----------   ----------",
        "slot1_1@node1                   11/22 00:47   0+01:02:03",
        "-------------                   ------------  ------------",
        "Number of Resources Used: 1",
    ]
