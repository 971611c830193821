"""Ads decoded from a run of ``$set`` changes share one name table, each copying it before a change."""

from __future__ import annotations

import json

from htcpool.classad import ClassAd
from htcpool.protocol import Submit, decode, encode


def test_a_set_run_shares_names_and_each_ad_changes_alone() -> None:
    first = ClassAd({"Cmd": "/bin/true", "ProcId": 0, "Owner": "alice"})
    ads = []
    for proc in range(3):
        ad = first.copy()
        ad["ProcId"] = proc
        ads.append(ad)
    wire = json.loads(json.dumps(encode(Submit("alice", tuple(ads), 4))))
    assert wire["ads"][1] == {"$set": {"ProcId": 1}}
    got = decode(wire).ads
    assert got[0]._names is got[1]._names is got[2]._names
    got[1]["Extra"] = 1
    del got[2]["Cmd"]
    got[0]["ProcId"] = 10
    assert [sorted(ad) for ad in got] == [["Cmd", "Owner", "ProcId"], ["Cmd", "Extra", "Owner", "ProcId"],
                                          ["Owner", "ProcId"]]
    assert [ad["ProcId"] for ad in got] == [10, 1, 2]
    again = decode(json.loads(json.dumps(encode(Submit("alice", got, 4))))).ads
    assert [repr(ad) for ad in again] == [repr(ad) for ad in got]
