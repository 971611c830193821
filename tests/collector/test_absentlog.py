"""The persistent ad log's text (``collector.absentlog``) and the store's absent-ad hooks."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.collector import AbsentPolicy, AdStore, compile_constraint
from htcpool.collector.absentlog import AbsentLogError, format_absent_log, parse_absent_log

T0 = 1_800_000_000


def _policy(lifetime: int = 100) -> AbsentPolicy:
    requirements = compile_constraint("Memory > 0")
    assert requirements is not None
    return AbsentPolicy(requirements, lifetime)


def test_ads_read_back_as_written_including_awkward_strings_lists_and_expressions() -> None:
    ad = ClassAd({"MyType": "Machine", "Name": "slot1@a", "Note": 'line\nbreak "quoted"', "L": [1, "x"],
                  "R": 1.5, "Absent": True})
    ad["Start"] = ExprTree('Memory > 0 && Owner == "me"')
    [back] = parse_absent_log(format_absent_log([ad]), "f")
    assert back.keys() == ad.keys()
    assert all(str(back.lookup(k)) == str(ad.lookup(k)) for k in ad.keys())
    assert back["Note"] == 'line\nbreak "quoted"'


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("[\nMyType = \"Machine\"\nName = \"a\"\n", 1, "no closing ']'"),
    ("Name = \"a\"\n", 1, "expected '['"),
    ("[\nMyType = \"Machine\"\nName = \n]\n", 3, "expected 'Attr = expression'"),
    ("[\nMyType = \"Machine\"\nName = (1 +\n]\n", 3, "not a ClassAd expression"),
    ("# c\n[\nMyType = \"Machine\"\n]\n", 2, "no Name string"),
    ("]\n", 1, "without an ad"),
    ("[\n[\n", 2, "inside the ad opened on line 1"),
])
def test_a_bad_file_is_refused_naming_the_file_line_and_what_was_expected(text: str, line: int,
                                                                          problem: str) -> None:
    with pytest.raises(AbsentLogError) as caught:
        parse_absent_log(text, "/x/absent.log")
    assert caught.value.line == line
    assert str(caught.value).startswith(f"/x/absent.log, line {line}: ")
    assert problem in str(caught.value)


def test_the_absent_version_moves_with_each_change_to_the_absent_ads() -> None:
    store = AdStore(absent=_policy())
    store.update(ClassAd({"MyType": "Machine", "Name": "a", "Memory": 1, "ClassAdLifetime": 10}), T0)
    assert store.absent_version == 0
    store.expire(T0 + 11)
    assert store.absent_version == 1 and [ad["Name"] for ad in store.absent_ads()] == ["a"]
    store.update(ClassAd({"MyType": "Machine", "Name": "a", "Memory": 1}), T0 + 12)  # it came back
    assert store.absent_version == 2 and store.absent_ads() == []
    store.update(ClassAd({"MyType": "Machine", "Name": "b", "Memory": 1}), T0 + 12)
    assert store.absent_version == 2  # a live ad changing is no change to the absent ones


def test_a_restored_ad_keeps_its_times_and_is_forgotten_when_they_say() -> None:
    source = AdStore(absent=_policy(lifetime=100))
    source.update(ClassAd({"MyType": "Machine", "Name": "a", "Memory": 1, "ClassAdLifetime": 10}), T0)
    source.expire(T0 + 11)
    [saved] = parse_absent_log(format_absent_log(source.absent_ads()), "f")
    store = AdStore(absent=_policy(lifetime=100))
    assert store.restore_absent(saved, T0 + 50) == ("machine", "a", "")
    assert store.query("Machine", "Absent", now=T0 + 50)[0]["LastHeardFrom"] == T0 + 11
    assert store.query("Machine", now=T0 + 50) == []  # hidden from queries that do not ask for it
    assert store.restore_absent(saved, T0 + 50) is None  # the key is taken
    assert store.next_deadline() == T0 + 11 + 100 + 1
    store.expire(T0 + 112)
    assert store.absent_ads() == []
    assert AdStore(absent=_policy()).restore_absent(saved, T0 + 112) is None  # already due
