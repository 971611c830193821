"""Print-format files: the parser (``formats/printformat.py``), the renderer and the tools' use of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.cli import q
from htcpool.cli.formats.fields import format_stamp, summarize_address
from htcpool.cli.formats.printformat import PrintFormatError, parse_print_format
from htcpool.cli.formats.printformat_output import queue_output, status_output
from htcpool.cli.formats.printformat_render import format_rows, select
from htcpool.schedd.eventlog import LogEvent, format_event
from tests.cli.golden_pool import (
    QUERY_TIME,
    SCHEDD_ADDRESS,
    SCHEDD_NAME,
    golden,
    queue_jobs,
    sanitize,
)

#: HTCondor 25's own print format for condor_q -nobatch (its source, queue.cpp)
DEFAULT = """\
# condor_q -nobatch
SELECT
   ClusterId     AS ' ID'  NOSUFFIX  WIDTH 5 PRINTF '%4d.'
   ProcId        AS ' '    NOPREFIX  WIDTH 3 PRINTF '%-3d'
   Owner         AS  OWNER           WIDTH -14 PRINTAS OWNER OR ??
   QDate         AS '  SUBMITTED'    WIDTH 11 PRINTAS QDATE
   RemoteUserCpu AS '    RUN_TIME'   WIDTH 12 PRINTAS CPU_TIME
   JobStatus     AS ST                       PRINTAS JOB_STATUS
   JobPrio       AS PRI             WIDTH AUTO
   ImageSize     AS SIZE            WIDTH 4 PRINTAS MEMORY_USAGE
   Cmd           AS CMD             WIDTH 0 PRINTAS JOB_DESCRIPTION
SUMMARY STANDARD
"""


def test_htcondors_default_print_format_prints_the_nobatch_golden_byte_for_byte() -> None:
    jobs = queue_jobs()
    title = f"-- Schedd: {SCHEDD_NAME} : {summarize_address(SCHEDD_ADDRESS)} @ {format_stamp(QUERY_TIME, 0)}"
    text = queue_output(parse_print_format(DEFAULT), jobs, jobs, title=title, now=QUERY_TIME, zone=0)
    assert sanitize(text) == golden("condor_q_nobatch.txt")


def ad(**attrs: object) -> ClassAd:
    return ClassAd(dict(attrs))


ADS = [ad(Name="b", Cpus=2, Memory=512, State="Claimed", Activity="Busy"),
       ad(Name="a", Cpus=8, Memory=4096, State="Unclaimed", Activity="Idle"),
       ad(Name="c-long-name", Cpus=1, State="Owner", Activity="Idle")]


def rows(text: str, now: int = 0) -> str:
    pf = parse_print_format(text)
    return format_rows(pf, select(pf, ADS, now), now=now, zone=0)


def test_where_group_by_widths_alignment_or_and_truncate() -> None:
    text = rows("SELECT\n  Name AS NAME WIDTH -6 TRUNCATE\n  Cpus AS CPUS WIDTH 5\n"
                "  Memory AS MEM PRINTF %dMB OR --\n  Activity PRINTAS ACTIVITY_CODE WIDTH AUTO\n"
                "WHERE Cpus > 1 || State == \"Owner\"\nGROUP BY\n  Cpus DESCENDING\n")
    assert text == ("NAME   CPUS  MEM Activity\n"  # a heading is left-aligned in its column
                    "a          8 4096MB Ui\n"  # a cell is not cut without TRUNCATE
                    "b          2 512MB Cb\n"
                    "c-long     1 --- Oi\n")  # OR doubled fills the column


def test_select_options_labels_prefixes_and_bare() -> None:
    labelled = rows("SELECT LABEL SEPARATOR ': ' RECORDPREFIX '<' RECORDSUFFIX '>\\n' FIELDSUFFIX ', '\n"
                    "  Name\n  Cpus AS cores\nWHERE Name == \"a\"\n")
    assert labelled == "<Name: a, cores: 8>\n"
    bare = parse_print_format("SELECT BARE\n  Name\nSUMMARY STANDARD\n")
    assert (bare.title, bare.header, bare.summary) == (False, False, False)
    assert format_rows(bare, select(bare, ADS, 0), now=0, zone=0) == "b\na\nc-long-name\n"
    assert rows("SELECT NOHEADER\n  Name NOSUFFIX\n  Cpus NOPREFIX PRINTF '[%d]'\nGROUP BY Name\n") == \
        "a[8]\nb[2]\nc-long-name[1]\n"


def test_status_output_has_a_blank_line_under_the_headings_and_the_summary() -> None:
    slots = [ad(Name="slot1@n", Machine="n", OpSys="LINUX", Arch="X86_64", State="Unclaimed", Activity="Idle")]
    lines = status_output(parse_print_format("SELECT\n  Name WIDTH -10\n  State\n"), slots, now=0, zone=0).split("\n")
    assert lines[:4] == ["Name       State", "", "slot1@n    Unclaimed", ""] and "Total" in lines[4]


@pytest.mark.parametrize(("text", "message"), [
    ("  Name\n", "line 1: a print format starts with SELECT"),
    ("", "no SELECT line"),
    ("SELECT NOPE\n", "line 1: unknown SELECT option 'NOPE'"),
    ("SELECT\n  Name WIDTH wide\n", "line 2: WIDTH takes a number or AUTO, not 'wide'"),
    ("SELECT\n  Name PRINTAS SHINY\n", "line 2: unknown PRINTAS function 'SHINY'"),
    ("SELECT\n  Name OR xy\n", "line 2: OR takes a character"),
    ("SELECT\n  (Name\n", "line 2: '(Name' is not a ClassAd expression"),
    ("SELECT\nSUMMARY STANDARD\n  Name\n", "line 3: unexpected 'Name' after the SUMMARY part"),
    ("SELECT\n  Name AS\n", "line 2: expected a heading after AS"),
    ("SELECT\nSUMMARY SOME\n", "line 2: SUMMARY takes STANDARD or NONE"),
])
def test_bad_files_are_refused_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(PrintFormatError, match=message.replace("(", r"\(")) as caught:
        parse_print_format(text, source="my.cpf")
    assert str(caught.value).startswith("my.cpf")


def test_condor_q_pr_prints_a_user_logs_jobs_with_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "job.log"
    log.write_text("".join(format_event(e) for e in (LogEvent(0, 4, 0, 1_700_000_000, host="<h>"),
                                                     LogEvent(0, 4, 1, 1_700_000_000, host="<h>"),
                                                     LogEvent(9, 4, 1, 1_700_000_001, reason="gone"))))
    cpf = tmp_path / "ids.cpf"
    cpf.write_text("SELECT NOTITLE\n  ClusterId AS C\n  ProcId AS P\n  JobStatus AS ST PRINTAS JOB_STATUS\n"
                   "SUMMARY NONE\n")
    assert q.main(["-userlog", str(log), "-pr", str(cpf)]) == 0
    assert capsys.readouterr().out == "C P ST\n4 0 I\n4 1 X\n"
    cpf.write_text("SELECT\n  Name PRINTAS NOTHING\n")
    assert q.main(["-userlog", str(log), "-print-format", str(cpf)]) != 0
    assert f"{cpf}, line 2: unknown PRINTAS function 'NOTHING'" in capsys.readouterr().err
