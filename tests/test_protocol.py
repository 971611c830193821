"""The protocol's JSON form: every message round-trips; malformed messages are refused by field."""

from __future__ import annotations

import ast
import dataclasses
import enum
import json
import typing
from pathlib import Path

import pytest

from htcpool import protocol
from htcpool.classad import ClassAd, ExprTree
from htcpool.protocol import (
    MESSAGE_TYPES,
    AdList,
    DaemonCommand,
    JobEvent,
    JobUpdate,
    MatchInfo,
    ProtocolError,
    Submit,
    carry,
    decode,
    encode,
)
from htcpool.protocol.startd import Drain, DrainCompletion, RequestClaim, SensorReadings


def _sample(cls: type) -> object:
    values: dict[str, object] = {}
    hints = typing.get_type_hints(cls, globalns=vars(__import__(cls.__module__, fromlist=["_"])))
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        hint = str(f.type)
        kind = hints[f.name]
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            values[f.name] = list(kind)[-1]
        elif "ClassAd" in hint and "tuple" in hint:
            values[f.name] = (ClassAd({"A": 1}),)
        elif "ClassAd" in hint:
            values[f.name] = ClassAd({"Name": "x", "Requirements": "TARGET.Memory > 2"})
        elif "tuple" in hint:
            values[f.name] = ("a",)
        elif hint.startswith("Mapping[str, int]"):
            values[f.name] = {"1": 2, "other": 0}
        elif hint.startswith("int"):
            values[f.name] = 3
        elif hint.startswith("float"):
            values[f.name] = 1.5
        elif hint.startswith("bool"):
            values[f.name] = True
        else:
            values[f.name] = "text"
    return cls(**values)


@pytest.mark.parametrize("name", sorted(MESSAGE_TYPES))
def test_every_message_round_trips_through_json(name: str) -> None:
    message = _sample(MESSAGE_TYPES[name])
    again = decode(json.loads(json.dumps(encode(message))))
    assert type(again) is type(message)
    for f in dataclasses.fields(message):  # type: ignore[arg-type]
        a, b = getattr(message, f.name), getattr(again, f.name)
        if isinstance(a, ClassAd):
            assert a.same_as(b) or repr(a) == repr(b)
        elif isinstance(a, tuple) and a and isinstance(a[0], ClassAd):
            assert [repr(x) for x in a] == [repr(x) for x in b]
        else:
            assert a == b


@pytest.mark.parametrize("name", sorted(MESSAGE_TYPES))
def test_every_message_is_carried_in_memory_unchanged(name: str) -> None:
    message = _sample(MESSAGE_TYPES[name])
    again = carry(message)
    assert type(again) is type(message)
    assert encode(again) == encode(message)


def test_enum_fields_travel_as_their_values_and_come_back_as_members() -> None:
    update = JobUpdate("c", "slot1@h", JobEvent.MISSED_DEFERRAL)
    assert encode(update)["event"] == "missed_deferral"
    assert carry(update).event is JobEvent.MISSED_DEFERRAL
    drain = carry(Drain(on_completion=DrainCompletion.RESTART))
    assert drain.on_completion is DrainCompletion.RESTART


def test_an_enum_field_refuses_other_values_naming_the_choices() -> None:
    with pytest.raises(ProtocolError) as e:
        decode({"type": "DaemonCommand", "command": "explode"})
    assert "DaemonCommand.command: expected one of 'off'" in str(e.value)
    assert decode({"type": "DaemonCommand", "command": "reconfig"}) == DaemonCommand("reconfig")  # type: ignore[arg-type]


def test_the_protocol_package_imports_no_core() -> None:
    """Every core and both drivers share the protocol, so it may import only the ClassAd language."""
    package = Path(protocol.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                if name.startswith("htcpool."):
                    assert name.split(".")[1] in ("classad", "protocol"), f"{path.name} imports {name}"


def test_classads_keep_expressions() -> None:
    m = MatchInfo("c", ClassAd({"Name": "slot1@h", "Memory": 1024}), 1, 0, "alice@h", ("d1",))
    again = decode(encode(m))
    assert again.slot_ad["Memory"] == 1024 and again.preempt_claim_ids == ("d1",)
    claim = decode(encode(RequestClaim("c", ClassAd({"RequestCpus": 2}), "schedd", 30.0)))
    assert claim.request.evaluate("RequestCpus") == 2 and claim.alive_interval == 30.0
    readings = decode(encode(SensorReadings(load_avg=1, condor_load={"slot1@h": 0.5})))
    assert readings.load_avg == 1.0 and readings.condor_load == {"slot1@h": 0.5}


@pytest.mark.parametrize("data,words", [
    ([], "JSON object"),
    ({"type": "Nope"}, "unknown message type"),
    ({"type": "MatchInfo"}, "'claim_id' is missing"),
    ({"type": "Ok", "detail": 3}, "Ok.detail: expected a string"),
    ({"type": "Ok", "extra": 1}, "unknown field 'extra'"),
    ({"type": "QueryAds", "my_type": "Machine", "limit": True}, "expected an integer"),
    ({"type": "AdList", "ads": [{"$ad": "[a = ]"}]}, "AdList.ads[0]: the ClassAd does not parse"),
    ({"type": "AdList", "ads": [3]}, "expected a ClassAd"),
    ({"type": "Submit", "owner": "a", "ads": "x"}, "Submit.ads: expected a list"),
])
def test_malformed_messages_name_the_field(data: object, words: str) -> None:
    with pytest.raises(ProtocolError) as e:
        decode(data)
    assert words in str(e.value)


def test_only_protocol_messages_encode() -> None:
    with pytest.raises(TypeError):
        encode(object())
    assert "Submit" in protocol.__all__


def _cluster(n: int) -> tuple[ClassAd, ...]:
    """Job ads as the submit core makes them: copies of one ad, each with its own ProcId."""
    first = ClassAd({"ClusterId": 7, "Cmd": "/bin/sleep", "RemoteUserCpu": 0.0, "Owner": "alice"})
    first.insert_node("Requirements", ExprTree("TARGET.Memory >= 64 && TARGET.Arch == \"X86_64\"")._node)
    ads = []
    for proc in range(n):
        ad = first.copy()
        ad["ProcId"] = proc
        ad["RemoteUserCpu"] = 0.0  # a fresh literal, equal to the previous ad's
        ads.append(ad)
    return tuple(ads)


def test_a_run_of_similar_ads_travels_as_the_changes_and_comes_back_whole() -> None:
    ads = _cluster(3)
    data = json.loads(json.dumps(encode(Submit("alice", ads))))
    assert set(data["ads"][0]) == {"$ad"}
    assert data["ads"][1:] == [{"$set": {"ProcId": 1}}, {"$set": {"ProcId": 2}}]
    again = decode(data).ads
    assert [repr(a) for a in again] == [repr(a) for a in ads]
    assert again[2]["ProcId"] == 2 and again[2]["Cmd"] == "/bin/sleep"
    # the unchanged expressions are shared, as they were on the sending side
    assert again[0]._exprs["requirements"] is again[2]._exprs["requirements"]


@pytest.mark.parametrize("change", ["drop", "respell", "negative zero", "other type"])
def test_ads_that_are_not_a_superset_of_the_previous_one_travel_whole(change: str) -> None:
    first, second = _cluster(2)
    if change == "drop":
        del second["Owner"]
    elif change == "respell":
        second = ClassAd._from_tables(dict(second._exprs), {**second._names, "cmd": "CMD"})
    elif change == "negative zero":
        second["RemoteUserCpu"] = -0.0
    else:
        second["RemoteUserCpu"] = 0
    data = json.loads(json.dumps(encode(AdList((first, second)))))
    if change in ("drop", "respell"):
        assert set(data["ads"][1]) == {"$ad"}
    else:
        assert data["ads"][1] == {"$set": {"ProcId": 1, "RemoteUserCpu": second["RemoteUserCpu"]}}
    again = decode(data).ads
    assert [repr(a) for a in again] == [repr(a) for a in (first, second)]
    if change == "negative zero":
        assert str(again[1].lookup("RemoteUserCpu")).startswith("-")
    if change == "other type":
        assert type(again[1]["RemoteUserCpu"]) is int


def test_changes_that_are_not_plain_literals_travel_as_text() -> None:
    first, second = _cluster(2)
    second.insert_node("Requirements", ExprTree("TARGET.Memory >= 128")._node)
    second["Environment"] = ["a", "b"]
    second["Rate"] = float("inf")  # JSON has no infinity: it goes as ClassAd text
    data = json.loads(json.dumps(encode(AdList((first, second)))))
    assert set(data["ads"][1]) == {"$prev"}
    assert "TARGET.Memory >= 128" in data["ads"][1]["$prev"]
    again = decode(data).ads
    assert [repr(a) for a in again] == [repr(a) for a in (first, second)]


@pytest.mark.parametrize(("changes", "says"), [
    ({"ProcId": None}, "AdList.ads[1].ProcId: expected a string, a number or true/false"),
    ({"ProcId": [1]}, "AdList.ads[1].ProcId: expected a string, a number or true/false"),
    ({"": 1}, "AdList.ads[1]: an attribute name is empty"),
    ([1], 'AdList.ads[1]: "$set" must be an object of attribute values'),
])
def test_malformed_plain_changes_are_refused(changes: object, says: str) -> None:
    with pytest.raises(ProtocolError) as e:
        decode({"type": "AdList", "ads": [{"$ad": "[ a = 1 ]"}, {"$set": changes}]})
    assert says in str(e.value)


def test_changes_without_a_previous_ad_are_refused() -> None:
    with pytest.raises(ProtocolError) as e:
        decode({"type": "AdList", "ads": [{"$prev": "[ a = 1 ]"}]})
    assert "AdList.ads[0]: expected a ClassAd" in str(e.value)
    with pytest.raises(ProtocolError) as e:
        decode({"type": "AdList", "ads": [{"$ad": "[ a = 1 ]"}, {"$prev": "[ b = ]"}]})
    assert "AdList.ads[1]: the ClassAd does not parse" in str(e.value)
