"""``dynamic._put``, the write of every moving slot attribute: an attribute that already holds the
value keeps its node (no new nodes for an unchanged ad), any other value is written, so the ad
always says what was put."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from htcpool.classad import ClassAd
from htcpool.startd.dynamic import _put

SCALARS = st.one_of(st.booleans(), st.integers(-2**40, 2**40), st.text(max_size=4),
                    st.floats(allow_nan=False, allow_infinity=False))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=4))


def test_an_equal_list_keeps_its_node_and_any_difference_replaces_it() -> None:
    ad = ClassAd()
    _put(ad, "ChildState", ["Claimed", "Claimed"])
    node = ad.lookup("ChildState").node
    _put(ad, "ChildState", ["Claimed", "Claimed"])
    assert ad.lookup("ChildState").node is node
    for other, text in ((["Claimed"], '{ "Claimed" }'), (["Claimed", "Unclaimed"], '{ "Claimed","Unclaimed" }'),
                        ([], "{  }")):
        _put(ad, "ChildState", other)
        assert repr(ad.lookup("ChildState")) == text
    _put(ad, "ChildCpus", [1, 2])
    _put(ad, "ChildCpus", [True, 2])  # a boolean is not the integer 1 in a ClassAd
    assert repr(ad.lookup("ChildCpus")) == "{ true,2 }"
    _put(ad, "ChildCpus", [1.0, 2])
    assert repr(ad.lookup("ChildCpus")) == "{ 1.000000000000000E+00,2 }"


@settings(max_examples=300, derandomize=True, deadline=None)
@given(VALUES, VALUES)
def test_the_ad_holds_what_was_put_last(first: object, second: object) -> None:
    ad = ClassAd()
    _put(ad, "X", first)
    _put(ad, "X", second)
    fresh = ClassAd()
    fresh["X"] = second
    assert repr(ad.lookup("X")) == repr(fresh.lookup("X"))
