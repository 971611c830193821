"""The output options condor_q, condor_status and condor_history share: -format, -af with
qualifiers, -xml, -jsonl, -attributes, -wide, as their man pages describe them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from htcpool.classad import parseOne
from htcpool.cli import COMMANDS
from htcpool.cli.formats.printf import format_autoformat_quals, format_printf, unescape
from htcpool.cli.formats.xml import format_xml
from htcpool.cli.names import TOOLS
from htcpool.cli.options import OptionError, render, take_output_options

JOB = parseOne('[ClusterId = 12; ProcId = 3; Owner = "al<ice"; RemoteWallClockTime = 3725.0; '
               'Requirements = TARGET.Memory >= 512; Tags = {1, "x"}; Done = true; Nested = [c = 1]; '
               'QDate = 0]')
OTHER = parseOne('[ClusterId = 13; ProcId = 0; Owner = "bob"; RemoteWallClockTime = 1.5; Done = false]')


def test_take_output_options_separates_htcondor_forms_from_the_rest():
    rest, out = take_output_options(["-af:jh", "Owner", "ClusterId", "-constraint", "x", "-format", "%d\\n",
                                     "ProcId", "-f", "%s", "Owner", "-attributes", "A,B", "-wide:120", "3"])
    assert rest == ["-constraint", "x", "3"]
    assert out.af == ["Owner", "ClusterId"] and out.af_quals == "jh"
    assert out.formats == [("%d\\n", "ProcId"), ("%s", "Owner")]
    assert out.attributes == ["A", "B"] and out.wide == 120
    rest, out = take_output_options(["-f", "history.txt"], f_is_format=False)
    assert rest == ["-f", "history.txt"] and not out.formats
    for bad in (["-af"], ["-format", "%d"], ["-wide:x"], ["-attributes"]):
        with pytest.raises(OptionError):
            take_output_options(bad)


def test_format_fills_one_conversion_per_item_and_skips_what_does_not_apply():
    text = format_printf([JOB, OTHER], [("%d.", "ClusterId"), ("%-3d|", "ProcId"), ("%s\\n", "Owner")], now=0)
    assert text == "12.3  |al<ice\n13.0  |bob\n"
    # %d of a string is skipped; %8.1f pads the real
    assert format_printf([JOB], [("%d\\n", "Owner"), ("%8.1f\\n", "RemoteWallClockTime")], now=0) == "  3725.0\n"
    assert format_printf([JOB], [("%V %v\\n", "Owner")], now=0) == '"al<ice" al<ice\n'
    assert format_printf([JOB], [("%r\\n", "Requirements")], now=0) == "TARGET.Memory >= 512\n"
    assert format_printf([JOB], [("%T\\n", "RemoteWallClockTime")], now=0) == "0+01:02:05\n"
    assert format_printf([JOB], [("%x %o %%\\n", "ClusterId")], now=0) == "c 14 %\n"
    assert format_printf([JOB], [("never\\n", "((")], now=0) == ""  # cannot parse: skipped
    assert format_printf([JOB], [("%d\\n", "Done")], now=0) == "1\n"
    assert unescape(r"a\tb\\n") == "a\tb\\n"


def test_autoformat_qualifiers():
    ids = lambda ad: "%d.%d" % (ad["ClusterId"], ad["ProcId"])  # noqa: E731
    assert format_autoformat_quals([JOB, OTHER], ["Owner", "Done"], "jh", now=0, ids=ids) == \
        "ID   Owner  Done\n12.3 al<ice true\n13.0 bob    false\n"
    assert format_autoformat_quals([JOB], ["Owner", "ProcId"], "l", now=0) == "Owner = al<ice ProcId = 3\n"
    assert format_autoformat_quals([JOB], ["Owner", "ProcId"], ",V", now=0) == '"al<ice", 3\n'
    assert format_autoformat_quals([JOB], ["Owner", "ProcId"], "t", now=0) == "al<ice\t3\n"
    assert format_autoformat_quals([JOB, OTHER], ["Owner", "Done"], "lrng", now=0) == \
        'Owner = "al<ice"\nDone = true\n\nOwner = "bob"\nDone = false\n\n'
    assert format_autoformat_quals([JOB], ["RemoteWallClockTime"], "T", now=0) == "0+01:02:05\n"
    with pytest.raises(ValueError, match="unknown qualifier"):
        format_autoformat_quals([JOB], ["Owner"], "q", now=0)


def test_xml_is_a_classads_document_with_typed_values():
    text = format_xml([JOB])
    assert text.startswith('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n<c>\n')
    assert text.endswith("</c>\n</classads>\n")
    for element in ('    <a n="ClusterId"><i>12</i></a>\n', '    <a n="Owner"><s>al&lt;ice</s></a>\n',
                    '    <a n="Done"><b v="t"/></a>\n', '    <a n="Tags"><l><i>1</i><s>x</s></l></a>\n',
                    '    <a n="Requirements"><e>TARGET.Memory &gt;= 512</e></a>\n',
                    '    <a n="Nested"><c><a n="c"><i>1</i></a></c></a>\n'):
        assert element in text
    assert text.index('n="ClusterId"') < text.index('n="Done"') < text.index('n="Owner"')  # -long order
    assert format_xml([]) == ""


def test_render_precedence_attributes_and_jsonl():
    _, out = take_output_options(["-long", "-attributes", "owner,ProcId"])
    assert render([JOB], out, now=0) == 'Owner = "al<ice"\nProcId = 3\n\n'
    _, out = take_output_options(["-jsonl", "-attributes", "ProcId,Owner"])
    lines = render([JOB, OTHER], out, now=0).splitlines()
    assert [json.loads(line) for line in lines] == [{"Owner": "al<ice", "ProcId": 3}, {"Owner": "bob", "ProcId": 0}]
    _, out = take_output_options(["-long", "-format", "%s\\n", "Owner"])
    assert render([JOB], out, now=0) == "al<ice\n"
    _, out = take_output_options(["-wide"])
    assert render([JOB], out, now=0) is None


def test_every_condor_name_is_installed_and_dispatches_to_a_subcommand():
    scripts = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    for tool, command in TOOLS.items():
        assert scripts[tool] == f"htcpool.cli.names:{tool}"
        assert command in COMMANDS, tool
