"""Messages of the action tools, condor_prio and condor_submit (``htcpool.cli.formats.actions``)."""

from __future__ import annotations

import pytest

from htcpool.cli.formats import (
    format_action_totals,
    format_job_result,
    format_prio_error,
    format_selection_result,
    format_submit_result,
    selection_constraint,
)
from tests.cli.golden_pool import golden


@pytest.mark.parametrize(
    ("action", "cluster", "proc", "name"),
    [
        ("hold", 2, 1, "condor_hold.txt"),
        ("release", 2, 1, "condor_release.txt"),
        ("vacate", 1, 0, "condor_vacate_job.txt"),
    ],
)
def test_job_results_match_golden(action: str, cluster: int, proc: int, name: str) -> None:
    assert format_job_result(action, cluster, proc) + "\n" == golden(name)


def test_cluster_removal_matches_golden() -> None:
    assert format_selection_result("remove", [3]) + "\n" == golden("condor_rm.txt")


def test_prio_without_priority_matches_golden() -> None:
    assert format_prio_error() == golden("condor_prio.txt")


@pytest.mark.parametrize(
    ("clusters", "name"),
    [([(1, 3)], "submit_a.txt"), ([(2, 4)], "submit_b.txt"), ([(3, 1)], "submit_c.txt")],
)
def test_submit_matches_golden(clusters: list[tuple[int, int]], name: str) -> None:
    assert format_submit_result(clusters) == golden(name)


# ---------------------------------------------------------------- wordings beyond the goldens


def test_single_job_removal() -> None:
    assert format_job_result("remove", 3, 0) == "Job 3.0 marked for removal"
    assert format_job_result("remove-forced", 3, 0) == (
        "Job 3.0 removed locally (remote state unknown)"
    )
    assert format_job_result("vacate-fast", 1, 0) == "Job 1.0 fast-vacated"


@pytest.mark.parametrize(
    ("action", "result", "text"),
    [
        ("hold", "not-found", "Job 2.1 not found"),
        ("release", "bad-status", "Job 2.1 not held to be released"),
        ("vacate", "bad-status", "Job 2.1 not running to be vacated"),
        ("hold", "already-done", "Job 2.1 already held"),
        ("remove", "already-done", "Job 2.1 already marked for removal"),
        ("hold", "permission-denied", "Permission denied to hold job 2.1"),
        ("remove-forced", "permission-denied", "Permission denied to force removal of job 2.1"),
        ("release", "already-done", "Invalid result for job 2.1"),
        ("hold", "error", "No result found for job 2.1"),
    ],
)
def test_job_failures(action: str, result: str, text: str) -> None:
    assert format_job_result(action, 2, 1, result) == text


def test_user_and_cluster_selections() -> None:
    assert format_selection_result("hold", [2]) == "All jobs in cluster 2 have been held"
    assert format_selection_result("release", [2]) == "All jobs in cluster 2 have been released"
    assert format_selection_result("remove", ["alice"]) == (
        'All jobs of user "alice" have been marked for removal'
    )
    assert format_selection_result("vacate", all_jobs=True) == "All jobs have been vacated"
    assert format_selection_result("hold", [2, "bob"]) == (
        'All jobs matching constraint (ClusterId == 2 || Owner == "bob") have been held'
    )


def test_constraint_selection() -> None:
    assert selection_constraint(constraint="JobStatus == 1") == "JobStatus == 1"
    assert selection_constraint([4], constraint="JobStatus == 1") == (
        "(JobStatus == 1) && (ClusterId == 4)"
    )
    assert selection_constraint(all_jobs=True) == "ClusterId >= 0"
    assert selection_constraint() is None
    assert format_selection_result("remove", constraint="JobStatus == 5") == (
        "All jobs matching constraint (JobStatus == 5) have been marked for removal"
    )


def test_selection_failure() -> None:
    assert format_selection_result("hold", [7], succeeded=False) == (
        "Couldn't find/hold all jobs in cluster 7"
    )
    with pytest.raises(ValueError, match="no clusters"):
        format_selection_result("hold")


def test_totals_line() -> None:
    assert format_action_totals(3, 0, 1, 0, 2, 0) == (
        "3 Succeeded, 0 Failed, 1 Not Found, 0 Bad Status, 2 Already Done, 0 Permission Denied"
    )


def test_unknown_action_or_result_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown job action"):
        format_job_result("freeze", 1, 0)
    with pytest.raises(ValueError, match="unknown job action result"):
        format_job_result("hold", 1, 0, "maybe")


def test_submit_of_several_clusters() -> None:
    assert format_submit_result([(4, 2), (5, 1)]) == (
        "Submitting job(s)...\n"
        "2 job(s) submitted to cluster 4.\n"
        "1 job(s) submitted to cluster 5.\n"
        "To monitor your job(s), run: condor_watch_q -clusters 4 5\n"
    )
