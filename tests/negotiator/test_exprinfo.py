"""What the negotiator reads off expressions without evaluating them: scoped names (a view of
``htcpool.classad.refs.references``) and their closure through an ad's own attributes."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.classad.parser import parse_expression
from htcpool.negotiator.exprinfo import closure, scoped_names


def test_selections_and_their_bases_count_as_unscoped_names() -> None:
    names = scoped_names(parse_expression("MY.x + TARGET.y + z + foo.bar + MY + TARGET"))
    assert names == {("my", "x"), ("target", "y"), (None, "z"), (None, "bar"), (None, "foo")}


def test_closure_follows_the_ads_own_attributes() -> None:
    slot = ClassAd("[Requirements = START && TARGET.Memory > 1; START = KFlops > Threshold; KFlops = 5]")
    own, other = closure(slot, [slot._exprs["requirements"]])
    assert own == {"start", "kflops", "threshold"}
    assert other == {"memory", "threshold"}  # an unscoped name the slot lacks may be the job's
