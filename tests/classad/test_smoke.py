"""First end-to-end checks of the ClassAd core: parse, evaluate, print, match."""

import pytest

from htcpool.classad import ClassAd, ExprTree, Value


def test_arithmetic_and_printing() -> None:
    e = ExprTree("1 + 2 * 3")
    assert e.eval() == 7
    assert repr(e) == "1 + 2 * 3"


def test_nested_ads_and_lists() -> None:
    ad = ClassAd("[a = 1; b = a + 1; e = [x = y; y = parent.b]; f = e.x; g = {b, e.y}; h = g[1]]")
    assert ad.eval("f") == 2
    assert ad.eval("h") == 2
    assert repr(ad) == "[ a = 1; b = a + 1; e = [ x = y; y = 'parent'.b ]; f = e.x; g = { b,e.y }; h = g[1] ]"


def test_match_falls_back_to_target() -> None:
    my = ClassAd("[a = 1; requirements = x == 5]")
    target = ClassAd("[x = 5; requirements = TARGET.a == 1]")
    assert my.matches(target) and target.matches(my)
    assert ExprTree("x").eval(my, target) == 5
    assert ExprTree("x").eval(my) is Value.Undefined


def test_get_gives_what_the_mapping_protocol_gives() -> None:
    """``ClassAd.get`` (its own, for speed) agrees with ``Mapping.get`` on every kind of value."""
    from collections.abc import Mapping

    ad = ClassAd('[ A = 1; b = "x"; L = { 1, 2 }; N = [ c = 3 ]; E = A + 1; U = undefined ]')
    for name in ("A", "a", "B", "L", "N", "E", "U", "missing"):
        for default in (None, 7):
            mine, theirs = ad.get(name, default), Mapping.get(ad, name, default)
            assert type(mine) is type(theirs) and str(mine) == str(theirs), (name, mine, theirs)
    assert ad.get("missing") is None and ad.get("a") == 1 and ad.get("L") == [1, 2]


def test_pop_gives_and_removes_what_the_mapping_protocol_does() -> None:
    from collections.abc import MutableMapping

    text = '[ A = 1; b = "x"; L = { 1, 2 }; E = A + 1 ]'
    for name in ("a", "B", "L", "E", "missing"):
        mine, theirs = ClassAd(text), ClassAd(text)
        for default in (7, None):
            got, want = mine.pop(name, default), MutableMapping.pop(theirs, name, default)
            assert str(got) == str(want) and type(got) is type(want), (name, got, want)
            assert mine.same_as(theirs) and list(mine) == list(theirs), (name, mine, theirs)
    ad = ClassAd(text)
    with pytest.raises(KeyError):
        ad.pop("missing")
    assert ad.pop("A") == 1 and "A" not in ad and len(ad) == 3
