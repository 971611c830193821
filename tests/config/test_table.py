"""The generated parameter table and metaknob templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.config import param_info
from htcpool.config.gen_param_table import parse_param_info, render_table
from htcpool.config.table import metaknob, metaknob_categories, metaknob_templates
from tests.shared import SHARED

PARAM_INFO = SHARED / "reference" / "htcondor-docs" / "param_info.in"
TABLE = Path(__file__).parents[2] / "src/htcpool/config/_param_table.py"


@pytest.mark.skipif(not PARAM_INFO.is_file(), reason="param_info.in not available")
def test_committed_table_is_generated_from_param_info() -> None:
    expected = render_table(parse_param_info(PARAM_INFO.read_text()), PARAM_INFO.name)
    assert TABLE.read_text() == expected


def test_parse_param_info_sections() -> None:
    text = (
        "## comment\n[A_KNOB]\ndefault=5\ntype=int\n\n[B]\ndefault : @end\n  x\n  y\n@end\n"
        "[$ROLE.Thing]\ndefault : @end\n\tA=1\n@end\n"
    )
    sections = parse_param_info(text)
    assert [s.name for s in sections] == ["A_KNOB", "B", "$ROLE.Thing"]
    assert sections[1].properties["default"] == "  x\n  y"
    with pytest.raises(ValueError):
        parse_param_info("[A]\ndefault : @end\nnever closed\n")


def test_table_entries() -> None:
    halflife = param_info("priority_halflife")
    assert halflife is not None and halflife.type == "double" and halflife.default == "86400"
    assert param_info("NEGOTIATOR_INTERVAL").type == "int"  # type: ignore[union-attr]
    assert param_info("NO_SUCH_KNOB_AT_ALL") is None


def test_every_metaknob_category_and_template_is_there() -> None:
    assert set(metaknob_categories()) >= {"ROLE", "FEATURE", "POLICY", "SECURITY"}
    assert {"Personal", "Execute", "Submit", "CentralManager"} <= set(metaknob_templates("role") or [])
    found = metaknob("policy", "desktop")
    assert found is not None and found[:2] == ("POLICY", "DESKTOP")
    assert metaknob("POLICY", "nope") is None and metaknob_templates("nope") is None
