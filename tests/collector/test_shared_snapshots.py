"""``AdStore.query(shared=True)``: one read-only snapshot per version of an ad, so a reader can
tell an unchanged ad by its identity (the negotiator's ``SlotMemo``)."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.collector import AdStore
from htcpool.collector.query import compile_constraint
from htcpool.collector.store import AbsentPolicy

T0 = 1_800_000_000.0


def machine(name: str, memory: int = 1024) -> ClassAd:
    return ClassAd({"MyType": "Machine", "Name": name, "Memory": memory, "MyAddress": f"<10.0.0.1?name={name}>"})


def test_an_unchanged_ad_is_the_same_snapshot_and_an_update_gives_a_new_one() -> None:
    store = AdStore()
    store.update(machine("a"), T0, private=ClassAd({"ClaimId": "secret"}))
    store.update(machine("b"), T0)
    first = store.query("Machine", now=T0 + 1, include_private=True, shared=True)
    again = store.query("Machine", now=T0 + 2, include_private=True, shared=True)
    assert [x is y for x, y in zip(first, again, strict=True)] == [True, True]
    assert first[0]["ClaimId"] == "secret"
    store.update(machine("a", 2048), T0 + 3)  # the private ad is kept, the public one replaced
    later = store.query("Machine", now=T0 + 4, include_private=True, shared=True)
    assert later[0] is not first[0] and later[0]["Memory"] == 2048 and later[0]["ClaimId"] == "secret"
    assert later[1] is first[1]
    public = store.query("Machine", now=T0 + 4, shared=True)
    assert "ClaimId" not in public[0] and public[0] is not later[0]
    copies = store.query("Machine", now=T0 + 4, include_private=True)
    assert copies[0] is not later[0] and copies[0]["Memory"] == 2048


def test_an_ad_kept_absent_is_a_new_snapshot() -> None:
    requirements = compile_constraint("true")
    assert requirements is not None
    store = AdStore(default_lifetime=10, absent=AbsentPolicy(requirements, lifetime=3600))
    store.update(machine("a"), T0)
    before = store.query("Machine", "Absent =?= true || true", now=T0, shared=True)[0]
    store.expire(T0 + 20)
    after = store.query("Machine", "Absent =?= true", now=T0 + 20, shared=True)
    assert len(after) == 1 and after[0] is not before and after[0]["Absent"] is True
    assert "Absent" not in before
