"""condor_status's text (``htcpool.cli.formats.status``, ``adtext``) against HTCondor 25."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, parseAds
from htcpool.cli.formats import format_long, format_status, format_status_af, totals_table
from htcpool.cli.formats.status import activity_time
from tests.cli.golden_pool import QUERY_TIME, golden, sanitize, slot_ads


def _slot(name: str, state: str = "Unclaimed", **attrs: object) -> ClassAd:
    slot = ClassAd(
        {
            "Name": name,
            "Machine": name.split("@")[-1],
            "OpSys": "LINUX",
            "Arch": "X86_64",
            "State": state,
            "Activity": "Idle",
            "CondorLoadAvg": 0.0,
            "LoadAvg": 0.25,
            "Memory": 1024,
            "EnteredCurrentActivity": QUERY_TIME - 3661,
            "MyCurrentTime": QUERY_TIME,
        }
    )
    for key, value in attrs.items():
        slot[key] = value
    return slot


# ---------------------------------------------------------------- the goldens


def test_default_view_matches_golden() -> None:
    assert sanitize(format_status(slot_ads(), now=QUERY_TIME)) == golden("condor_status.txt")


def test_total_view_matches_golden() -> None:
    text = format_status(slot_ads(), view="total", now=QUERY_TIME)
    assert sanitize(text) == golden("condor_status_total.txt")


def test_nothing_selected_prints_nothing() -> None:
    assert golden("condor_status_run.txt") == ""
    for view in ("default", "run", "total"):
        assert format_status([], view=view, now=QUERY_TIME) == ""


def test_autoformat_matches_golden() -> None:
    text = format_status_af(slot_ads(), ["Name", "State", "Activity", "Cpus", "Memory"], now=QUERY_TIME)
    assert sanitize(text) == golden("condor_status_af.txt")


def test_long_matches_golden() -> None:
    ads = parseAds(golden("condor_status_long.txt"))
    assert format_long(ads) == golden("condor_status_long.txt")


# ---------------------------------------------------------------- columns


def test_state_column_is_as_wide_as_its_longest_state() -> None:
    lines = format_status([_slot("slot1@a.example.org", "Claimed")], now=0).split("\n")
    assert lines[0].startswith("Name" + " " * 31 + "OpSys      Arch     State   Activity LoadAv")
    assert lines[2] == (
        "slot1@a.example.org                LINUX      X86_64   Claimed Idle      0.000   1024"
        "  0+01:01:01"
    )


def test_load_column_shows_condor_load_not_machine_load() -> None:
    row = format_status([_slot("s@h", CondorLoadAvg=1.5)], now=0).split("\n")[2]
    assert " 1.500 " in row and "0.250" not in row


def test_long_names_overflow_their_column() -> None:
    name = "slot1_12@" + "x" * 40
    row = format_status([_slot(name)], now=0).split("\n")[2]
    assert row.startswith(name + " LINUX ")


def test_console_width_cuts_rows() -> None:
    name = "slot1_12@" + "x" * 40
    text = format_status([_slot(name)], now=0, width=80)
    assert all(len(line) <= 79 for line in text.split("\n")[:3])


def test_activity_time_prefers_the_slot_clock() -> None:
    slot = _slot("s@h")
    assert activity_time(slot, now=0) == "0+01:01:01"
    del slot["MyCurrentTime"]
    slot["LastHeardFrom"] = QUERY_TIME + 60
    assert activity_time(slot, now=0) == "0+01:02:01"
    del slot["LastHeardFrom"]
    assert activity_time(slot, now=QUERY_TIME + 86400) == "1+01:01:01"
    del slot["EnteredCurrentActivity"]
    assert activity_time(slot, now=0) == "-"


def test_run_view_columns() -> None:
    slot = _slot("slot1_1@h", "Claimed", RemoteUser="bob@h", ClientMachine="10.0.0.7")
    lines = format_status([slot], view="run", now=0).split("\n")
    assert lines[0].startswith("Name" + " " * 31 + "OpSys      Arch     LoadAv RemoteUser")
    assert lines[2].startswith("slot1_1@h" + " " * 26 + "LINUX      X86_64    0.000 bob@h ")
    assert lines[2].endswith(" 10.0.0.7")


# ---------------------------------------------------------------- totals


def test_totals_group_by_platform() -> None:
    slots = [
        _slot("s1@a"),
        _slot("s2@a", "Claimed"),
        _slot("s1@b", "Owner", OpSys="WINDOWS"),
        _slot("s2@b", "Drained", OpSys="WINDOWS"),
    ]
    assert totals_table(slots) == (
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle\n"
        "\n"
        "  X86_64/LINUX     2     0       1         1       0          0      0        0      0\n"
        "X86_64/WINDOWS     2     1       0         0       0          0      1        0      0\n"
        "\n"
        "         Total     4     1       1         1       0          0      1        0      0\n"
    )


def test_long_platform_keys_widen_the_key_column() -> None:
    text = totals_table([_slot("s@a", Arch="AARCH64", OpSys="FREEBSD13")])
    assert text.split("\n")[2] == (
        "AARCH64/FREEBSD13     1     0       0         1       0          0      0        0      0"
    )


def test_unknown_states_are_reported_as_malformed() -> None:
    text = totals_table([_slot("s@a"), _slot("t@a", "Confused")])
    assert text.endswith(
        "         Total     1     0       0         1       0          0      0        0      0\n"
        "\n              (Omitted 1 malformed ads in computed attribute totals)\n\n"
    )


def test_unknown_view_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown condor_status view"):
        format_status([_slot("s@a")], view="sideways", now=0)
