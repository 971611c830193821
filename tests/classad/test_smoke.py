"""First end-to-end checks of the ClassAd core: parse, evaluate, print, match."""

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
