"""Print formats' query types: ``SELECT FROM AUTOCLUSTER`` and ``SELECT UNIQUE`` (condor_q)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.classad import ClassAd, ExprTree
from htcpool.cli import status
from htcpool.cli.formats.printformat import QueryType, parse_print_format
from htcpool.cli.formats.printformat_output import queue_output
from htcpool.cli.formats.qviews import autocluster_ads, format_autocluster

NOW = 1_800_000_000


def _job(cluster: int, proc: int, owner: str, status: int = 1, memory: int = 128, universe: int = 5) -> ClassAd:
    ad = ClassAd({"ClusterId": cluster, "ProcId": proc, "Owner": owner, "JobStatus": status,
                  "RequestCpus": 1, "RequestMemory": memory, "RequestDisk": 1024, "JobUniverse": universe})
    ad["Requirements"] = ExprTree("TARGET.Memory >= RequestMemory")
    return ad


JOBS = [_job(1, 0, "alice"), _job(1, 1, "alice"), _job(2, 0, "bob", memory=512), _job(3, 0, "bob"),
        _job(4, 0, "carol", status=5), _job(5, 0, "alice", status=2, universe=12)]


def test_the_query_type_is_read_from_select() -> None:
    assert parse_print_format("SELECT FROM AUTOCLUSTER\nJobCount\n").query is QueryType.AUTOCLUSTER
    assert parse_print_format("SELECT UNIQUE NOSUMMARY\nOwner\n").query is QueryType.UNIQUE
    assert parse_print_format("SELECT\nOwner\n").query is QueryType.ADS


def test_autocluster_rows_are_the_idle_and_running_jobs_grouped_as_condor_q_autocluster_does() -> None:
    ads = autocluster_ads(JOBS)
    assert [(ad["AutoClusterId"], ad["JobCount"], ad["JobIDs"]) for ad in ads] == [
        (1, 4, "1.0 1.1 3.0 5.0"), (2, 1, "2.0")]
    assert "Owner" not in ads[0] and ads[1]["Owner"] == "bob"  # only where all its jobs agree
    assert ads[0]["RequestMemory"] == 128 and "JobUniverse" not in ads[0]
    pf = parse_print_format("SELECT FROM AUTOCLUSTER\n  AutoClusterId AS ' ID' WIDTH 3\n"
                            "  JobCount AS COUNT PRINTF %5d\n  RequestMemory AS MEMORY\n  JobIDs AS JOBIDS\n")
    out = queue_output(pf, JOBS, JOBS, title="-- Schedd: s", now=NOW, zone=0)
    assert out == ("\n\n-- Schedd: s\n ID COUNT MEMORY JOBIDS\n"
                   "  1     4 128    1.0 1.1 3.0 5.0\n  2     1 512    2.0\n")
    assert format_autocluster(JOBS).splitlines()[1].split()[:3] == ["1", "4", "1"]


def test_unique_rows_count_each_combination_of_the_columns_and_group_by_keys() -> None:
    pf = parse_print_format("SELECT UNIQUE NOSUMMARY\n  Owner AS OWNER WIDTH -8\n  JobStatus AS ST\n"
                            "  JobCount AS COUNT PRINTF %5d\n  JobIDs\nWHERE JobUniverse == 5\nGROUP BY\n  Owner\n")
    out = queue_output(pf, JOBS, JOBS, title="t", now=NOW, zone=0)
    assert out.splitlines()[3:] == [
        "OWNER    ST COUNT JobIDs",
        "alice    1      2 1.0 1.1",
        "bob      1      2 2.0 3.0",
        "carol    5      1 4.0",
    ]
    by_descending = parse_print_format("SELECT UNIQUE NOTITLE NOHEADER\n  JobCount PRINTF %d\nGROUP BY\n"
                                       "  Owner DESCENDING\n")
    assert queue_output(by_descending, JOBS, JOBS, title="t", now=NOW, zone=0).split() == ["1", "2", "3"]  # carol, bob, alice


def test_condor_status_refuses_condor_qs_query_types(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.cpf"
    path.write_text("SELECT UNIQUE\nName\n")
    monkeypatch.setattr(status, "connect", lambda: pytest.fail("the file is refused before any query"))
    assert status.main(["-pr", str(path)]) == 1
    assert "SELECT UNIQUE is for condor_q only" in capsys.readouterr().err


def test_condor_q_prints_autocluster_rows_from_a_job_ads_file(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from htcpool.cli import q

    ads = tmp_path / "jobs.ads"
    ads.write_text("\n".join(job.printOld() for job in JOBS))
    cpf = tmp_path / "ac.cpf"
    cpf.write_text("SELECT FROM AUTOCLUSTER NOTITLE\n  AutoClusterId AS ID\n  JobCount AS COUNT\n  JobIDs\n")
    assert q.main(["-allusers", "-jobads", str(ads), "-pr", str(cpf)]) == 0
    assert capsys.readouterr().out.splitlines() == ["ID COUNT JobIDs", "1  4     1.0 1.1 3.0 5.0", "2  1     2.0"]
