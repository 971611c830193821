"""condor_status -absent and -offline (``cli/formats/status_absent.py``) and the collector's
``ABSENT_REQUIREMENTS`` knobs (``runtime/collector_service.absent_policy``)."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd
from htcpool.cli.formats.status_absent import format_absent, format_offline
from htcpool.config import Config
from htcpool.config.errors import ConfigValueError
from htcpool.runtime.collector_service import absent_policy

T = 1795000000  # 11/18/26 11:06:40 UTC


def slot(name: str, **attrs: object) -> ClassAd:
    return ClassAd({"MyType": "Machine", "Name": name, "Machine": "node1", "OpSys": "LINUX", "Arch": "X86_64",
                    "State": "Unclaimed", "Activity": "Idle", **attrs})


def test_absent_view_names_when_each_machine_went_and_when_it_will_be_forgotten() -> None:
    text = format_absent([slot("slot1@node1.example", Absent=True, LastHeardFrom=T, ClassAdLifetime=86400),
                          slot("slot2@node1.example", Absent=True)], zone=0)
    lines = text.split("\n")
    assert lines[:4] == [
        "Name                OpSys      Arch     Went Absent Will Forget",
        "",
        "slot1@node1.example LINUX      X86_64   11/18 11:06 11/19 11:06",
        "slot2@node1.example LINUX      X86_64   ??          ??"]
    assert lines[4] == "" and lines[5].split()[0] == "Total"  # condor_status's standard summary
    assert format_absent([], zone=0) == ""


def test_offline_view_lists_the_offline_universes() -> None:
    text = format_offline([slot("slot1@n", OfflineUniverses=["vanilla", "docker"])])
    assert text.split("\n")[:3] == ["Name    Offline Universes", "", "slot1@n vanilla, docker"]


def test_absent_knobs_parse_or_are_refused_by_name() -> None:
    assert absent_policy(Config.from_text("", subsystem="COLLECTOR")) is None
    policy = absent_policy(Config.from_text("ABSENT_REQUIREMENTS = true\nABSENT_EXPIRE_ADS_AFTER = 60\n",
                                            subsystem="COLLECTOR"))
    assert policy is not None and policy.lifetime == 60 and policy.requirements(slot("a"), None) is True
    default = absent_policy(Config.from_text("ABSENT_REQUIREMENTS = Memory > 1\n", subsystem="COLLECTOR"))
    assert default is not None and default.lifetime == 30 * 86400
    with pytest.raises(ConfigValueError, match="ABSENT_REQUIREMENTS"):
        absent_policy(Config.from_text("ABSENT_REQUIREMENTS = (((\n", subsystem="COLLECTOR"))
