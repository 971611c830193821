"""condor_q's text (``htcpool.cli.formats.queue``, ``batches``, ``adtext``) against HTCondor 25."""

from __future__ import annotations

import json

import pytest

from htcpool.classad import ClassAd, parseAds
from htcpool.cli.formats import format_autoformat, format_json, format_long, format_queue
from htcpool.cli.formats.queue import job_description, run_time, status_code
from tests.cli.golden_pool import (
    CAPTURE_USER,
    HOLD_QUERY_TIME,
    QUERY_TIME,
    SCHEDD_ADDRESS,
    SCHEDD_NAME,
    SUBMIT_TIME,
    golden,
    queue_jobs,
    sanitize,
)


def _q(jobs: list[ClassAd], view: str, **kwargs: object) -> str:
    options: dict[str, object] = dict(
        now=QUERY_TIME, schedd_name=SCHEDD_NAME, schedd_address=SCHEDD_ADDRESS
    )
    options.update(kwargs)
    return format_queue(jobs, view=view, **options)  # type: ignore[arg-type]


def _job(cluster: int, proc: int, **attrs: object) -> ClassAd:
    job = ClassAd(
        {
            "ClusterId": cluster,
            "ProcId": proc,
            "Owner": "bob",
            "User": "bob@example.org",
            "JobStatus": 1,
            "QDate": SUBMIT_TIME,
            "JobPrio": 0,
            "ImageSize": 0,
            "RemoteWallClockTime": 0.0,
            "Cmd": "/bin/sleep",
            "Args": "60",
        }
    )
    for key, value in attrs.items():
        job[key] = value
    return job


def _rows(text: str) -> list[str]:
    """The table lines of a condor_q output (between the schedd line and the blank line)."""
    lines = text.split("\n")
    end = lines.index("", 3)
    return lines[3:end]


# ---------------------------------------------------------------- the goldens


@pytest.mark.parametrize(
    ("view", "name"),
    [
        ("batch", "condor_q.txt"),
        ("nobatch", "condor_q_nobatch.txt"),
        ("totals", "condor_q_totals.txt"),
    ],
)
def test_views_match_golden(view: str, name: str) -> None:
    jobs = queue_jobs()
    assert sanitize(_q(jobs, view)) == golden(name)


def test_run_view_matches_golden() -> None:
    jobs = queue_jobs()
    running = [j for j in jobs if j["JobStatus"] == 2]
    assert sanitize(_q(running, "run", all_jobs=jobs)) == golden("condor_q_run.txt")


def test_hold_view_matches_golden() -> None:
    jobs = queue_jobs(hold_2_1=True)
    held = [j for j in jobs if j["JobStatus"] == 5]
    text = _q(held, "hold", all_jobs=jobs, now=HOLD_QUERY_TIME)
    assert sanitize(text) == golden("condor_q_hold.txt")


def test_autoformat_matches_golden() -> None:
    text = format_autoformat(queue_jobs(), ["ClusterId", "ProcId", "JobStatus", "AcctGroup"], now=QUERY_TIME)
    assert text == golden("condor_q_af.txt")


def test_long_matches_golden() -> None:
    assert format_long(parseAds(golden("condor_q_long_1.0.txt"))) == golden("condor_q_long_1.0.txt")


def test_golden_names_are_only_renamed() -> None:
    # the same jobs owned by "alice" itself print two columns narrower, as HTCondor would
    jobs = queue_jobs()
    for job in jobs:
        job["Owner"] = "alice"
    assert _rows(_q(jobs, "batch"))[0].startswith("OWNER BATCH_NAME    SUBMITTED")
    assert _rows(_q(jobs, "batch"))[1].startswith("alice ID: 1       11/22 00:47")


# ---------------------------------------------------------------- -json and -af


def test_json_lists_ads_with_sorted_attributes() -> None:
    ads = [_job(1, 0, zeta=1, Alpha="a"), _job(1, 1)]
    text = format_json(ads)
    assert text.startswith("[\n{\n")
    assert "\n}\n,\n{\n" in text
    assert text.endswith("\n}\n]\n")
    parsed = json.loads(text)
    assert [ad["ProcId"] for ad in parsed] == [0, 1]
    assert list(parsed[0]) == sorted(parsed[0], key=str.lower)


def test_json_of_nothing_is_empty() -> None:
    assert format_json([]) == ""


def test_autoformat_prints_values_bare() -> None:
    ad = _job(1, 0, Load=0.5, Flag=True, Items=[1, 2])
    assert format_autoformat(
        [ad], ["Cmd", "Load", "Flag", "Missing", "Items", "ClusterId + 1"], now=QUERY_TIME
    ) == ("/bin/sleep 0.5 true undefined { 1,2 } 2\n")


# ---------------------------------------------------------------- batch view


def test_hold_column_appears_with_held_jobs() -> None:
    jobs = [_job(5, 0, TotalSubmitProcs=2), _job(5, 1, JobStatus=5, TotalSubmitProcs=2)]
    rows = _rows(_q(jobs, "batch"))
    assert rows == [
        "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS",
        "bob      ID: 5       11/22 00:47      _      _      1      1      2 5.0-1",
    ]


def test_empty_queue() -> None:
    text = _q([], "batch")
    assert text == (
        "\n\n-- Schedd: alice@node1 : <127.0.0.1:10247?... @ 11/22/26 00:48:28\n"
        "OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n"
        "\n"
        "Total for query: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n"
        "Total for all users: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, "
        "0 suspended\n"
        "\n"
    )


def test_empty_queue_nobatch_keeps_headings() -> None:
    assert _rows(_q([], "nobatch")) == [
        " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    ]


def test_batch_name_joins_clusters_of_one_owner() -> None:
    jobs = [
        _job(4, 0, JobBatchName="sweep", TotalSubmitProcs=3),
        _job(4, 1, JobBatchName="sweep", TotalSubmitProcs=3, JobStatus=2),
        _job(6, 0, JobBatchName="sweep", TotalSubmitProcs=1),
        _job(7, 0, JobBatchName="sweep", TotalSubmitProcs=1, Owner="carol"),
    ]
    rows = _rows(_q(jobs, "batch"))
    assert rows[1:] == [
        "bob   sweep       11/22 00:47      1      1      2      4 4.0 ... 6.0",
        "carol sweep       11/22 00:47      _      _      1      1 7.0",
    ]


def test_total_unknown_without_total_submit_procs() -> None:
    rows = _rows(_q([_job(8, 0), _job(8, 2)], "batch"))
    assert rows[1] == "bob      ID: 8       11/22 00:47      _      _      2      _ 8.0-2"


def test_dag_nodes_fold_under_their_dagman() -> None:
    dagman = _job(10, 0, JobUniverse=7, JobStatus=2, JobBatchName="ex1.dag+10")
    dagman["DAG_NodesTotal"] = 5
    dagman["DAG_NodesDone"] = 1
    nodes = [
        _job(11, 0, DAGManJobId=10, DAGNodeName="A", JobStatus=2),
        _job(12, 0, DAGManJobId=10, DAGNodeName="B"),
    ]
    rows = _rows(_q([dagman, *nodes], "batch"))
    assert rows[1] == "bob      ex1.dag+10  11/22 00:47      1      1      1      5 11.0 ... 12.0"


def test_console_width_squeezes_and_cuts() -> None:
    long_name = "a-rather-long-batch-name-for-a-parameter-sweep"
    jobs = [_job(1, 0, JobBatchName=long_name, Owner="someone.with.a.long.name")]
    rows = _rows(_q(jobs, "batch", width=80))
    # the owner column gives up most of its width; names longer than a column still print
    assert rows[0].startswith("OWNER         BATCH_NAME          SUBMITTED")
    assert rows[1] == f"someone.with. {long_name}  11/22 00:47      "
    wide = _rows(_q(jobs, "batch"))
    assert (
        wide[1]
        == f"someone.with.a.long.name {long_name}  11/22 00:47      _      _      1      _ 1.0"
    )


def test_short_owner_gets_eight_columns() -> None:
    assert _rows(_q([_job(1, 0, Owner="al")], "batch"))[1].startswith("al       ID: 1 ")


# ---------------------------------------------------------------- job views


def test_nobatch_cuts_long_command_lines_on_a_console() -> None:
    args = " ".join(f"--option-{i}" for i in range(20))
    jobs = [_job(1, 0, Args=args)]
    narrow = _rows(_q(jobs, "nobatch", width=80))[1]
    assert len(narrow) == 79
    assert narrow.endswith(" 0.0 sleep --option-0 -")
    assert _rows(_q(jobs, "nobatch"))[1].endswith("--option-19")


def test_nobatch_widens_ids_for_big_clusters() -> None:
    rows = _rows(_q([_job(123456, 1000)], "nobatch"))
    assert rows[0].startswith(" ID        ")
    assert rows[1].startswith("123456.1000 bob")


def test_nobatch_shows_transfer_states_and_priority() -> None:
    job = _job(1, 0, JobStatus=2, TransferringInput=True, JobPrio=-3, MemoryUsage=1234)
    assert status_code(job) == "< "
    row = _rows(_q([job], "nobatch"))[1]
    assert " <  -3  1234.0 sleep 60" in row


def test_run_time_adds_the_current_run() -> None:
    job = _job(1, 0, JobStatus=2, RemoteWallClockTime=3600.0, ShadowBday=QUERY_TIME - 90061)
    assert run_time(job, QUERY_TIME) == 3600.0 + 90061
    row = _rows(_q([job], "nobatch"))[1]
    assert "   1+02:01:01 R " in row


def test_job_description_wins_over_command() -> None:
    assert job_description(_job(1, 0, JobDescription="my analysis")) == "(my analysis)"
    assert job_description(_job(1, 0, Arguments="-v 'a b'")) == "sleep -v 'a b'"


def test_dates_follow_the_zone() -> None:
    rows = _rows(_q([_job(1, 0)], "nobatch", zone=-8 * 3600))
    assert "11/21 16:47" in rows[1]
    text = _q([_job(1, 0)], "nobatch", zone=-8 * 3600)
    assert "@ 11/21/26 16:48:28\n" in text


def test_user_totals_line() -> None:
    jobs = [_job(1, 0), _job(2, 0, User="carol@example.org", JobStatus=5)]
    text = _q(jobs[:1], "totals", all_jobs=jobs, user="bob@example.org")
    assert text.split("\n")[3:7] == [
        "Total for query: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended ",
        "Total for bob@example.org: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, "
        "0 suspended ",
        "Total for all users: 2 jobs; 0 completed, 0 removed, 1 idle, 0 running, 1 held, "
        "0 suspended",
        "",
    ]


def test_unknown_view_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown condor_q view"):
        _q([], "wide")


def test_owner_of_golden_capture_is_seven_letters() -> None:
    assert len(CAPTURE_USER) == 7
