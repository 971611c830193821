"""The one "attributes an expression reads" analysis (``refs.references``) and the ad's views built
on it, ``externalRefs`` and ``internalRefs``."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.classad.parser import parse_expression
from htcpool.classad.refs import Reference, Scope, references

M, T, U, S = Scope.MY, Scope.TARGET, Scope.UNSCOPED, Scope.SELECTED


@pytest.mark.parametrize(("text", "expected"), [
    ("TARGET.Memory >= RequestMemory && MY.Cpus > 1",
     [(M, "Cpus"), (U, "RequestMemory"), (T, "Memory")]),
    ("a.b.c + .Abs + [x = y].x + {p}[0].q", [(S, "q"), (S, "x"), (U, "Abs"), (S, "c")]),
    ("MY + target.Disk + my.TARGET.z", [(S, "z"), (T, "Disk"), (U, "MY")]),
    ("strcat(Owner, Owner)", [(U, "Owner"), (U, "Owner")]),
    ("1 + 2", []),
])
def test_references_name_each_reference_with_its_scope(text: str, expected: list[tuple[Scope, str]]) -> None:
    assert [(r.scope, r.name) for r in references(parse_expression(text))] == expected


def test_a_reference_carries_its_base_and_spelling() -> None:
    refs = {r.name: r for r in references(parse_expression("job.Owner + .Root + TARGET.Memory"))}
    base = refs["Owner"].base
    assert base is not None and refs["Owner"].key == "owner" and repr(ExprTree._wrap(base)) == "job"
    assert refs["Root"].absolute and refs["Root"].base is None
    assert refs["Memory"] == Reference(T, "Memory", "memory")  # equality leaves the base out
    # the base of a selection is not walked: its own references are the caller's to follow
    assert [r.name for r in references(base)] == ["job"]


def test_external_and_internal_references_of_an_ad() -> None:
    ad = ClassAd("[Memory = 4; Req = Memory > x; nested = [inner = 1]]")
    expr = ExprTree("Req && TARGET.Disk > nested.inner + nested.missing + other.thing")
    assert ad.externalRefs(expr) == ["missing", "other.thing", "TARGET.Disk", "x"]
    assert ad.internalRefs(expr) == ["Memory", "nested", "Req"]
    assert ad.externalRefs(ExprTree("MY.Memory + MY.nope")) == ["nope"]
    assert ClassAd().externalRefs(ExprTree("1 + 2")) == []
