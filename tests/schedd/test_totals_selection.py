"""condor_q -totals from the schedd's counts (``schedd/totals.py``) and the constraint scan that
evaluates once per distinct input (``schedd/selection.py``)."""

from __future__ import annotations

import pytest

from htcpool.classad import EvalContext, ExprTree, fixed_clock, parseOne
from htcpool.cli.formats import format_queue
from htcpool.cli.qfast import plain_totals_constraint, totals_text
from htcpool.protocol import QueueQuery, decode, encode
from htcpool.protocol.schedd import JobAction, JobActionKind, QueueCounts, QueueTotals
from htcpool.schedd import Schedd, ScheddError
from htcpool.schedd.selection import matching
from htcpool.schedd.totals import count_by_status, queue_totals
from tests.schedd.helpers import T0, schedd, submit


def _queue() -> tuple[Schedd, int, int]:
    core = schedd()
    first = submit(core, "", "", "", owner="alice")
    second = submit(core, "", "", owner="bob")
    core.handle(JobAction(JobActionKind.HOLD, "bob", (f"{second}.1",), "", "test"), T0)
    return core, first, second


def test_totals_count_the_query_and_the_whole_queue_by_status() -> None:
    core, _, second = _queue()
    reply = queue_totals(core.queue, QueueTotals('Owner == "bob"'), T0)
    assert reply.selected == {"1": 1, "5": 1}
    assert reply.everything == {"1": 4, "5": 1}
    assert reply.schedd_name == "schedd@submit"
    everything = queue_totals(core.queue, QueueTotals(), T0)
    assert everything.selected == everything.everything == {"1": 4, "5": 1}


def test_totals_answer_through_the_core_and_the_codec() -> None:
    core, _, _ = _queue()
    reply = queue_totals(core.queue, QueueTotals("JobStatus == 5"), T0)
    again = decode(encode(reply))
    assert isinstance(again, QueueCounts) and again == reply
    assert decode(encode(QueueTotals("x"))) == QueueTotals("x")


def test_a_constraint_that_does_not_parse_is_refused_with_its_text() -> None:
    core, _, _ = _queue()
    with pytest.raises(ScheddError, match="JobStatus =="):
        queue_totals(core.queue, QueueTotals("JobStatus =="), T0)


def test_a_status_that_is_not_a_number_counts_as_other() -> None:
    ads = [parseOne("[JobStatus = 1]"), parseOne('[JobStatus = "x"]'), parseOne("[JobStatus = 1 + 1]"),
           parseOne("[]")]
    assert count_by_status(ads) == {"1": 1, "other": 2, "2": 1}


def test_totals_text_is_what_condor_q_prints_from_the_ads() -> None:
    core, _, _ = _queue()
    ads = list(core.handle(QueueQuery(), T0).reply.ads)
    mine = [ad for ad in ads if ad.get("Owner") == "bob"]
    counts = queue_totals(core.queue, QueueTotals('Owner == "bob"'), T0)
    expected = format_queue(mine, now=int(T0), schedd_name="s@h", schedd_address="<1.2.3.4:5?x=y>",
                            view="totals", all_jobs=ads, zone=3600)
    assert totals_text(counts.selected, counts.everything, schedd_name="s@h",
                       schedd_address="<1.2.3.4:5?x=y>", now=int(T0), zone=3600) == expected


def test_only_plain_totals_take_the_short_path() -> None:
    assert plain_totals_constraint(["-totals"], "ann") == 'Owner == "ann"'
    assert plain_totals_constraint(["-totals", "-allusers"], "ann") == ""
    assert plain_totals_constraint(["-totals", "12", "3.4", "bob"], "ann") == \
        '(ClusterId == 12) || (ClusterId == 3 && ProcId == 4) || (Owner == "bob")'
    assert plain_totals_constraint(["-totals", "-constraint", "x"], "ann") is None
    assert plain_totals_constraint(["-allusers"], "ann") is None


@pytest.mark.parametrize("constraint", [
    "ClusterId == 2", 'Owner == "bob" && JobStatus == 1', "ProcId > 0", "JobStatus == 5 || Extra =?= 3",
    "random(2) >= 0", "Extra == 7", "TARGET.Memory > 1",
])
def test_matching_agrees_with_evaluating_every_job(constraint: str) -> None:
    core, _, _ = _queue()
    jobs = core.queue.jobs
    first = next(iter(jobs.values()))
    first["Extra"] = parseOne("[x = 3 + 4]").lookup("x")  # an expression: evaluated on its own
    test = ExprTree(constraint)
    ctx = EvalContext(clock=fixed_clock(int(T0)))
    expected = [ad for ad in jobs.values() if test.evaluate(ad, None, ctx) is True]
    assert list(matching(jobs.values(), test, ctx)) == expected
