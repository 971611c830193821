"""The collector's ad store: keys, lifetimes, invalidation and queries, with a fake clock."""

from __future__ import annotations

import random

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.collector import (
    AdStore,
    CollectorQueryError,
    CollectorUpdateError,
    CollectorUsageError,
    ad_key,
)

T0 = 1_800_000_000.0


def machine(name: str, **attrs: object) -> ClassAd:
    ad = ClassAd({"MyType": "Machine", "Name": name, "State": "Unclaimed", "Memory": 1024,
                  "Cpus": 1, "MyAddress": f"<10.0.0.1:9618?name={name}>"})
    for key, value in attrs.items():
        ad[key] = ExprTree(value[1:]) if isinstance(value, str) and value[:1] == "=" else value
    return ad


def daemon(my_type: str, name: str, **attrs: object) -> ClassAd:
    ad = ClassAd({"MyType": my_type, "Name": name})
    for key, value in attrs.items():
        ad[key] = value
    return ad


def submitter(name: str, schedd: str, idle: int = 0) -> ClassAd:
    return daemon("Submitter", name, ScheddName=schedd, IdleJobs=idle)


def names(ads: list[ClassAd]) -> list[str]:
    return [ad["Name"] for ad in ads]


# ------------------------------------------------------------------ updates and keys


def test_update_stores_a_stamped_copy_and_replaces_by_name() -> None:
    store = AdStore()
    ad = machine("slot1@a")
    assert store.update(ad, T0 + 0.7) == ("machine", "slot1@a", "")
    ad["State"] = "Claimed"  # the caller's ad is not the stored one
    stored = store.lookup("MACHINE", "slot1@a")
    assert stored is not None
    assert stored["State"] == "Unclaimed" and stored["LastHeardFrom"] == int(T0)
    store.update(machine("slot1@a", State="Claimed", LastHeardFrom=5), T0 + 60)
    again = store.query("Machine", now=T0 + 60)
    assert len(again) == 1 and len(store) == 1
    assert again[0]["State"] == "Claimed" and again[0]["LastHeardFrom"] == int(T0 + 60)
    again[0]["State"] = "Owner"  # query results are copies too
    assert store.query("Machine", now=T0)[0]["State"] == "Claimed"


def test_types_are_compared_without_case_and_kept_apart() -> None:
    store = AdStore()
    store.update(daemon("Scheduler", "schedd@a"), T0)
    store.update(daemon("scheduler", "schedd@a", TotalIdleJobs=3), T0)
    store.update(daemon("DaemonMaster", "schedd@a"), T0)
    assert store.count("SCHEDULER") == 1 and store.count() == 2
    assert store.types() == ["daemonmaster", "scheduler"]
    assert ("scheduler", "schedd@a", "") in store
    assert store.query("Scheduler", now=T0)[0]["TotalIdleJobs"] == 3


def test_submitter_ads_are_keyed_by_name_and_schedd() -> None:
    store = AdStore()
    store.update(submitter("alice@pool", "schedd@a", idle=1), T0)
    store.update(submitter("alice@pool", "schedd@b", idle=2), T0)
    store.update(submitter("alice@pool", "schedd@a", idle=5), T0)
    ads = store.query("Submitter", now=T0)
    assert [(ad["ScheddName"], ad["IdleJobs"]) for ad in ads] == [("schedd@a", 5), ("schedd@b", 2)]
    assert ad_key(ads[1], T0) == ("submitter", "alice@pool", "schedd@b")
    assert store.lookup("Submitter", "alice@pool", "schedd@b") is not None


@pytest.mark.parametrize("ad", [ClassAd({"Name": "x"}), ClassAd({"MyType": "Machine"}),
                                ClassAd({"MyType": "Machine", "Name": 7})])
def test_an_ad_without_type_or_name_is_refused(ad: ClassAd) -> None:
    with pytest.raises(CollectorUpdateError):
        AdStore().update(ad, T0)


def test_daemon_statistics_count_updates_and_gaps() -> None:
    store = AdStore()

    def send(seq: int, started: int = 100) -> ClassAd:
        store.update(daemon("Negotiator", "neg@a", UpdateSequenceNumber=seq,
                            DaemonStartTime=started), T0)
        got = store.lookup("Negotiator", "neg@a")
        assert got is not None
        return got

    first = send(1)
    assert (first["UpdatesTotal"], first["UpdatesSequenced"], first["UpdatesLost"]) == (1, 0, 0)
    send(2)
    gap = send(5)  # 3 and 4 were lost
    assert (gap["UpdatesTotal"], gap["UpdatesSequenced"], gap["UpdatesLost"]) == (3, 4, 2)
    restart = send(1, started=200)  # a restarted daemon counts from 1 again: nothing lost
    assert (restart["UpdatesTotal"], restart["UpdatesSequenced"], restart["UpdatesLost"]) \
        == (4, 5, 2)
    store.update(daemon("Collector", "c@a"), T0)  # no sequence number: no statistics
    assert "UpdatesTotal" not in (store.lookup("Collector", "c@a") or {})
    quiet = AdStore(daemon_stats=False)
    quiet.update(daemon("Negotiator", "n", UpdateSequenceNumber=1, DaemonStartTime=1), T0)
    assert "UpdatesTotal" not in (quiet.lookup("Negotiator", "n") or {})


# ------------------------------------------------------------------ expiry


def test_ads_expire_after_the_default_lifetime() -> None:
    store = AdStore(default_lifetime=900)
    store.update(machine("slot1@a"), T0)
    store.update(machine("slot2@a"), T0 + 100)
    assert store.next_deadline() == T0 + 901  # first whole second with an age above 900
    assert store.expire(T0 + 900.9) == []
    assert store.expire(T0 + 901) == [("machine", "slot1@a", "")]
    assert store.next_deadline() == T0 + 1001
    store.update(machine("slot2@a"), T0 + 950)  # a fresh update moves the deadline
    assert store.expire(T0 + 1001) == []
    assert store.next_deadline() == T0 + 1851
    assert store.expire(T0 + 5000) == [("machine", "slot2@a", "")]
    assert store.next_deadline() is None and len(store) == 0


def test_an_ads_own_lifetime_wins() -> None:
    store = AdStore(default_lifetime=900)
    store.update(machine("short", ClassAdLifetime=30), T0)
    store.update(machine("long", ClassAdLifetime=3000), T0)
    store.update(machine("odd", ClassAdLifetime="not a number"), T0)
    store.update(machine("computed", ClassAdLifetime="=10 * 6"), T0)
    assert store.expire(T0 + 31) == [("machine", "short", "")]
    assert store.expire(T0 + 61) == [("machine", "computed", "")]
    assert store.expire(T0 + 901) == [("machine", "odd", "")]
    assert names(store.query("Machine", now=T0 + 901)) == ["long"]
    assert store.next_deadline() == T0 + 3001


def test_key_and_lifetime_expressions_read_the_update_time() -> None:
    """An ad whose Name or ClassAdLifetime is an expression of the time is filed with the values
    they have when the update arrives."""
    store = AdStore()
    ad = machine("placeholder", ClassAdLifetime="=ifThenElse(time() == 1800000000, 10, 1000)")
    ad["Name"] = ExprTree('strcat("slot1@", CurrentTime)')
    key = store.update(ad, T0)
    assert key == ("machine", "slot1@1800000000", "")
    assert store.expire(T0 + 10) == []
    assert store.expire(T0 + 11) == [key]


def test_many_updates_keep_the_deadline_heap_small() -> None:
    store = AdStore(default_lifetime=60)
    for i in range(2000):
        store.update(machine(f"slot{i % 10}@a"), T0 + i)
    assert len(store._heap) <= 2 * len(store) + 64
    assert store.next_deadline() == T0 + 1990 + 61
    assert len(store.expire(T0 + 10_000)) == 10


# ------------------------------------------------------------------ invalidation


def test_invalidate_by_name_and_by_constraint() -> None:
    store = AdStore()
    for n in range(1, 5):
        store.update(machine(f"slot{n}@a", Memory=n * 1000), T0)
    store.update(submitter("alice@pool", "schedd@a"), T0)
    store.update(submitter("bob@pool", "schedd@a"), T0)
    store.update(submitter("bob@pool", "schedd@b"), T0)
    assert store.invalidate("Machine", "slot1@a") == 1
    assert store.invalidate("Machine", "slot1@a") == 0
    assert store.invalidate("Machine", constraint="Memory >= 3000") == 2
    assert names(store.query("Machine", now=T0)) == ["slot2@a"]
    assert store.invalidate("Submitter", constraint='ScheddName == "schedd@a"') == 2
    assert [ad["ScheddName"] for ad in store.query("Submitter", now=T0)] == ["schedd@b"]
    assert store.invalidate("Machine", "slot2@a", constraint="Memory > 5000") == 0
    assert store.invalidate("Any", constraint="true") == 2
    assert len(store) == 0 and store.next_deadline() is None


def test_the_query_order_is_kept_as_ads_come_and_go() -> None:
    """The sorted order a query walks is kept as ads are added, invalidated by name or by
    constraint and expire (not re-sorted on each change): random changes, each query compared
    with a sort of what is held."""
    rng = random.Random(7)
    store = AdStore(default_lifetime=50)
    held: dict[str, float] = {}  # name -> when it was last updated
    for step in range(600):
        now = T0 + step
        name = f"slot{rng.randrange(40)}@m{rng.randrange(3)}"
        kind = rng.randrange(4)
        if kind <= 1:
            store.update(machine(name, Memory=rng.randrange(4) * 1000), now)
            held[name] = now
        elif kind == 2:
            assert store.invalidate("Machine", name, now=now) == (1 if name in held else 0)
            held.pop(name, None)
        else:
            gone = store.invalidate("Machine", constraint="Memory == 0", now=now)
            assert gone == sum(1 for n in list(held) if store.lookup("Machine", n) is None)
            held = {n: t for n, t in held.items() if store.lookup("Machine", n) is not None}
        for key in store.expire(now):
            held.pop(key[1], None)
        assert names(store.query("Machine", now=now)) == sorted(held), step
        if rng.random() < 0.3:  # the kept listing of every snapshot, mended as ads change
            kept = store.query("Machine", now=now, shared=True, include_private=True)
            fresh = [store._snapshot(e, True) for _, e in store._entries("Machine")]
            assert len(kept) == len(fresh) and all(a is b for a, b in zip(kept, fresh, strict=True)), step
            assert all(a is b for a, b in zip(kept, store.query("Machine", now=now, shared=True,
                                                                 include_private=True), strict=True))


def test_invalidate_needs_a_name_or_a_constraint() -> None:
    store = AdStore()
    store.update(machine("slot1@a"), T0)
    with pytest.raises(CollectorUsageError):
        store.invalidate("Machine")
    with pytest.raises(CollectorQueryError):
        store.invalidate("Machine", constraint="Memory >")
    assert len(store) == 1


# ------------------------------------------------------------------ queries


def _pool() -> AdStore:
    store = AdStore()
    store.update(machine("slot2@b", Memory=4096, State="Claimed"), T0,
                 private=ClassAd({"ClaimId": "<b>#2", "Capability": "<b>#2"}))
    store.update(machine("slot1@b", Memory=512), T0,
                 private=ClassAd({"ClaimId": "<b>#1", "MyType": "Nonsense"}))
    store.update(machine("slot1@a", Memory=2048), T0)
    store.update(daemon("Scheduler", "schedd@a", TotalIdleJobs=4), T0)
    store.update(daemon("Negotiator", "negotiator@cm"), T0)
    store.update(submitter("alice@pool", "schedd@a", idle=4), T0)
    return store


def test_query_orders_by_type_then_name_and_any_means_every_type() -> None:
    store = _pool()
    assert names(store.query("Machine", now=T0)) == ["slot1@a", "slot1@b", "slot2@b"]
    everything = store.query("Any", now=T0)
    assert [(ad["MyType"], ad["Name"]) for ad in everything] == [
        ("Machine", "slot1@a"), ("Machine", "slot1@b"), ("Machine", "slot2@b"),
        ("Negotiator", "negotiator@cm"), ("Scheduler", "schedd@a"),
        ("Submitter", "alice@pool"),
    ]
    assert store.query("Defrag", now=T0) == []
    assert names(store.query("any", limit=2, now=T0)) == ["slot1@a", "slot1@b"]
    assert len(store.query("any", limit=-1, now=T0)) == 6


def test_constraints_select_only_what_is_true() -> None:
    store = _pool()
    assert names(store.query("Machine", "Memory >= 2048", now=T0)) == ["slot1@a", "slot2@b"]
    assert names(store.query("Machine", "TARGET.Memory > 1000 && MY.State == \"Unclaimed\"",
                             now=T0)) == ["slot1@a"]
    assert store.query("Machine", "NoSuchAttr == 1", now=T0) == []  # undefined
    assert store.query("Machine", '"yes"', now=T0) == []  # not a boolean
    assert len(store.query("Machine", "Memory - 512", now=T0)) == 2  # non-zero numbers count
    assert len(store.query("Machine", "  ", now=T0)) == 3  # blank: no constraint
    assert names(store.query("Machine", "ClaimId =?= undefined", now=T0)) == names(
        store.query("Machine", now=T0))  # private attributes are not matched against


def test_constraints_read_the_query_clock() -> None:
    store = _pool()
    recent = "time() - LastHeardFrom < 60"
    assert len(store.query("Machine", recent, now=T0 + 30)) == 3
    assert store.query("Machine", recent, now=T0 + 90) == []


@pytest.mark.parametrize(("constraint", "column"), [
    ('Memory >= "unterminated', 11),
    ("Memory >=", 10),
    ("State == Unclaimed)", 19),
])
def test_a_malformed_constraint_names_itself_and_the_position(constraint: str,
                                                               column: int) -> None:
    with pytest.raises(CollectorQueryError) as caught:
        _pool().query("Machine", constraint, now=T0)
    error = caught.value
    assert error.constraint == constraint and error.column == column
    assert repr(constraint) in str(error) and f"column {column}" in str(error)


def test_projection_keeps_only_the_attributes_asked_for() -> None:
    store = _pool()
    ads = store.query("Machine", projection=["name", "Memory", "NotThere"], now=T0)
    assert [dict(ad) for ad in ads] == [
        {"Name": "slot1@a", "Memory": 2048},
        {"Name": "slot1@b", "Memory": 512},
        {"Name": "slot2@b", "Memory": 4096},
    ]
    whole = store.query("Machine", projection=[], now=T0)[0]
    assert "State" in whole and "LastHeardFrom" in whole
    with pytest.raises(CollectorUsageError):
        store.query("Machine", projection="Name", now=T0)


def test_private_attributes_only_when_asked() -> None:
    store = _pool()
    public = {ad["Name"]: ad for ad in store.query("Machine", now=T0)}
    assert all("ClaimId" not in ad for ad in public.values())
    private = {ad["Name"]: ad for ad in store.query("Machine", now=T0, include_private=True)}
    assert private["slot2@b"]["ClaimId"] == "<b>#2" and private["slot2@b"]["Capability"] == "<b>#2"
    assert private["slot1@b"]["MyType"] == "Machine"  # the public ad's type, name, address win
    assert "ClaimId" not in private["slot1@a"]
    projected = store.query("Machine", 'Name == "slot2@b"', ["ClaimId"], now=T0,
                            include_private=True)
    assert [dict(ad) for ad in projected] == [{"ClaimId": "<b>#2"}]
    # an update without a private ad keeps the one there; the private ad goes with the public
    store.update(machine("slot2@b", Memory=4096), T0 + 10)
    again = store.query("Machine", 'Name == "slot2@b"', now=T0 + 10, include_private=True)
    assert again[0]["ClaimId"] == "<b>#2"
    store.invalidate("Machine", "slot2@b")
    store.update(machine("slot2@b"), T0 + 20)
    fresh = store.query("Machine", 'Name == "slot2@b"', now=T0 + 20, include_private=True)
    assert "ClaimId" not in fresh[0]


def test_a_bad_type_argument_is_a_usage_error() -> None:
    with pytest.raises(CollectorUsageError):
        AdStore().query("", now=T0)


def test_absent_requirements_keep_an_expiring_machine_ad_marked_absent_for_their_lifetime() -> None:
    from htcpool.collector import AbsentPolicy, compile_constraint

    requirements = compile_constraint('Memory > 512')
    assert requirements is not None
    store = AdStore(default_lifetime=900, absent=AbsentPolicy(requirements, lifetime=3600))
    store.update(machine("big@a"), T0, private=ClassAd({"Capability": "secret"}))
    store.update(machine("small@a", Memory=256), T0)
    store.update(daemon("Scheduler", "schedd@a"), T0)
    assert sorted(store.expire(T0 + 901)) == [("machine", "small@a", ""), ("scheduler", "schedd@a", "")]
    assert store.query("Machine", now=T0 + 901) == []  # hidden from queries that do not ask
    [absent] = store.query("Machine", "Absent", now=T0 + 901)
    assert (absent["Absent"], absent["LastHeardFrom"], absent["MyCurrentTime"], absent["ClassAdLifetime"]) == \
           (True, int(T0 + 901), int(T0 + 901), 3600)
    assert store.query("Machine", "Absent =?= true", include_private=True, now=T0)[0].get("Capability") is None
    assert store.next_deadline() == T0 + 901 + 3601
    store.update(machine("big@a"), T0 + 1000)  # back: the fresh ad replaces the absent one
    assert [ad.get("Absent") for ad in store.query("Machine", now=T0 + 1000)] == [None]
    assert store.expire(T0 + 1901) == []  # absent again
    assert store.expire(T0 + 1901 + 3601) == [("machine", "big@a", "")]  # forgotten after its lifetime


def test_without_absent_requirements_nothing_is_kept_or_hidden() -> None:
    store = AdStore(default_lifetime=900)
    store.update(machine("a", Absent=True), T0)
    assert len(store.query("Machine", now=T0)) == 1
    assert store.expire(T0 + 901) == [("machine", "a", "")]
