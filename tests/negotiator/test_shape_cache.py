"""The closure cache kept across cycles (``exprinfo.shape_closure``): unchanged slot ads reuse
their analysis, and an ad whose expressions changed is analysed afresh."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import Accountant, exprinfo, negotiate
from htcpool.negotiator.exprinfo import closure, expression_shape, shape_closure
from tests.negotiator.helpers import START, job, slot, submitters


def test_ads_differing_only_in_literals_share_a_shape_and_others_do_not() -> None:
    a = slot("s1@m", Memory=1024)
    b = slot("s2@m", Memory=4096)
    b.insert_node("Requirements", a._exprs["requirements"])
    assert expression_shape(a) == expression_shape(b)
    c = a.copy()
    c["Start"] = ExprTree("Memory > 2048")  # a literal turned into an expression
    assert expression_shape(c) != expression_shape(a)
    d = a.copy()
    d["Extra"] = 1  # one more name
    assert expression_shape(d) != expression_shape(a)



def test_lists_of_literals_are_values_to_a_shape() -> None:
    """A Python list assigned to an ad becomes a list node of that ad's own: two slots with equal
    lists (a p-slot's ``ChildName``, a machine's ``OfflineUniverses``) still share a shape, since a
    list of literals reads nothing; a list that reads an attribute is an expression."""
    a = slot("s1@m")
    b = slot("s2@m", Memory=4096)
    b.insert_node("Requirements", a._exprs["requirements"])
    a["ChildName"] = ["slot1_1@m", "slot1_2@m"]
    b["ChildName"] = ["slot1_3@m"]
    assert a._exprs["childname"] is not b._exprs["childname"]
    assert expression_shape(a) == expression_shape(b)
    c = b.copy()
    c["ChildName"] = ExprTree('{ "slot1_3@m", Name }')
    assert expression_shape(c) != expression_shape(b)
    own, other = shape_closure(expression_shape(c), c, [c._exprs["childname"]])
    assert "name" in own

def test_a_changed_expression_is_followed_again() -> None:
    """The same names, but START now reads the job's Owner: the cached closure of the old ad
    must not be reused for the new one."""
    a = slot("s1@m")
    nodes = [a._exprs["requirements"]]
    own, other = shape_closure(expression_shape(a), a, nodes)
    assert (own, other) == tuple(frozenset(x) for x in closure(a, nodes))
    assert "owner" not in other
    b = a.copy()
    b["Start"] = ExprTree('TARGET.Owner == "alice"')
    own_b, other_b = shape_closure(expression_shape(b), b, [b._exprs["requirements"]])
    assert "owner" in other_b and own_b == frozenset(closure(b, [b._exprs["requirements"]])[0])


def test_the_cache_keeps_what_its_keys_name_alive_and_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exprinfo, "CLOSURE_CACHE_SIZE", 3)
    exprinfo._closure_cache.clear()
    before = expression_shape(slot("s@m"))
    for i in range(5):
        ad = ClassAd({"Name": f"s{i}"})
        ad["Start"] = ExprTree(f"Memory > {i}")
        shape_closure(expression_shape(ad), ad, [ad._exprs["start"]])
        assert len(exprinfo._closure_cache) <= 3
    assert expression_shape(slot("s@m")) != before  # the table was cleared: a new number, never an old one
    # every shape holds the nodes whose ids it names, and no number is given twice
    numbers = [number for number, _ in exprinfo._shape_numbers.values()]
    assert len(numbers) == len(set(numbers)) and len(exprinfo._shape_numbers) <= 3
    for (_, ids), (_, alive) in exprinfo._shape_numbers.items():
        assert {i for i in ids if i is not None} <= {id(n) for n in alive}


def test_a_slot_whose_start_changed_between_cycles_is_matched_by_its_new_start() -> None:
    """Two cycles over the same slots: in the second, one slot's START refuses alice. The
    second cycle must see it (the analysis of the first cycle's ad is not reused)."""
    slots = [slot(f"s{i}@m") for i in range(2)]
    first = negotiate(START, slots, submitters(slots, {"alice@d": [job(1, 0)]}), Accountant())
    assert len(first.result.matches) == 1
    changed = slots[0].copy()
    changed["Start"] = ExprTree('TARGET.Owner =!= "alice"')
    again = [changed, slots[1].copy()]
    second = negotiate(START + 60, again, submitters(again, {"alice@d": [job(2, 0, Owner="alice"), job(3, 0, Owner="alice")]}), Accountant())
    assert [m.slot for m in second.result.matches] == ["s1@m"], second.result.matches
