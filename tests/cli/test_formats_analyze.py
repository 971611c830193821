"""``condor_q -better-analyze`` (``formats.analyze``, ``formats.clauses``) against HTCondor 25."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.parser import parse_expression
from htcpool.cli.formats import format_better_analyze
from htcpool.cli.formats.analyze import references, summary_lines
from htcpool.cli.formats.clauses import (
    count_matches,
    find_constants,
    numbered_lines,
    propagate_constants,
    reduced_rows,
    split_clauses,
    wrap_expression,
)
from tests.cli.golden_pool import (
    QUERY_TIME,
    SCHEDD_ADDRESS,
    SCHEDD_NAME,
    golden,
    queue_jobs,
    sanitize,
    slot_ads,
)

AT_QUERY = EvalContext(clock=fixed_clock(QUERY_TIME))


def _job(cluster: int, proc: int) -> ClassAd:
    return next(j for j in queue_jobs() if (j["ClusterId"], j["ProcId"]) == (cluster, proc))


def _analyze(job: ClassAd, slots: list[ClassAd]) -> str:
    return format_better_analyze(job, slots, schedd_name=SCHEDD_NAME, schedd_address=SCHEDD_ADDRESS,
                                 now=QUERY_TIME)


@pytest.mark.parametrize(
    ("cluster", "proc", "name"),
    [(2, 3, "condor_q_better_analyze_2.3.txt"), (3, 0, "condor_q_better_analyze_3.0.txt")],
)
def test_matches_golden(cluster: int, proc: int, name: str) -> None:
    assert sanitize(_analyze(_job(cluster, proc), slot_ads())) == golden(name)


# ---------------------------------------------------------------- splitting


def test_steps_number_operands_before_operators() -> None:
    clauses = split_clauses(parse_expression("(a == 1) && ((b < 2) || c) && f(x)"))
    assert numbered_lines(clauses) == [
        "    [0]    : a == 1",
        "    [1]    : b < 2",
        "    [2]    : c",
        "    [3]    : [1] || [2]",
        "    [4]    : [0] && [3]",
        "    [5]    : f(x)",
        "    [6]    : [4] && [5]",
    ]


def test_negation_and_conditional_keep_their_own_steps() -> None:
    clauses = split_clauses(parse_expression("!(a == 1) && (b ? c : d)"))
    labels = [c.plain_label() for c in clauses]
    assert labels == ["a == 1", "! [0]", "b", "c", "d", "[2] ? [3] : [4]", "[1] && [5]"]


def test_parentheses_split_again_inside_comparisons() -> None:
    clauses = split_clauses(parse_expression("(a + (b && c)) > 3 && d"))
    assert [c.plain_label() for c in clauses] == [
        "b",
        "c",
        "[0] && [1]",
        "a + (b && c)",
        "(a + (b && c)) > 3",
        "d",
        "[4] && [5]",
    ]


# ---------------------------------------------------------------- constants and counting


def _table(requirements: str, job: ClassAd, slots: list[ClassAd]) -> list[str]:
    node = parse_expression(requirements)
    clauses = split_clauses(node)
    find_constants(clauses, job, [references(c.node, job)[1] for c in clauses], AT_QUERY)
    propagate_constants(clauses)
    count_matches(clauses, job, slots, AT_QUERY)
    return reduced_rows(clauses)


def test_constant_false_clause_decides_the_expression() -> None:
    job = ClassAd({"Flag": False})
    rows = _table("(MY.Flag == true) && (TARGET.Memory > 0)", job, [ClassAd({"Memory": 1})])
    assert rows == ["[0]       never  MY.Flag == true"]


def test_constant_true_clause_drops_out() -> None:
    job = ClassAd({"Flag": True})
    slots = [ClassAd({"Memory": 1}), ClassAd({"Memory": 0})]
    rows = _table("(MY.Flag == true) && (TARGET.Memory > 0)", job, slots)
    assert rows == ["[1]           1  TARGET.Memory > 0"]


def test_or_keeps_both_sides_when_neither_decides() -> None:
    slots = [ClassAd({"A": 1, "B": 0}), ClassAd({"A": 0, "B": 1}), ClassAd({"A": 0, "B": 0})]
    rows = _table("(TARGET.A == 1) || (TARGET.B == 1)", ClassAd(), slots)
    assert rows == [
        "[0]           1  TARGET.A == 1",
        "[1]           1  TARGET.B == 1",
        "[2]           2  [0] || [1]",
    ]


def test_references_follow_job_attributes() -> None:
    job = ClassAd({"RequestDisk": ExprTree("DiskUsage * 2"), "DiskUsage": 10})
    mine, theirs = references(parse_expression("TARGET.Disk >= RequestDisk && Cpus > 1"), job)
    assert sorted(mine.values()) == ["DiskUsage", "RequestDisk"]
    assert sorted(theirs.values()) == ["Cpus", "Disk"]


# ---------------------------------------------------------------- wrapping


def test_short_expressions_are_not_wrapped() -> None:
    assert wrap_expression("(a == 1) && (b == 2)") == "(a == 1) && (b == 2)"


def test_wrapping_needs_a_logical_operator() -> None:
    text = "f(" + ", ".join(f"argument{i}" for i in range(12)) + ")"
    assert wrap_expression(text) == text


def test_wrapping_indents_inside_parentheses() -> None:
    text = "(" + " || ".join(f"(TARGET.Attribute{i} == {i})" for i in range(6)) + ")"
    wrapped = wrap_expression(text)
    assert wrapped.split("\n") == [
        "((TARGET.Attribute0 == 0) || (TARGET.Attribute1 == 1) ||",
        "      (TARGET.Attribute2 == 2) || (TARGET.Attribute3 == 3) ||",
        "      (TARGET.Attribute4 == 4) || (TARGET.Attribute5 == 5))",
    ]


# ---------------------------------------------------------------- summary


def test_summary_warns_when_every_slot_refuses_the_job() -> None:
    slot = slot_ads()[0].copy()
    slot["Start"] = False
    assert summary_lines(_job(2, 3), [slot], AT_QUERY) == [
        "\n002.003:  Run analysis summary ignoring user priority.  Of 1 slots on 1 machines,\n",
        "      0 slots are rejected by your job's requirements\n",
        "      1 slots reject your job because of their own requirements\n",
        "      0 slots match and are willing to run your job\n",
        "\nWARNING:  Be advised:\n"
        "   Job did not match any machines's constraints\n"
        "   To see why, pick a machine that you think should match and add\n"
        "     -reverse -machine <name>\n"
        "   to your query.\n",
    ]


def test_summary_of_slots_serving_users() -> None:
    job = _job(2, 3)
    slot = slot_ads()[0].copy()
    slot["RemoteUser"] = job["User"]
    other = slot.copy()
    other["Name"] = "slot2@zq"
    other["RemoteUser"] = "carol@localhost"
    lines = summary_lines(job, [slot, other], AT_QUERY)
    assert lines[1:] == [
        "      0 slots are rejected by your job's requirements\n",
        "      0 slots reject your job because of their own requirements\n",
        "      1 slots match and are already running your jobs\n",
        "      1 slots match but are serving other users\n",
        "      0 slots match and are willing to run your job\n",
    ]


def test_running_job_says_so() -> None:
    text = _analyze(_job(1, 0), slot_ads())
    assert "\n\n001.000:  Job is running.\n\n\n001.000:  Run analysis summary" in text


def test_job_without_requirements_gets_only_the_summary() -> None:
    job = _job(3, 0)
    del job["Requirements"]
    text = _analyze(job, slot_ads())
    assert "Requirements expression" not in text
    assert "003.000:  Run analysis summary ignoring user priority." in text
